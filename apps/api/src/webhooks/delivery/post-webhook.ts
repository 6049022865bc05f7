import { isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { type Clock, systemClock } from '../../clock.ts';
import { createHostResolver, HostLookupError, type HostResolver } from '../targets/host-resolver.ts';
import { guardedLookup, hostOf, nonPublicCause } from '../targets/target-address.ts';

/** How much of a receiver's answer is read: enough to reuse the connection, never a memory risk. */
export const RESPONSE_BYTES_LIMIT = 4096;

export type PostOptions = {
  timeoutMs: number;
  allowPrivate: boolean;
  dispatcher: Dispatcher;
  /** Times the exchange out and dates Retry-After; default the system's. */
  clock?: Clock;
};

/**
 * What one attempt came to: the status when the receiver answered, or why it did not; `refused`
 * when the service refused to send it at all (the target is not allowed), which no retry changes.
 */
export type PostOutcome =
  | { status: number; retryAfterMs?: number }
  | { status?: undefined; error: string; refused?: boolean };

/**
 * The keep-alive connections of the deliveries (undici, decision 0014): up to `maxSockets` to each
 * receiver's origin, over HTTP/1.1. Each new connection looks its host up with `resolver` (never
 * dns.lookup, see host-resolver.ts), refusing non-public addresses unless private targets are
 * allowed. postWebhook times the whole exchange out itself, so undici's own header and body timers
 * are off and its connect timer is only a backstop for a connection the exchange gave up on.
 */
export const createDispatcher = ({
  allowPrivate,
  maxSockets,
  timeoutMs,
  resolver = createHostResolver(),
}: {
  allowPrivate: boolean;
  maxSockets: number;
  timeoutMs: number;
  resolver?: HostResolver;
}): Agent =>
  new Agent({
    connections: maxSockets,
    allowH2: false,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: timeoutMs, lookup: guardedLookup(resolver, { allowPrivate }) },
  });

/** Retry-After in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). */
export const parseRetryAfter = (value: string | undefined, now = Date.now()): number | undefined => {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};

const describeFailure = (error: NodeJS.ErrnoException): PostOutcome => {
  // The address guard refused the connection: trying again later would be refused again.
  if (error.code === 'EPRIVATEADDRESS') return { error: `Refused to connect: ${error.message}`, refused: true };
  if (error.code === 'ETIMEDOUT_WEBHOOK') return { error: error.message };
  if (error instanceof HostLookupError) return { error: `Name lookup failed: ${error.message}` };
  // undici's name for a connection the receiver closed before answering, which receivers' operators
  // know as node:http's and curl's: reset.
  if (error.code === 'UND_ERR_SOCKET') return { error: 'Connection failed: ECONNRESET.' };
  return { error: `Connection failed: ${error.code ?? error.message}.` };
};

/** What a POST needs of an endpoint URL, read once per URL (see targetOf). */
type Target = {
  protocol: string;
  /** Scheme, host and port: the connections undici keeps for this URL. */
  origin: string;
  /** The host as connected to: an IP literal without its brackets, or a name. */
  host: string;
  path: string;
  /** The URL's credentials as an Authorization header's value. */
  authorization: string | undefined;
  /** Why the host, an IP literal, is not public; undefined for a public one and for a name. */
  literalCause: string | undefined;
};

/**
 * Endpoint URLs read so far, null for one that does not parse: every attempt to an endpoint goes to
 * the same URL, and parsing it again cost each delivery more than signing it. One per endpoint
 * (PLANT_WEBHOOK_ENDPOINTS_MAX's default), 2,000 characters at most each (the contract's bound);
 * emptied when full, so a URL that changed is not kept for ever.
 */
const MAX_CACHED_TARGETS = 1_000;
const targets = new Map<string, Target | null>();

const readTarget = (url: string): Target | null => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const host = hostOf(parsed);
  const credentials =
    parsed.username !== '' || parsed.password !== ''
      ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`
      : undefined;
  return {
    protocol: parsed.protocol,
    origin: parsed.origin,
    host,
    path: `${parsed.pathname}${parsed.search}`,
    authorization: credentials === undefined ? undefined : `Basic ${Buffer.from(credentials).toString('base64')}`,
    literalCause: isIP(host) !== 0 ? nonPublicCause(host) : undefined,
  };
};

const targetOf = (url: string): Target | null => {
  let target = targets.get(url);
  if (target === undefined) {
    target = readTarget(url);
    if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
    targets.set(url, target);
  }
  return target;
};

/**
 * POSTs one delivery with `headers` besides Host, Content-Type, Content-Length, User-Agent and the
 * URL's credentials (Authorization), which are added. Redirects are not followed (a 3xx is an answer
 * like any other), the answer is read up to RESPONSE_BYTES_LIMIT, and the whole exchange ends within
 * `timeoutMs`: an answer is its status line, so one whose body is cut off (too long, too slow) still
 * counts by its status.
 */
export const postWebhook = (
  url: string,
  body: string,
  headers: Record<string, string>,
  { timeoutMs, allowPrivate, dispatcher, clock = systemClock }: PostOptions,
): Promise<PostOutcome> =>
  new Promise((resolve) => {
    const target = targetOf(url);
    if (target === null) {
      resolve({ error: 'The endpoint URL is not valid.', refused: true });
      return;
    }
    const { protocol, host } = target;
    if (protocol !== 'https:' && !(allowPrivate && protocol === 'http:')) {
      resolve({ error: `Refused to connect: ${protocol} URLs are not allowed.`, refused: true });
      return;
    }
    // An IP literal is connected to without a lookup, so it is judged here.
    const cause = allowPrivate ? undefined : target.literalCause;
    if (cause) {
      resolve({ error: `Refused to connect: ${host} is ${cause}.`, refused: true });
      return;
    }

    let settled = false;
    /** The receiver's answer, once its status line came. */
    let answer: PostOutcome | undefined;
    let read = 0;
    /** Ends the exchange once it was handed a connection; until then, the timeout settles it alone. */
    let controller: Dispatcher.DispatchController | undefined;
    const timedOut = () =>
      Object.assign(new Error(`No 2xx answer within ${timeoutMs} ms.`), { code: 'ETIMEDOUT_WEBHOOK' });
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      cancelTimeout();
      resolve(outcome);
    };
    // Headers as one flat list, which undici writes as they are after checking each; it adds Host
    // and Content-Length itself.
    const rawHeaders = ['content-type', 'application/json', 'user-agent', 'plant-store-webhooks/1'];
    if (target.authorization !== undefined) rawHeaders.push('authorization', target.authorization);
    for (const name in headers) rawHeaders.push(name, headers[name] as string);
    const cancelTimeout = clock.setTimeout(() => {
      // A connection still being made (looked up, connected, TLS) ends by itself within the connect
      // backstop; the attempt does not wait for it.
      if (controller === undefined) finish(describeFailure(timedOut()));
      else controller.abort(timedOut());
    }, timeoutMs);
    // dispatch rather than request(): no stream, promise or abort signal per attempt, where a
    // delivery needs the status, one header and to drain a few bytes.
    dispatcher.dispatch(
      { origin: target.origin, path: target.path, method: 'POST', headers: rawHeaders, body },
      {
        onRequestStart(started) {
          if (settled) started.abort(timedOut());
          else controller = started;
        },
        onResponseStart(_, status, responseHeaders) {
          const retryAfter = responseHeaders['retry-after'];
          const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, clock.now());
          answer = retryAfterMs === undefined ? { status } : { status, retryAfterMs };
        },
        onResponseData(started, chunk) {
          read += chunk.length;
          // More than we care to read: drop the connection rather than the memory.
          if (read > RESPONSE_BYTES_LIMIT) started.abort(new Error('The answer is longer than is read.'));
        },
        onResponseEnd() {
          if (answer) finish(answer);
        },
        onResponseError(_, error: NodeJS.ErrnoException) {
          finish(answer ?? describeFailure(error));
        },
      },
    );
  });
