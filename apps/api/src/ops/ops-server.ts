import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { http } from '../http/node-http.ts';

export const urlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Listens for the operations routes (/metrics, /healthz, /readyz) on an address of their own, and
 * logs `message` with the URL once listening; a failure to listen ends the process with one line
 * naming `variable`.
 */
export const listenForOps = (
  { port, host }: { port: number; host: string },
  app: Express,
  logger: Logger,
  { message, variable }: { message: string; variable: string },
): Server => {
  const server = http.createServer(app);
  server.on('error', (error: NodeJS.ErrnoException) => {
    console.error(`Cannot listen on ${host}:${port} (${variable}): ${error.code ?? error.message}.`);
    process.exit(1);
  });
  server.listen(port, host, () => {
    logger.info({ url: urlOf(host, (server.address() as AddressInfo).port) }, message);
  });
  return server;
};

/** Stops listening and ends its connections: scrapes and probes are short and retried. */
export const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
