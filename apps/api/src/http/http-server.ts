import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Express } from 'express';
import type { ConnectionDrain } from './drain.ts';
import { http } from './node-http.ts';

export type ServerConfig = {
  /**
   * How long the service keeps serving after SIGTERM/SIGINT, readiness failed and every answer
   * closing its connection, before it stops listening.
   */
  shutdownDrainMs: number;
  /** How long in-flight requests may take to finish once the listener is closed before the process exits anyway. */
  shutdownGraceMs: number;
  /** Longest a client may take to send the request headers. */
  headersTimeoutMs: number;
  /** Longest a client may take to send the whole request, and longest a socket may stay silent. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open for the next request. */
  keepAliveTimeoutMs: number;
};

/**
 * A constructor for Node's server whose instances are born with `prototype`. Express's first
 * middleware moves every request and response onto the app's prototypes (`app.request`,
 * `app.response`); for an object already there, that `Object.setPrototypeOf` changes nothing and
 * costs nothing, where otherwise it reshapes two objects per request (about 7% of throughput, profiled).
 */
const bornWith = <T extends object>(base: new (...args: never[]) => T, prototype: object) => {
  function Born(this: unknown, ...args: never[]) {
    return Reflect.construct(base, args, Born);
  }
  Born.prototype = prototype;
  return Born as unknown as typeof base;
};

/**
 * An HTTP server for the Express app, with timeouts set against slow clients: headers and body must
 * arrive in time, idle keep-alive connections are closed, and silent sockets are dropped.
 */
export const createHttpServer = (
  app: Express,
  { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs }: Omit<ServerConfig, 'shutdownGraceMs'>,
): Server => {
  const server = http.createServer(
    {
      IncomingMessage: bornWith(http.IncomingMessage, app.request) as typeof IncomingMessage,
      ServerResponse: bornWith(http.ServerResponse, app.response) as unknown as typeof ServerResponse,
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      keepAliveTimeout: keepAliveTimeoutMs,
      // Node enforces the two timeouts above only this often (30 s by default), which would let a
      // slow client hold its socket that much longer.
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(headersTimeoutMs / 2))),
    },
    app,
  );
  // A response the client stops reading, or a request that stalls: the socket is dropped when silent this long.
  server.setTimeout(requestTimeoutMs, (socket) => socket.destroy());
  return server;
};

// Loopback or a local network: a client that got its answer reconnects well within this.
const HOLD_QUIET_MS = 50;
const HOLD_MAX_MS = 500;

export type ShutdownOutcome = 'drained' | 'grace period elapsed';

/**
 * Drains the server, then stops it: for `drainMs` it keeps serving, every answer closing its
 * connection (see drain.ts), so that keep-alive clients leave after their next answer instead of
 * having a request reset; then it stops accepting connections, closes the idle ones, lets
 * in-flight requests finish, and runs `close`. `hurry` ends the drain window early. After `graceMs`
 * more the remaining connections are cut so that the process can exit in bounded time.
 */
export const shutdownGracefully = async (
  server: Server,
  {
    drain,
    drainMs = 0,
    hurry,
    graceMs,
    close,
  }: { drain?: ConnectionDrain; drainMs?: number; hurry?: AbortSignal; graceMs: number; close: () => Promise<void> },
): Promise<ShutdownOutcome> => {
  drain?.start();
  if (drainMs > 0 && !hurry?.aborted) await sleep(drainMs, undefined, hurry && { signal: hurry }).catch(() => {});
  // Without a drain window (0) the listener closes at once, as it did before drains.
  const release = drainMs > 0 ? await drain?.holdRequests(HOLD_QUIET_MS, HOLD_MAX_MS) : undefined;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  release?.();
  // Only connections that finished a request and wait for the next: a connection accepted whose
  // request has not been read yet is not idle, and answers that request before it closes.
  server.closeIdleConnections();
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<ShutdownOutcome>((resolve) => {
    timer = setTimeout(() => resolve('grace period elapsed'), graceMs);
  });
  const outcome = await Promise.race([closed.then((): ShutdownOutcome => 'drained'), elapsed]);
  clearTimeout(timer);
  if (outcome === 'drained') {
    await close();
  } else {
    server.closeAllConnections();
    // Still bounded: the store gets a moment to finish what the cut requests started, no more.
    await Promise.race([close(), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
  }
  return outcome;
};
