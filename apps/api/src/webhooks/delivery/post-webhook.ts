import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { type Clock, systemClock } from '../../clock.ts';
import { http } from '../../http/node-http.ts';
import { createHostResolver, HostLookupError, type HostResolver } from '../targets/host-resolver.ts';
import { guardedLookup, hostOf, nonPublicCause } from '../targets/target-address.ts';
import { BoundedMap } from './bounded-map.ts';

/** How much of a receiver's answer is read: enough to reuse the connection, never a memory risk. */
export const RESPONSE_BYTES_LIMIT = 4096;

export type PostOptions = {
  timeoutMs: number;
  allowPrivate: boolean;
  agents: { http: HttpAgent; https: HttpsAgent };
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
 * Keep-alive agents for the delivery loop; each new connection looks its host up with `resolver` (never
 * dns.lookup, see host-resolver.ts), refusing non-public addresses unless private targets are allowed.
 */
export const createAgents = ({
  allowPrivate,
  maxSockets,
  resolver = createHostResolver(),
}: {
  allowPrivate: boolean;
  maxSockets: number;
  resolver?: HostResolver;
}): PostOptions['agents'] => {
  const options = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    lookup: guardedLookup(resolver, { allowPrivate }) as never,
  };
  return { http: new http.Agent(options), https: new HttpsAgent(options) };
};

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
  return { error: `Connection failed: ${error.code ?? error.message}.` };
};

/** What a POST needs of an endpoint URL, read once per URL (see targetOf). */
type Target = {
  protocol: string;
  https: boolean;
  /** The host as connected to: an IP literal without its brackets, or a name. */
  host: string;
  /** The Host header: the host and port as the URL writes them. */
  hostHeader: string;
  port: number | undefined;
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
const targets = new BoundedMap<string, Target | null>(MAX_CACHED_TARGETS);

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
    https: parsed.protocol === 'https:',
    host,
    hostHeader: parsed.host,
    port: parsed.port === '' ? undefined : Number(parsed.port),
    path: `${parsed.pathname}${parsed.search}`,
    authorization: credentials === undefined ? undefined : `Basic ${Buffer.from(credentials).toString('base64')}`,
    literalCause: isIP(host) !== 0 ? nonPublicCause(host) : undefined,
  };
};

const targetOf = (url: string): Target | null => {
  let target = targets.get(url);
  if (target === undefined) {
    target = readTarget(url);
    targets.set(url, target);
  }
  return target;
};

/**
 * POSTs one delivery with `headers` besides Host, Content-Type, Content-Length, User-Agent and the
 * URL's credentials (Authorization), which are added. Redirects are not followed (a 3xx is an answer
 * like any other), the answer is read up to RESPONSE_BYTES_LIMIT, and the whole exchange ends within `timeoutMs`.
 */
export const postWebhook = (
  url: string,
  body: string,
  headers: Record<string, string>,
  { timeoutMs, allowPrivate, agents, clock = systemClock }: PostOptions,
): Promise<PostOutcome> =>
  new Promise((resolve) => {
    const target = targetOf(url);
    if (target === null) {
      resolve({ error: 'The endpoint URL is not valid.', refused: true });
      return;
    }
    const { https, host } = target;
    if (!https && !(allowPrivate && target.protocol === 'http:')) {
      resolve({ error: `Refused to connect: ${target.protocol} URLs are not allowed.`, refused: true });
      return;
    }
    // An IP literal is connected to without a lookup, so it is judged here.
    const cause = allowPrivate ? undefined : target.literalCause;
    if (cause) {
      resolve({ error: `Refused to connect: ${host} is ${cause}.`, refused: true });
      return;
    }

    let settled = false;
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      cancelTimeout();
      resolve(outcome);
    };
    const send = https ? httpsRequest : http.request;
    // Headers as one flat list, which node:http writes as they are: given an object, it would check,
    // lower-case and store each name and value one by one (a tenth of a delivery's instructions on
    // this thread), then add Host and Authorization, which a list must therefore carry itself.
    const rawHeaders = [
      'Host',
      target.hostHeader,
      'content-type',
      'application/json',
      'content-length',
      String(Buffer.byteLength(body)),
      'user-agent',
      'plant-store-webhooks/1',
    ];
    if (target.authorization !== undefined) rawHeaders.push('authorization', target.authorization);
    for (const name in headers) rawHeaders.push(name, headers[name] as string);
    // The options spelled out rather than the URL: given a URL, node:http copies it into options
    // through an object literal with a spread, a slow path that cost more than the signature.
    const outgoing = send({
      protocol: target.protocol,
      hostname: host,
      port: target.port,
      path: target.path,
      method: 'POST',
      agent: https ? agents.https : agents.http,
      headers: rawHeaders,
    });
    const cancelTimeout = clock.setTimeout(() => {
      outgoing.destroy(
        Object.assign(new Error(`No 2xx answer within ${timeoutMs} ms.`), { code: 'ETIMEDOUT_WEBHOOK' }),
      );
    }, timeoutMs);
    // `on`, not `once`: `finish` takes the first outcome only, a later 'error' is heard rather than
    // thrown, and no wrapper is made and removed per listener.
    outgoing.on('error', (error: NodeJS.ErrnoException) => finish(describeFailure(error)));
    outgoing.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      const retryAfter = response.headers['retry-after'];
      const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, clock.now());
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // More than we care to read: drop the connection rather than the memory.
        if (read > RESPONSE_BYTES_LIMIT) response.destroy();
      });
      const done = () => finish(retryAfterMs === undefined ? { status } : { status, retryAfterMs });
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    outgoing.end(body);
  });
