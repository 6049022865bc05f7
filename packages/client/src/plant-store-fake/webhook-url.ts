import { normalizeWebhookUrl, webhookUrlSchemeProblem } from '@org/plant-contract';

/** IPv4 ranges the service refuses as non-public (the common ones: the fake resolves no names). */
const NON_PUBLIC_IPV4: [prefix: number[], bits: number, cause: string][] = [
  [[0], 8, 'an unspecified address'],
  [[10], 8, 'a private address'],
  [[100, 64], 10, 'a carrier-grade NAT (shared) address'],
  [[127], 8, 'a loopback address'],
  [[169, 254], 16, 'a link-local address'],
  [[172, 16], 12, 'a private address'],
  [[192, 168], 16, 'a private address'],
];

const ipv4Cause = (host: string): string | undefined => {
  const parts = host.split('.').map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part))) return undefined;
  const value = parts.reduce((sum, part) => sum * 256 + part, 0);
  for (const [prefix, bits, cause] of NON_PUBLIC_IPV4) {
    const base = [...prefix, 0, 0, 0, 0].slice(0, 4).reduce((sum, part) => sum * 256 + part, 0);
    if (Math.floor(value / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits))) return cause;
  }
  return undefined;
};

const ipv6Cause = (host: string): string | undefined => {
  if (host === '::1') return 'a loopback address';
  if (host === '::') return 'an unspecified address';
  if (/^f[cd]/i.test(host)) return 'a unique-local address';
  if (/^fe[89ab]/i.test(host)) return 'a link-local address';
  return undefined;
};

/** The URL as the service stores it (WHATWG form without fragment), or the sentence refusing it. */
export const checkWebhookUrl = (text: string, allowPrivate: boolean): { url: string } | { refusal: string } => {
  const normalized = normalizeWebhookUrl(text);
  if ('refusal' in normalized) return normalized;
  const url = new URL(normalized.url);
  const refusal = webhookUrlSchemeProblem(url, allowPrivate);
  if (refusal !== undefined) return { refusal };
  if (allowPrivate) return normalized;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return { refusal: `url must reach a public address: ${host} is a loopback name.` };
  }
  const cause = host.includes(':') ? ipv6Cause(host) : ipv4Cause(host);
  return cause ? { refusal: `url must reach a public address: ${host} is ${cause}.` } : { url: url.href };
};
