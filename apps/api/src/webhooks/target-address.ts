import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/**
 * Server-side request forgery guard: webhook URLs are chosen by API clients, so the service must
 * not be made to POST into its own network. Addresses are judged by number, never by name, and
 * again when connecting (DNS may answer differently then: rebinding).
 */

type Range = { prefix: bigint; bits: number; width: 32 | 128; cause: string };

const ipv4ToBigInt = (address: string): bigint =>
  address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);

const ipv6ToBigInt = (address: string): bigint => {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  // A trailing dotted quad (::ffff:1.2.3.4) is two groups.
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted?.[1]) {
    const v4 = ipv4ToBigInt(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = [...headGroups, ...Array.from({ length: tail === undefined ? 0 : missing }, () => '0'), ...tailGroups];
  return groups.reduce((value, group) => (value << 16n) | BigInt(Number.parseInt(group || '0', 16)), 0n);
};

const range = (cidr: string, cause: string): Range => {
  const [address = '', bits = ''] = cidr.split('/');
  const width = isIP(address) === 4 ? 32 : 128;
  const prefix = width === 32 ? ipv4ToBigInt(address) : ipv6ToBigInt(address);
  return { prefix, bits: Number(bits), width, cause };
};

const IPV4_RANGES: readonly Range[] = [
  range('0.0.0.0/8', 'an unspecified ("this network") address'),
  range('10.0.0.0/8', 'a private address'),
  range('100.64.0.0/10', 'a carrier-grade NAT (shared) address'),
  range('127.0.0.0/8', 'a loopback address'),
  range('169.254.0.0/16', 'a link-local address'),
  range('172.16.0.0/12', 'a private address'),
  range('192.0.0.0/24', 'an IETF protocol assignment address'),
  range('192.168.0.0/16', 'a private address'),
  range('198.18.0.0/15', 'a benchmarking address'),
  range('224.0.0.0/4', 'a multicast address'),
  range('240.0.0.0/4', 'a reserved address'),
];

const IPV6_RANGES: readonly Range[] = [
  range('::/128', 'an unspecified address'),
  range('::1/128', 'a loopback address'),
  range('fc00::/7', 'a unique-local address'),
  range('fe80::/10', 'a link-local address'),
  range('fec0::/10', 'a site-local address'),
  range('ff00::/8', 'a multicast address'),
];

/** IPv6 prefixes that carry an IPv4 address in their last 32 bits, judged as that address. */
const EMBEDDED_IPV4: readonly Range[] = [
  range('::ffff:0:0/96', 'IPv4-mapped'),
  range('::/96', 'IPv4-compatible'),
  range('64:ff9b::/96', 'NAT64'),
];

const inRange = (value: bigint, { prefix, bits, width }: Range): boolean => {
  const shift = BigInt(width - bits);
  return value >> shift === prefix >> shift;
};

/**
 * Why `address` (an IP literal) is not a public unicast address — "a loopback address", "a private
 * address"… — or undefined when it is one.
 */
export const nonPublicCause = (address: string): string | undefined => {
  const family = isIP(address);
  if (family === 4) {
    const value = ipv4ToBigInt(address);
    if (value === 0xffffffffn) return 'a broadcast address';
    return IPV4_RANGES.find((candidate) => inRange(value, candidate))?.cause;
  }
  if (family === 6) {
    const value = ipv6ToBigInt(address);
    const exact = IPV6_RANGES.find((candidate) => candidate.bits === 128 && inRange(value, candidate));
    if (exact) return exact.cause;
    const embedding = EMBEDDED_IPV4.find((candidate) => inRange(value, candidate));
    if (embedding) {
      const v4 = value & 0xffffffffn;
      const dotted = [24n, 16n, 8n, 0n].map((shift) => String((v4 >> shift) & 0xffn)).join('.');
      const cause = nonPublicCause(dotted);
      return cause && `${cause} (${embedding.cause})`;
    }
    return IPV6_RANGES.find((candidate) => inRange(value, candidate))?.cause;
  }
  return 'not an IP address';
};

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

export type TargetPolicy = {
  /** PLANT_WEBHOOKS_ALLOW_PRIVATE: any address, and plain http, are allowed (tests, in-cluster receivers). */
  allowPrivate: boolean;
  /** Resolves a host name to all its addresses; node:dns by default. */
  resolve?: (host: string) => Promise<string[]>;
};

const resolveAll = (host: string): Promise<string[]> =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) =>
      error ? reject(error) : resolve(addresses.map(({ address }) => address)),
    );
  });

/**
 * Why `text` may not be a webhook URL (a sentence for a 400 answer), or undefined when it may.
 * Checks the scheme, credentials, and every address the host resolves to now.
 */
export const refuseTarget = async (text: string, policy: TargetPolicy): Promise<string | undefined> => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL.';
  }
  const allowed = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) {
    return `url must use https (got ${url.protocol.slice(0, -1)}).`;
  }
  // They would end up in logs and lists; a receiver authenticates deliveries by their signature.
  if (url.username !== '' || url.password !== '') return 'url must not contain a user name or password.';
  if (policy.allowPrivate) return undefined;
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
    return `url host ${host} cannot be resolved (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'}).`;
  }
  for (const address of addresses) {
    const cause = nonPublicCause(address);
    if (cause) return `url must reach a public address: ${host} resolves to ${address}, ${cause}.`;
  }
  return undefined;
};

export class PrivateAddressError extends Error {
  override readonly name = 'PrivateAddressError';
  readonly code = 'EPRIVATEADDRESS';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:http(s) requests that refuses non-public addresses, so the address actually
 * connected to is the one checked (a check before the request could be answered differently by
 * DNS a moment later). Handles both forms Node asks for: one address, or all (`autoSelectFamily`).
 */
export const guardedLookup = (
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void => {
  dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, options.all ? [] : '');
    for (const { address } of addresses) {
      const cause = nonPublicCause(address);
      if (cause) {
        return callback(
          new PrivateAddressError(`${hostname} resolves to ${address}, ${cause}.`),
          options.all ? [] : '',
        );
      }
    }
    if (options.all) return callback(null, addresses);
    const [first] = addresses;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address.`), { code: 'ENOTFOUND' }), '');
    return callback(null, first.address, first.family);
  });
};
