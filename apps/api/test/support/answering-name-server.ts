import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

export type AnsweringNameServer = {
  /** `127.0.0.1:<port>`, as Resolver#setServers takes it. */
  address: string;
  /** The names asked, lowercase, in the order the queries came (A and AAAA alike). */
  readonly asked: readonly string[];
  close(): Promise<void>;
};

/** The question's name (lowercase) and where the question section ends. */
const readQuestion = (query: Buffer): { name: string; end: number } => {
  const labels: string[] = [];
  let at = 12;
  for (let length = query[at] ?? 0; length > 0; length = query[at] ?? 0) {
    labels.push(query.toString('latin1', at + 1, at + 1 + length).toLowerCase());
    at += 1 + length;
  }
  // The root label's zero, then QTYPE and QCLASS.
  return { name: labels.join('.'), end: at + 5 };
};

const A = 1;

/**
 * A UDP name server on 127.0.0.1 that knows the IPv4 addresses of `names` (lowercase, without the
 * final dot): it answers their A queries, has no AAAA for them (NOERROR, no answers), and answers
 * NXDOMAIN for every other name.
 */
export const startAnsweringNameServer = async (names: ReadonlyMap<string, string>): Promise<AnsweringNameServer> => {
  const socket = createSocket('udp4');
  const asked: string[] = [];
  socket.on('message', (query, peer) => {
    const { name, end } = readQuestion(query);
    asked.push(name);
    const address = names.get(name);
    const type = query.readUInt16BE(end - 4);
    const answers = address !== undefined && type === A ? [address] : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(query.readUInt16BE(0), 0);
    // QR, the query's opcode and RD, AA, RA; NXDOMAIN (3) for an unknown name.
    header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0400 | 0x0080 | (address ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records = answers.map((each) => {
      const record = Buffer.alloc(16);
      // A pointer to the question's name, type A, class IN, a TTL of 60 s, four bytes of address.
      record.writeUInt16BE(0xc00c, 0);
      record.writeUInt16BE(A, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(60, 6);
      record.writeUInt16BE(4, 10);
      Buffer.from(each.split('.').map(Number)).copy(record, 12);
      return record;
    });
    socket.send(Buffer.concat([header, query.subarray(12, end), ...records]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
};
