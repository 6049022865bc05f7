import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on loopback that counts distinct deliveries (by webhook-id) and holds every
 * request until `open()`, then answers each, held or new, 204; with `hang`, it never answers.
 */
export const startHeldReceiver = async ({ hang = false }: { hang?: boolean } = {}) => {
  const held: ServerResponse[] = [];
  const seen = new Set<string>();
  let open = false;
  let onCount: (() => void) | undefined;
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      seen.add(String(req.headers['webhook-id']));
      onCount?.();
      if (open && !hang) res.writeHead(204).end();
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    /** A URL on this receiver; one path per endpoint when several endpoints share it. */
    url: (path = 'hook') => `${base}/${path}`,
    /** Resolves once `count` distinct deliveries arrived. */
    until: (count: number) =>
      new Promise<void>((resolve) => {
        onCount = () => {
          if (seen.size < count) return;
          onCount = undefined;
          resolve();
        };
        onCount();
      }),
    open: () => {
      open = true;
      if (!hang) for (const res of held.splice(0)) res.writeHead(204).end();
    },
    close: () => {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
