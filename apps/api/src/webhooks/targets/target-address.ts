import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { normalizeWebhookUrl, webhookUrlSchemeProblem } from '@org/plant-contract';
import ipaddr from 'ipaddr.js';
import { createHostResolver, type HostResolver } from './host-resolver.ts';

/**
 * Server-side request forgery guard: webhook URLs are chosen by API clients, so the service must
 * not be made to POST into its own network. Addresses are judged by number, never by name, and
 * again when connecting (DNS may answer differently then: rebinding). The ranges are ipaddr.js's
 * (IANA's special-purpose registries, maintained there rather than copied here): only what it
 * calls `unicast` is public.
 */

/** How ipaddr.js's range names read in a refusal. */
const RANGE_CAUSES: Readonly<Record<string, string>> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  private: 'a private address',
  reserved: 'a reserved or documentation address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  discard: 'a discard-only address',
  benchmarking: 'a benchmarking address',
  teredo: 'a Teredo tunnel address',
};

const causeOf = (range: string): string => RANGE_CAUSES[range] ?? `a special-purpose address (${range})`;

/** 64:ff9b::/96, the well-known NAT64 prefix: the IPv4 address is the last 32 bits. */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];
/** ::/96: the deprecated IPv4-compatible form (ipaddr.js counts it as unicast). */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

const ipv4Of = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);

/**
 * The IPv4 address an IPv6 address stands for, and under which name, when it is one of the forms
 * that carry one: traffic to it ends up at that IPv4 address, so that address is what is judged.
 */
const embeddedIpv4 = (address: ipaddr.IPv6, range: string): { ipv4: ipaddr.IPv4; form: string } | undefined => {
  const bytes = address.toByteArray();
  if (range === 'ipv4Mapped') return { ipv4: address.toIPv4Address(), form: 'IPv4-mapped' };
  if (range === 'rfc6145') return { ipv4: ipv4Of(bytes.slice(12)), form: 'IPv4-translated' };
  if (range === 'rfc6052' && address.match(WELL_KNOWN_NAT64)) return { ipv4: ipv4Of(bytes.slice(12)), form: 'NAT64' };
  if (range === '6to4') return { ipv4: ipv4Of(bytes.slice(2, 6)), form: '6to4' };
  if (range === 'unicast' && address.match(IPV4_COMPATIBLE))
    return { ipv4: ipv4Of(bytes.slice(12)), form: 'IPv4-compatible' };
  return undefined;
};

/**
 * Why `address` (an IP literal) is not a public unicast address — "a loopback address", "a private
 * address (IPv4-mapped)"… — or undefined when it is one. The local-use NAT64 prefix
 * (64:ff9b:1::/48) is refused outright: where it carries its IPv4 address depends on the local
 * translator's prefix length, which the service cannot know.
 */
export const nonPublicCause = (address: string): string | undefined => {
  if (!ipaddr.isValid(address) || isIP(address.split('%')[0] ?? '') === 0) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIpv4(parsed as ipaddr.IPv6, range);
    if (embedded) {
      const inner = embedded.ipv4.range();
      return inner === 'unicast' ? undefined : `${causeOf(inner)} (${embedded.form})`;
    }
    if (range === 'rfc6052') return 'a local-use NAT64 address';
  }
  return range === 'unicast' ? undefined : causeOf(range);
};

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

export type TargetPolicy = {
  /** PLANT_WEBHOOKS_ALLOW_PRIVATE: any address, and plain http, are allowed (tests, in-cluster receivers). */
  allowPrivate: boolean;
  /** Resolves a host name to all its addresses; a host resolver with the defaults when not given. */
  resolve?: (host: string) => Promise<string[]>;
};

/** A TargetPolicy's `resolve` from a host resolver. */
export const addressesOf =
  (resolver: HostResolver) =>
  async (host: string): Promise<string[]> =>
    (await resolver(host)).map(({ address }) => address);

let defaultResolver: HostResolver | undefined;
const resolveAll = (host: string): Promise<string[]> => {
  defaultResolver ??= createHostResolver();
  return addressesOf(defaultResolver)(host);
};

// The stored form of a webhook URL is the contract's rule; the routes take it from here.
export { normalizeWebhookUrl };

/** Answers of a name server that say the name has no address: the client's to correct. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA']);

/** A lookup that failed for a passing reason (time-out, busy resolver): the URL was not judged. */
export class LookupUnavailableError extends Error {
  override readonly name = 'LookupUnavailableError';
}

/**
 * Why `text` may not be a webhook URL (a sentence for a 400 answer), or undefined when it may.
 * Checks the form, the scheme, credentials, and every address the host resolves to now; throws a
 * LookupUnavailableError when the host cannot be looked up now.
 */
export const refuseTarget = async (text: string, policy: TargetPolicy): Promise<string | undefined> => {
  const normalized = normalizeWebhookUrl(text);
  if ('refusal' in normalized) return normalized.refusal;
  const url = new URL(normalized.url);
  const refused = webhookUrlSchemeProblem(url, policy.allowPrivate);
  if (refused !== undefined || policy.allowPrivate) return refused;
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    const cause = nonPublicCause(host);
    return cause && `url must reach a public address: ${host} is ${cause}.`;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return `url must reach a public address: ${host} is a loopback name.`;
  }
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? resolveAll)(host);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code !== undefined && NO_SUCH_NAME.has(code)) return `url host ${host} cannot be resolved (${code}).`;
    // A time-out, a busy resolver, a failing name server: the same request may pass in a moment, so
    // it is not the client's mistake (and an Idempotency-Key must not keep it as the answer).
    throw new LookupUnavailableError(
      code === 'ETIMEOUT'
        ? `The name server did not answer for url host ${host} in time; retry later.`
        : `url host ${host} cannot be looked up right now (${code ?? 'lookup failed'}); retry later.`,
    );
  }
  for (const address of addresses) {
    const cause = nonPublicCause(address);
    // The addresses themselves stay unsaid: they would map the service's network for the client.
    if (cause) return `url must reach a public address: ${host} resolves to ${cause}.`;
  }
  return undefined;
};

export class PrivateAddressError extends Error {
  override readonly name = 'PrivateAddressError';
  readonly code = 'EPRIVATEADDRESS';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) requests through `resolver` (off the thread pool, timed out). Unless
 * private targets are allowed it refuses non-public addresses, so the address actually connected
 * to is the one checked (a check before the request could be answered differently by DNS a moment
 * later). Handles both forms Node asks for: one address, or all (`autoSelectFamily`).
 */
export const guardedLookup =
  (resolver: HostResolver, { allowPrivate }: { allowPrivate: boolean }) =>
  (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    resolver(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = wanted === undefined ? found : found.filter(({ family }) => family === wanted);
        if (!allowPrivate) {
          for (const { address } of addresses) {
            const cause = nonPublicCause(address);
            if (cause) {
              return callback(new PrivateAddressError(`${hostname} resolves to ${cause}.`), options.all ? [] : '');
            }
          }
        }
        if (options.all) return callback(null, addresses);
        const [first] = addresses;
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' }), '');
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, options.all ? [] : ''),
    );
  };
