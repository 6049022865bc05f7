import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ReceivedWebhook = { headers: IncomingHttpHeaders; body: string; receivedAt: number };

/**
 * How the receiver answers: a status (and headers), 'hang' to never answer, or 'hold' to answer
 * once `release` says how.
 */
export type Answer = { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang' | 'hold';

export type WebhookReceiver = {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** The most requests that were open at once. */
  mostAtOnce(): number;
  /** TCP connections accepted so far. */
  connections(): number;
  /** How the next requests are answered; 200 by default. */
  answer: (next: Answer | ((request: ReceivedWebhook, index: number) => Answer)) => void;
  /** Answers the requests held so far with `status` (200 by default). */
  release(status?: number): void;
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /**
   * Takes the receiver down: open connections are dropped and new ones reset (ECONNRESET) until
   * `start`. It keeps its port all along: a port given back could be taken by another test's server
   * meanwhile, and deliveries would then reach the wrong one.
   */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Takes it down for good and gives the port back (after the test). */
  close(): Promise<void>;
};

/** A loopback receiver of webhooks on 127.0.0.1 and an ephemeral port, recording every request. */
export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const received: ReceivedWebhook[] = [];
  const hanging: ServerResponse[] = [];
  const held: ServerResponse[] = [];
  let decide: (request: ReceivedWebhook, index: number) => Answer = () => ({ status: 200 });
  const waiters: Array<() => void> = [];
  let down = false;
  let open = 0;
  let most = 0;
  let connections = 0;

  const server: Server = createServer((req, res) => {
    most = Math.max(most, ++open);
    res.once('close', () => {
      open -= 1;
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() };
      received.push(request);
      for (const wake of waiters.splice(0)) wake();
      const answer = decide(request, received.length - 1);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      if (answer === 'hold') {
        held.push(res);
        return;
      }
      const send = () => res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end('ok');
      if (answer.delayMs === undefined) send();
      else setTimeout(send, answer.delayMs);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    if (down) socket.resetAndDestroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    mostAtOnce: () => most,
    connections: () => connections,
    answer: (next) => {
      decide = typeof next === 'function' ? next : () => next;
    },
    release: (status = 200) => {
      for (const res of held.splice(0)) res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    },
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const deadline = setTimeout(
          () => reject(new Error(`Timed out waiting for ${count} webhooks; got ${received.length}.`)),
          timeoutMs,
        );
        const check = () => {
          if (received.length >= count) {
            clearTimeout(deadline);
            resolve(received.slice());
          } else waiters.push(check);
        };
        check();
      }),
    stop: async () => {
      down = true;
      for (const res of [...hanging.splice(0), ...held.splice(0)]) res.destroy();
      server.closeAllConnections();
    },
    start: async () => {
      down = false;
    },
    close: async () => {
      down = true;
      for (const res of [...hanging.splice(0), ...held.splice(0)]) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};
