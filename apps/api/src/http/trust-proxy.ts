import { isIP } from 'node:net';

/**
 * Express's `trust proxy` setting: which peers' `X-Forwarded-For` is believed, so that `req.ip` is
 * the client's address rather than the proxy's. `false` believes no one; a number trusts that many
 * hops; a list trusts those addresses, CIDR ranges and proxy-addr's names.
 */
export type TrustProxy = false | number | string[];

const NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An address, or an address/prefix within its family's bits: what proxy-addr accepts, minus netmasks. */
const isAddressOrRange = (entry: string): boolean => {
  const slash = entry.indexOf('/');
  const version = isIP(slash === -1 ? entry : entry.slice(0, slash));
  if (version === 0 || entry.includes('%')) return false;
  if (slash === -1) return true;
  const prefix = entry.slice(slash + 1);
  // proxy-addr judges an IPv4-mapped IPv6 range by its IPv4 form; a prefix over 32 would throw at start.
  const bits = version === 4 || /^::ffff:[\d.]+$/i.test(entry.slice(0, slash)) ? 32 : 128;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= bits;
};

/**
 * PLANT_TRUST_PROXY in Express's syntax: `loopback`, a comma-separated list of addresses, CIDR
 * ranges and the names loopback/linklocal/uniquelocal, or a hop count. `true` is refused: it would
 * believe whatever a client writes in X-Forwarded-For. Answers undefined for a value it refuses.
 */
export const parseTrustProxy = (value: string): Exclude<TrustProxy, false> | undefined => {
  if (/^\d{1,3}$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim());
  return entries.every((entry) => NAMES.has(entry) || isAddressOrRange(entry)) ? entries : undefined;
};
