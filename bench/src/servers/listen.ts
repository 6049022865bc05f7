import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How every server here runs under the bench: it listens where the bench says (PORT, HOST), prints
 * the line the bench waits for, and on SIGTERM closes, then `stop`s what it holds and exits.
 */
export const listen = (handler: RequestListener, stop: () => Promise<void> = async () => {}): void => {
  const server = createServer(handler);
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const { address, port } = server.address() as AddressInfo;
    console.log(JSON.stringify({ msg: 'listening', url: `http://${address}:${port}` }));
  });
  process.on('SIGTERM', () => server.close(() => void stop().then(() => process.exit(0))));
};
