import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';

export type SilentNameServer = {
  /** `127.0.0.1:<port>`, as Resolver#setServers takes it. */
  address: string;
  /** Queries received so far. */
  readonly queries: number;
  close(): Promise<void>;
};

/** A UDP name server on 127.0.0.1 that reads every query and never answers. */
export const startSilentNameServer = async (): Promise<SilentNameServer> => {
  const socket = createSocket('udp4');
  let queries = 0;
  socket.on('message', () => {
    queries += 1;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    get queries() {
      return queries;
    },
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
};
