/**
 * A webhook receiver on loopback that answers every delivery 204, as a healthy subscriber does. It
 * shares the machine's two cores with the server it measures, as wrk does, so it is as lean as wrk:
 * it reads each request's head for its Content-Length, skips the body and writes one canned answer,
 * where a `node:http` server cost about a third of a create per delivery. It understands what the
 * API sends (HTTP/1.1, kept alive, a Content-Length body); anything else ends the run.
 */

import { type AddressInfo, createServer, type Socket } from 'node:net';

const NO_CONTENT = Buffer.from('HTTP/1.1 204 No Content\r\n\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /^content-length:\s*(\d+)\s*$/im;

export type Receiver = { url: string; received: () => number; close: () => Promise<void> };

export const startReceiver = async (): Promise<Receiver> => {
  let received = 0;
  let failure: Error | undefined;
  const sockets = new Set<Socket>();
  const receiver = createServer((socket) => {
    sockets.add(socket);
    let pending: Buffer = Buffer.alloc(0);
    /** Body bytes of the current request still to skip, or -1 while its head is being read. */
    let bodyLeft = -1;
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      for (;;) {
        if (bodyLeft < 0) {
          const end = pending.indexOf(HEAD_END);
          if (end < 0) return;
          const head = pending.toString('latin1', 0, end);
          const length = CONTENT_LENGTH.exec(head)?.[1];
          if (length === undefined || /^transfer-encoding:/im.test(head)) {
            failure ??= new Error(`the receiver got a request it does not read:\n${head}`);
            socket.destroy();
            return;
          }
          bodyLeft = Number(length);
          pending = pending.subarray(end + HEAD_END.length);
        }
        if (pending.length < bodyLeft) return;
        pending = pending.subarray(bodyLeft);
        bodyLeft = -1;
        received += 1;
        socket.write(NO_CONTENT);
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/plant-hook`,
    received: () => {
      if (failure) throw failure;
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        receiver.close(() => resolve());
      }),
  };
};
