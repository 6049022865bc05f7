import { createServer } from 'node:net';

/**
 * A TCP port free on `host` right now, for a server that must be told its port before it starts
 * (PostgreSQL, Verdaccio, a container on the host network, a metrics listener). Another process
 * may take it in between; the callers start their server at once.
 */
export const freePort = (host = '127.0.0.1'): Promise<number> =>
  new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
