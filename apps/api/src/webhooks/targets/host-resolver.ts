import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { CodedError } from '../../coded-error.ts';
import { CONFIG_DEFAULTS } from '../../config-defaults.ts';

/**
 * Resolves webhook host names with c-ares (node:dns `Resolver`), not `dns.lookup`: getaddrinfo runs
 * on libuv's four-thread pool, shared with file writes (pino), zlib and crypto for the whole
 * process, and cannot be timed out, so one receiver's silent name server would stall everyone.
 * Each lookup ends within `timeoutMs`; lookups of one host share one query (at most one per host in
 * flight), and at most `maxLookups` hosts are looked up at a time. c-ares's queries take names as
 * they are, so the search list of resolv.conf is applied here, as getaddrinfo would (`searchOrder`).
 */

/** Hosts looked up at a time, at most. */
const MAX_LOOKUPS = 64;

export type HostAddress = { address: string; family: 4 | 6 };

export type HostResolver = (host: string) => Promise<HostAddress[]>;

export type HostResolverOptions = {
  /** PLANT_WEBHOOK_DNS_TIMEOUT_MS: a lookup that has no answer by then fails. */
  timeoutMs?: number | undefined;
  /** Hosts looked up at once; one more fails at once rather than queueing without bound. */
  maxLookups?: number;
  /** Name servers (`address[:port]`); the system's (resolv.conf) by default. */
  servers?: string[];
  /** Names answered without a query, as /etc/hosts lists them; read from /etc/hosts by default. */
  hosts?: ReadonlyMap<string, HostAddress[]>;
  /** The search list and ndots; read from /etc/resolv.conf by default. */
  resolvConf?: ResolvConf;
};

/** What of resolv.conf decides which names are asked for a host (see `searchOrder`). */
export type ResolvConf = {
  /** Domains tried after a name (`search`, or `domain`), lowercase, without the final dot. */
  search: readonly string[];
  /** A name with fewer dots than this is tried in the search domains before as it is. */
  ndots: number;
};

/** A failed lookup; `code` as node:dns names them (ENOTFOUND, ETIMEOUT…), `message` a sentence. */
export class HostLookupError extends CodedError {
  override readonly name = 'HostLookupError';
}

const familyOf = (address: string): 4 | 6 => (isIP(address) === 6 ? 6 : 4);

/** The names of a hosts file (lowercase) with their addresses, in the file's order. */
export const parseHostsFile = (text: string): Map<string, HostAddress[]> => {
  const hosts = new Map<string, HostAddress[]>();
  for (const line of text.split('\n')) {
    const [address, ...names] = (line.split('#')[0] ?? '').trim().split(/\s+/);
    if (address === undefined || isIP(address.split('%')[0] ?? '') === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase();
      hosts.set(key, [...(hosts.get(key) ?? []), { address, family: familyOf(address) }]);
    }
  }
  return hosts;
};

/** /etc/hosts as it is at start (read once: a lookup must not wait on the thread pool). */
const systemHosts = (): Map<string, HostAddress[]> => {
  try {
    return parseHostsFile(readFileSync('/etc/hosts', 'utf8'));
  } catch {
    return new Map();
  }
};

/**
 * The search list and ndots of a resolv.conf, as glibc reads them: the last `search` or `domain`
 * line gives the list, `options ndots:n` the dots (1 by default, 15 at most).
 */
export const parseResolvConf = (text: string): ResolvConf => {
  let search: string[] = [];
  let ndots = 1;
  for (const line of text.split('\n')) {
    const [keyword, ...values] = line.trim().split(/\s+/);
    if (keyword === 'search') search = values;
    else if (keyword === 'domain') search = values.slice(0, 1);
    else if (keyword === 'options') {
      for (const option of values) {
        const dots = /^ndots:(\d+)$/.exec(option)?.[1];
        if (dots !== undefined) ndots = Math.min(15, Number(dots));
      }
    }
  }
  const domains = search.map((domain) => domain.toLowerCase().replace(/\.$/, '')).filter((domain) => domain !== '');
  return { search: domains, ndots };
};

/** /etc/resolv.conf as it is at start, read once like /etc/hosts. */
const systemResolvConf = (): ResolvConf => {
  try {
    return parseResolvConf(readFileSync('/etc/resolv.conf', 'utf8'));
  } catch {
    return { search: [], ndots: 1 };
  }
};

/**
 * The names asked for `host`, in glibc's order (res_search): a name written with a final dot as it
 * is only; one with fewer dots than ndots in each search domain, then as it is; any other as it is,
 * then in each search domain. So `receiver.ns` reaches `receiver.ns.svc.cluster.local` in a
 * cluster, where ndots is 5.
 */
export const searchOrder = (name: string, { search, ndots }: ResolvConf): string[] => {
  const host = name.replace(/\.$/, '');
  if (host !== name || search.length === 0) return [host];
  const searched = search.map((domain) => `${host}.${domain}`);
  const dots = host.split('.').length - 1;
  return dots < ndots ? [...searched, host] : [host, ...searched];
};

/** RFC 6761: `localhost` names are loopback and `.invalid` ones never exist, without asking anyone. */
const LOOPBACK: HostAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];
const isUnder = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** Codes c-ares gives for "the name has no such address": the other family may still answer. */
const NO_ADDRESS = new Set(['ENODATA', 'ENOTFOUND']);

export const createHostResolver = ({
  timeoutMs = CONFIG_DEFAULTS.webhooks.dnsTimeoutMs,
  maxLookups = MAX_LOOKUPS,
  servers,
  hosts = systemHosts(),
  resolvConf = systemResolvConf(),
}: HostResolverOptions = {}): HostResolver => {
  // Two tries within the timeout; c-ares doubles each try's wait, so the first gets a third.
  const resolver = new dns.Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 3)), tries: 2 });
  if (servers) resolver.setServers(servers);
  const inFlight = new Map<string, Promise<HostAddress[]>>();
  const timedOut = (host: string) =>
    new HostLookupError(`${host}: no answer from the name server within ${timeoutMs} ms.`, 'ETIMEOUT');

  const queryName = async (host: string): Promise<HostAddress[]> => {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses = answers.flatMap((answer, index) =>
      answer.status === 'fulfilled'
        ? answer.value.map((address) => ({ address, family: (index === 0 ? 4 : 6) as 4 | 6 }))
        : [],
    );
    if (addresses.length > 0) return addresses;
    const codes = answers.map((answer) =>
      answer.status === 'rejected' ? ((answer.reason as NodeJS.ErrnoException).code ?? 'EFAIL') : 'ENODATA',
    );
    const code = codes.find((each) => !NO_ADDRESS.has(each)) ?? 'ENOTFOUND';
    throw code === 'ETIMEOUT' ? timedOut(host) : new HostLookupError(`${host}: ${code}.`, code);
  };

  /**
   * `names` one after the other until one has an address. Another failure (a timeout, a refusal)
   * ends the search, as it ends glibc's; nothing more is asked once `expired`.
   */
  const query = async (names: readonly string[], host: string, expired: () => boolean): Promise<HostAddress[]> => {
    for (const each of names) {
      if (expired()) break;
      try {
        return await queryName(each);
      } catch (error) {
        if (!(error instanceof HostLookupError) || !NO_ADDRESS.has(error.code)) throw error;
      }
    }
    throw new HostLookupError(`${host}: ENOTFOUND.`, 'ENOTFOUND');
  };

  /** The query, ended at `timeoutMs` whatever c-ares does with its tries. */
  const bounded = (names: readonly string[], host: string): Promise<HostAddress[]> => {
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        reject(timedOut(host));
      }, timeoutMs);
    });
    return Promise.race([query(names, host, () => expired), deadline]).finally(() => clearTimeout(timer));
  };

  return (name) => {
    const asked = name.toLowerCase();
    const host = asked.replace(/\.$/, '');
    if (isIP(host) !== 0) return Promise.resolve([{ address: host, family: familyOf(host) }]);
    const listed = hosts.get(host);
    if (listed) return Promise.resolve(listed);
    if (isUnder(host, 'localhost')) return Promise.resolve(LOOPBACK);
    if (isUnder(host, 'invalid')) {
      return Promise.reject(new HostLookupError(`${host}: ENOTFOUND.`, 'ENOTFOUND'));
    }
    const names = searchOrder(asked, resolvConf);
    // One lookup per list of names asked: `a.example` and `a.example.` are one when nothing is searched.
    const key = names.join(' ');
    const pending = inFlight.get(key);
    if (pending) return pending;
    if (inFlight.size >= maxLookups) {
      return Promise.reject(
        new HostLookupError(`${host}: ${maxLookups} other lookups are already waiting for an answer.`, 'EBUSY'),
      );
    }
    const lookup = bounded(names, host).finally(() => inFlight.delete(key));
    inFlight.set(key, lookup);
    return lookup;
  };
};
