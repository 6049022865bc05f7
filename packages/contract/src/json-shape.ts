/** Deepest nesting of arrays and objects accepted in a request body; a plant needs one level. */
export const MAX_JSON_DEPTH = 32;

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

// Shared by the service and the client's fake, which must refuse the same bodies in the same words.

/**
 * What `JSON.parse` lets through but this API refuses: an object with the same key twice (which
 * value would win is up to each parser, so the sender's intent is unclear) and nesting deeper than
 * MAX_JSON_DEPTH. Runs on text that already parsed, so it only has to follow well-formed JSON.
 * Answers a sentence describing the problem, or undefined.
 */
export const jsonShapeProblem = (text: string): string | undefined => {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let expectKey = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const keys = open.at(-1);
      if (expectKey && keys) {
        // Decode escapes so that "a" and "\u0061" count as the same key.
        const key = JSON.parse(text.slice(index, end + 1)) as string;
        if (keys.has(key))
          return `The request body has the key ${JSON.stringify(key).slice(0, 60)} twice in one object.`;
        keys.add(key);
        expectKey = false;
      }
      index = end;
    } else if (char === '{' || char === '[') {
      if (open.length === MAX_JSON_DEPTH) return `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`;
      open.push(char === '{' ? new Set() : null);
      expectKey = char === '{';
    } else if (char === '}' || char === ']') {
      open.pop();
    } else if (char === ',') {
      expectKey = open.at(-1) !== null && open.length > 0;
    } else if (!WHITESPACE.has(char)) {
      expectKey = false;
    }
  }
  return undefined;
};

/**
 * Why a Content-Type header (undefined: none) is not one this API reads, as a sentence: the API
 * takes `application/json` or a `+json` type, with no charset or UTF-8 (RFC 8259 allows nothing
 * else), and answers anything else 415. Undefined when it is one.
 */
export const jsonContentTypeProblem = (header: string | undefined): string | undefined => {
  if (header === 'application/json') return undefined;
  const [mediaType = '', ...parameters] = (header ?? '').split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
    const got = header === undefined ? 'none' : JSON.stringify(header.slice(0, 100));
    return `Content-Type must be application/json (got ${got}).`;
  }
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    if (value.trim().replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') return 'JSON bodies must be encoded as UTF-8.';
  }
  return undefined;
};
