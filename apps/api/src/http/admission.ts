import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from 'pino';

export type AdmissionLimits = {
  /**
   * Requests worked on at once before connections are read no further: past it, a connection that
   * was answered (or is new) is not read until a request finishes, so its next request waits in the
   * kernel, costing no heap. 0 reads every connection at once.
   */
  maxActive: number;
  /** Requests received and not yet answered, at most; more are shed. */
  maxInFlight: number;
  /**
   * Open connections beyond which a new connection's requests are shed and the connection closed;
   * a quarter more are accepted to be told so, and past that Node closes new ones unanswered.
   */
  maxConnections: number;
  /** Mean event-loop delay (ms) over a sample beyond which requests are shed; 0 for no such bound. */
  maxEventLoopDelayMs: number;
};

export type ShedReason = 'in_flight' | 'connections' | 'event_loop_delay';

export type AdmissionOptions = AdmissionLimits & {
  logger: Logger;
  /** Told about every shed request, e.g. to count it. */
  onShed?: (reason: ShedReason) => void;
  /** The CORS headers a shed answer needs for the request's origin (`corsAnswerHeaders`), if any. */
  corsHeaders?: (origin: string | undefined) => Readonly<Record<string, string>> | undefined;
};

export type Admission = {
  readonly inFlight: number;
  readonly connections: number;
  /** Connections not read for now (see `maxActive`). */
  readonly waiting: number;
  /** Reads every connection again and holds none back from now on: for the shutdown's drain. */
  readAll(): void;
  /** Stops watching the event loop. */
  stop(): void;
};

/** Connections accepted past PLANT_MAX_CONNECTIONS to be answered 503, as a share of it. */
const OVER_LIMIT_SHARE = 0.25;

/** The most connections the server holds open: past this, Node closes new ones unanswered. */
const hardConnectionLimit = (maxConnections: number): number =>
  maxConnections + Math.ceil(maxConnections * OVER_LIMIT_SHARE);

/** How often the event-loop delay is read, and over how long it is averaged. */
const SAMPLE_MS = 500;
/** The histogram's timer resolution; every sample includes it, so it is subtracted (as @fastify/under-pressure does). */
const RESOLUTION_MS = 10;
const LOG_EVERY_MS = 1_000;
/** The longest a connection is held back unread (see `maxActive`): half a liveness probe's second. */
const MAX_WAIT_MS = 500;
const RETRY_AFTER_SECONDS = '1';

/**
 * The liveness probe is never shed: killing a replica that sheds correctly would turn an overload
 * into an outage. It answers a constant without touching the store, so it cannot add to the load.
 */
const EXEMPT = /^\/healthz\/?(?:\?|$)/i;

const MESSAGES: Record<ShedReason, string> = {
  in_flight:
    'The service is at its limit of requests in flight (PLANT_MAX_IN_FLIGHT); retry after the Retry-After delay.',
  connections:
    'The service is at its limit of open connections (PLANT_MAX_CONNECTIONS); retry after the Retry-After delay.',
  event_loop_delay:
    'The service is overloaded: its event loop is behind (PLANT_MAX_EVENT_LOOP_DELAY_MS); retry after the Retry-After delay.',
};

/** The answer to a shed request, built once per reason. */
const shedAnswer = (reason: ShedReason) => {
  const body = JSON.stringify({ error: 503, message: MESSAGES[reason] });
  const headers = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Retry-After': RETRY_AFTER_SECONDS,
    Connection: 'close',
  };
  return { headers, body };
};

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Admission control for the API server: a request beyond a bound is answered at once with 503, the
 * `Error` body, `Retry-After` and `Connection: close`, before the app sees it, so before
 * authentication, before its body is read, and without reaching the store. Bounds: requests in
 * flight, open connections, and event-loop delay. GET /healthz is never shed.
 *
 * Connections beyond the bound are accepted rather than destroyed (what `server.maxConnections`
 * does): their client gets a 503 it can act on, and a liveness probe on a new connection is still
 * answered. Each such connection closes after its first answer. Every open connection costs memory,
 * so a quarter more than the bound are accepted that way; past that, `server.maxConnections` closes
 * new connections unanswered (counted and logged as shed for `connections` too).
 *
 * Before any of that, past `maxActive` requests being worked on, connections are not read: one that
 * was just answered, or is new, waits (its next request in the kernel, costing no heap) until a
 * request finishes, oldest first, or for half a second at most, after which its request is read and
 * meets the bounds above. Requests that wait there instead of in the process die young: with
 * thousands alive at once, most outlived two scavenges and were promoted, and the old space's
 * collections grew with the connections (the README's Overload section has the measurements).
 *
 * Installed on the server, around whatever its request listener is, so that it holds for this
 * server only: a listener of its own (metrics, probes) is outside every bound. Install it before
 * `drainConnections`, so that the drain's `Connection: close` covers shed answers too.
 */
export const admitRequests = (
  server: Server,
  { maxActive, maxInFlight, maxConnections, maxEventLoopDelayMs, logger, onShed, corsHeaders }: AdmissionOptions,
): Admission => {
  let inFlight = 0;
  let connections = 0;
  let holding = maxActive > 0;
  /** A connection not being read, since when. */
  type Hold = { socket: Socket; since: number };
  /** The connections not being read, each with its current hold. */
  const waiting = new Map<Socket, Hold>();
  /**
   * The same holds, oldest first, read from `head`; a hold whose connection was read again or closed
   * since is passed over there. Not the Map's own order: taking a Map's first key after deleting the
   * ones before it makes V8 step over every deleted entry (1.3 µs a request at 4,000 connections,
   * profiled).
   */
  let queue: Hold[] = [];
  let head = 0;
  /** Takes the oldest current hold off the queue, if it began by `before`. */
  const takeOldest = (before: number): Hold | undefined => {
    for (; head < queue.length; head += 1) {
      const hold = queue[head] as Hold;
      if (waiting.get(hold.socket) !== hold) continue;
      if (hold.since > before) return undefined;
      head += 1;
      // The part already read is dropped once it is most of the array: copies stay amortized O(1).
      if (head > 1_024 && head * 2 > queue.length) {
        queue = queue.slice(head);
        head = 0;
      }
      return hold;
    }
    queue = [];
    head = 0;
    return undefined;
  };
  let pumpScheduled = false;
  let expiry: NodeJS.Timeout | undefined;
  const readAgain = (socket: Socket) => {
    waiting.delete(socket);
    socket.resume();
  };
  // Once per turn of the event loop, as many waiting connections are read again as there is room
  // for; one that has no request yet leaves its room to the next turn's.
  const pump = () => {
    pumpScheduled = false;
    for (let room = maxActive - inFlight; room > 0; room -= 1) {
      const hold = takeOldest(Number.POSITIVE_INFINITY);
      if (hold === undefined) break;
      readAgain(hold.socket);
    }
    if (waiting.size > 0 && inFlight < maxActive) schedulePump();
  };
  const schedulePump = () => {
    if (pumpScheduled) return;
    pumpScheduled = true;
    setImmediate(pump);
  };
  // A connection waits MAX_WAIT_MS at most; then its request is read and meets the other bounds,
  // so that a service that cannot catch up sheds (503) rather than leaving clients to time out.
  const expire = () => {
    const before = performance.now() - MAX_WAIT_MS;
    for (let hold = takeOldest(before); hold !== undefined; hold = takeOldest(before)) readAgain(hold.socket);
    if (waiting.size === 0) {
      clearInterval(expiry);
      expiry = undefined;
    }
  };
  // Its next request stays in the kernel meanwhile. The hold ends before any idle timeout can close
  // the connection under a request: Node's keep-alive timer runs a second past keepAliveTimeout.
  const holdBack = (socket: Socket) => {
    socket.pause();
    const hold = { socket, since: performance.now() };
    waiting.set(socket, hold);
    queue.push(hold);
    expiry ??= setInterval(expire, MAX_WAIT_MS / 4).unref();
  };
  /** Whether a connection answered or new now waits: the active bound is reached, or others wait first. */
  const mustWait = () => holding && (waiting.size > 0 || inFlight >= maxActive);
  let loopBehind = false;
  let loopDelayMs = 0;
  /** Connections accepted over the bound, until they close. */
  const over = new Set<Socket>();

  // One listener for every socket, rather than a closure (and `once`'s wrapper) for each: an open
  // connection's heap is what PLANT_MAX_CONNECTIONS multiplies. A socket closes once.
  function forget(this: Socket) {
    connections -= 1;
    over.delete(this);
    waiting.delete(this);
  }
  server.maxConnections = hardConnectionLimit(maxConnections);
  server.on('connection', (socket: Socket) => {
    connections += 1;
    if (connections > maxConnections) over.add(socket);
    // On the next tick: Node's own connection listener has just resumed the socket, and that
    // resume starts reading on the next tick (it would undo a pause made now).
    else if (mustWait()) process.nextTick(holdBack, socket);
    socket.on('close', forget);
  });

  let histogram: ReturnType<typeof monitorEventLoopDelay> | undefined;
  let sampler: NodeJS.Timeout | undefined;
  if (maxEventLoopDelayMs > 0) {
    const watched = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    watched.enable();
    sampler = setInterval(() => {
      loopDelayMs = Math.max(0, watched.mean / 1e6 - RESOLUTION_MS);
      loopBehind = loopDelayMs > maxEventLoopDelayMs;
      watched.reset();
    }, SAMPLE_MS).unref();
    histogram = watched;
  }

  const sinceLog: Record<ShedReason, number> = { in_flight: 0, connections: 0, event_loop_delay: 0 };
  let loggedAt = 0;
  const logShedding = () => {
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    logger.warn(
      {
        shed: { ...sinceLog },
        inFlight,
        connections,
        waiting: waiting.size,
        eventLoopDelayMs: Math.round(loopDelayMs),
        limits: { maxActive, maxInFlight, maxConnections, maxEventLoopDelayMs },
      },
      'shedding requests: the service is overloaded',
    );
    loggedAt = now;
    sinceLog.in_flight = sinceLog.connections = sinceLog.event_loop_delay = 0;
  };

  // Past the hard limit Node closes the connection itself; still counted and logged.
  server.on('drop', () => {
    sinceLog.connections += 1;
    onShed?.('connections');
    logShedding();
  });

  const answers = {
    in_flight: shedAnswer('in_flight'),
    connections: shedAnswer('connections'),
    event_loop_delay: shedAnswer('event_loop_delay'),
  };
  const shed = (res: ServerResponse, reason: ShedReason) => {
    const { headers, body } = answers[reason];
    // A page on an allowed origin can then read the 503 and its Retry-After, not a network error.
    const cors = corsHeaders?.(res.req.headers.origin);
    res.writeHead(503, cors ? { ...headers, ...cors } : headers);
    // HEAD gets the headers a GET would, without the body.
    res.end(res.req.method === 'HEAD' ? undefined : body);
    sinceLog[reason] += 1;
    onShed?.(reason);
    logShedding();
  };

  function release(this: ServerResponse) {
    inFlight -= 1;
    if (mustWait()) {
      // Detached from the response by now; the request keeps it.
      const { socket } = this.req;
      if (!socket.destroyed && !socket.writableEnded) holdBack(socket);
    }
    if (waiting.size > 0) schedulePump();
  }

  const listeners = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // The common case costs three comparisons; the reason and the exemption are worked out only
    // when a bound is reached.
    const overConnection = over.size > 0 && over.has(req.socket);
    if (inFlight >= maxInFlight || loopBehind || overConnection) {
      if (!EXEMPT.test(req.url ?? '')) {
        return shed(res, overConnection ? 'connections' : inFlight >= maxInFlight ? 'in_flight' : 'event_loop_delay');
      }
      if (overConnection) res.setHeader('Connection', 'close');
    }
    inFlight += 1;
    res.on('close', release);
    for (const listener of listeners) listener.call(server, req, res);
  });

  return {
    get inFlight() {
      return inFlight;
    },
    get connections() {
      return connections;
    },
    get waiting() {
      return waiting.size;
    },
    readAll() {
      holding = false;
      for (const socket of [...waiting.keys()]) readAgain(socket);
      queue = [];
      head = 0;
    },
    stop() {
      clearInterval(sampler);
      clearInterval(expiry);
      histogram?.disable();
    },
  };
};
