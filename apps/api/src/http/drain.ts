import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type ConnectionDrain = {
  /** From now on every answer carries `Connection: close`, the ones already in flight included. */
  start(): void;
  readonly draining: boolean;
  /**
   * Holds new requests back until no connection has arrived for `quietMs` (or `maxMs` passed);
   * resolves with the function that lets them through. See below for why.
   */
  holdRequests(quietMs: number, maxMs: number): Promise<() => void>;
};

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Lets a server shed its keep-alive connections without resetting a request. Closing an idle
 * keep-alive connection races with the client writing its next request on it (that request is
 * reset); answering with `Connection: close` does not: the client learns from the answer itself
 * that the connection ends, and opens a new one for its next request.
 *
 * Installed on the server rather than in the app, so that it holds whatever the request listener
 * is; call it once the server has its listener and before it serves.
 */
export const drainConnections = (server: Server): ConnectionDrain => {
  let draining = false;
  let held: (() => void)[] | undefined;
  let lastConnectionAt = 0;
  // The open connections, so that the requests in flight when the drain starts close their
  // connection too. Not their latest responses: an idle keep-alive connection would keep its last
  // request and response alive (6 KiB of heap each, measured), and each request would pay a write.
  const open = new Set<Socket>();
  // One listener for every socket, not a closure for each (see admission.ts).
  function forget(this: Socket) {
    open.delete(this);
  }
  server.on('connection', (socket: Socket) => {
    lastConnectionAt = Date.now();
    open.add(socket);
    socket.on('close', forget);
  });
  const listeners = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  const dispatch = (req: IncomingMessage, res: ServerResponse) => {
    for (const listener of listeners) listener.call(server, req, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    if (held) held.push(() => dispatch(req, res));
    else dispatch(req, res);
  });
  return {
    start() {
      if (draining) return;
      draining = true;
      for (const socket of open) {
        // Node's response in progress on the connection, if any (what its clientError handling reads too).
        const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
        if (res && !res.headersSent) res.setHeader('Connection', 'close');
      }
    },
    get draining() {
      return draining;
    },
    // While the drain answers with Connection: close, clients keep opening new connections, and
    // those the kernel has completed but Node not yet accepted are reset when the listener closes:
    // their requests were written, so to their clients they may be lost. A client reconnects after
    // an answer; with new requests held, every client ends up waiting on an accepted connection,
    // arrivals stop, and the listener can close under no one.
    async holdRequests(quietMs, maxMs) {
      const queue: (() => void)[] = [];
      held = queue;
      const started = Date.now();
      lastConnectionAt = started;
      while (Date.now() - lastConnectionAt < quietMs && Date.now() - started < maxMs) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(10, quietMs)));
      }
      return () => {
        held = undefined;
        for (const resume of queue.splice(0)) resume();
      };
    },
  };
};
