// The form and scheme rules of a webhook URL, shared by the service and the client's fake; the
// service alone also resolves the host and refuses non-public addresses.

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_OR_WHITESPACE = /[\u0000-\u0020\u007f]|\s/u;

/**
 * The form a webhook URL is stored, compared and answered in: the WHATWG serialization without
 * its fragment (never sent anyway), so that one receiver has one spelling. URL parsing would
 * silently drop leading or trailing spaces and embedded tabs and newlines; a URL carrying any is
 * refused instead. Answers `{ refusal }` (a sentence for a 400 answer) when `text` is no URL.
 */
export const normalizeWebhookUrl = (text: string): { url: string } | { refusal: string } => {
  if (CONTROL_OR_WHITESPACE.test(text)) return { refusal: 'url must not contain whitespace or control characters.' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { refusal: 'url must be an absolute URL.' };
  }
  url.hash = '';
  return { url: url.href };
};

/**
 * Why a URL in its stored form may not be a webhook target before its host is looked at, or
 * undefined: the scheme must be https (http too when private targets are allowed), and it may
 * carry no credentials.
 */
export const webhookUrlSchemeProblem = (url: URL, allowPrivate: boolean): string | undefined => {
  const allowed = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(url.protocol)) return `url must use https (got ${url.protocol.slice(0, -1)}).`;
  // They would end up in logs and lists; a receiver authenticates deliveries by their signature.
  if (url.username !== '' || url.password !== '') return 'url must not contain a user name or password.';
  return undefined;
};
