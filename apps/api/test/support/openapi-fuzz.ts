import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';

/**
 * Requests drawn from the committed OpenAPI document: for each operation, its path, query and
 * header parameters and its JSON body from their schemas, now and then replaced by junk, so that
 * every operation is asked both what it accepts and what it must refuse. Webhook URLs are only
 * ever 127.0.0.1 (or not URLs at all): a fuzzed service sends test deliveries, and must send none
 * beyond the machine.
 */

type Schema = { [key: string]: unknown };
type Parameter = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: { 'application/json': { schema: Schema } } } };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

/** One request to send: method, path with its query, headers and body. */
export type FuzzRequest = {
  operation: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
};

const DOCUMENT_FILE = createRequire(import.meta.url).resolve('@org/plant-contract/openapi.json');
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/**
 * URLs a fuzzed webhook may have: this machine's discard port, where nothing listens, or URIs of
 * forms a `uri` allows that no webhook may have.
 */
const LOCAL_URLS = fc.constantFrom(
  'http://127.0.0.1:9/hook',
  'http://127.0.0.1:9/other',
  'http://127.0.0.1:9/a?b=c',
  'HTTPS://127.0.0.1:9/upper',
  'http://user:secret@127.0.0.1:9/hook',
  'ftp://127.0.0.1:9/hook',
  'urn:plant:hook',
);
/**
 * RFC 3339 date-times in the forms it allows: four-digit years, an offset or `Z`, a `t` and `z` in
 * either case.
 */
const RFC3339_DATE_TIMES = fc
  .tuple(
    fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
    fc.constantFrom('Z', 'z', '+05:30', '-12:00'),
    fc.constantFrom('T', 't'),
  )
  .map(([date, zone, separator]) => date.toISOString().replace('T', separator).replace('Z', zone));
/** Printable ASCII: what fetch lets through in a header value or a query. */
const printable = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength });
/** Anything at all, as a value that should be refused. */
const junk = fc.oneof(fc.jsonValue({ maxDepth: 2 }), printable(20));

/** Mostly what the schema describes, sometimes junk. */
const mostly = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: junk });

const arbitraryOf = (schema: Schema, document: Document, depth = 0): fc.Arbitrary<unknown> => {
  const ref = schema.$ref as string | undefined;
  if (ref !== undefined) {
    const name = ref.replace('#/components/schemas/', '');
    return arbitraryOf(document.components.schemas[name] as Schema, document, depth);
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  // Beside a type, the choices only narrow it (one of the properties required): drawn from the
  // type, what they refuse is sent too.
  if (choices !== undefined && schema.type === undefined)
    return fc.oneof(...choices.map((choice) => arbitraryOf(choice, document, depth + 1)));
  const type = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (type.includes('null') && type.length > 1) {
    return fc.oneof(
      fc.constant(null),
      arbitraryOf({ ...schema, type: type.filter((each) => each !== 'null') }, document, depth),
    );
  }
  switch (type[0]) {
    case 'integer': {
      const min = Math.max(Number(schema.minimum ?? -1_000_000), Number.MIN_SAFE_INTEGER);
      const max = Math.min(Number(schema.maximum ?? 1_000_000), Number.MAX_SAFE_INTEGER);
      return fc.oneof(fc.integer({ min: Math.max(min, -1_000), max: Math.min(max, 1_000) }), fc.constantFrom(min, max));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string': {
      if (schema.format === 'uri') return LOCAL_URLS;
      if (schema.format === 'date-time') return RFC3339_DATE_TIMES;
      const maxLength = Math.min(Number(schema.maxLength ?? 40), 40);
      const minLength = Math.min(Number(schema.minLength ?? 0), maxLength);
      if (typeof schema.pattern === 'string' && schema.pattern.startsWith('^msg_')) {
        return fc.stringMatching(new RegExp(schema.pattern));
      }
      // Any code point: lengths count them, as the document's maxLength does.
      return fc.string({ unit: 'binary', minLength, maxLength });
    }
    case 'array': {
      const items = depth > 3 ? junk : arbitraryOf(schema.items as Schema, document, depth + 1);
      return fc.array(items, {
        minLength: Number(schema.minItems ?? 0),
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const record = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, arbitraryOf(property, document, depth + 1)]),
      );
      return fc.record(record, { requiredKeys: (schema.required ?? []) as string[] });
    }
    default:
      return junk;
  }
};

/** The text of a parameter's value in a path, query or header. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/**
 * Where `ids` are known (endpoints registered, plants created), a path id is mostly one of them
 * (but for deleting an endpoint).
 */
export type KnownIds = { endpoints: readonly string[]; plants: readonly bigint[] };

const requestOf = (document: Document, path: string, method: string, operation: Operation, known: KnownIds) => {
  const parameters = operation.parameters ?? [];
  const values = Object.fromEntries(
    parameters.map((parameter) => {
      let valid = arbitraryOf(parameter.schema, document);
      // Deleting stays with ids that may not exist, so the known endpoints last the whole run.
      const deletesEndpoint = method === 'delete' && path.startsWith('/webhooks');
      if (parameter.in === 'path' && parameter.name === 'id' && !deletesEndpoint) {
        const ids = path.startsWith('/plants') ? known.plants.map(String) : known.endpoints;
        if (ids.length > 0)
          valid = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: valid });
      }
      // A header or query value is text: fetch refuses control characters in a header.
      const text = (parameter.in === 'header' ? fc.oneof(printable(40), mostly(valid)) : mostly(valid)).map(asText);
      const present = parameter.required ? text : fc.option(text, { nil: undefined });
      return [`${parameter.in} ${parameter.name}`, present];
    }),
  ) as Record<string, fc.Arbitrary<string | undefined>>;
  const schema = operation.requestBody?.content['application/json'].schema;
  const body =
    schema === undefined
      ? fc.constant(undefined)
      : fc.option(mostly(arbitraryOf(schema, document)), { nil: undefined });
  return fc.record({ values: fc.record(values), body }).map(({ values, body }): FuzzRequest => {
    let filled = path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const parameter of parameters) {
      const value = values[`${parameter.in} ${parameter.name}`];
      if (value === undefined) continue;
      if (parameter.in === 'path') filled = filled.replace(`{${parameter.name}}`, encodeURIComponent(value) || '%20');
      else if (parameter.in === 'query') query.set(parameter.name, value);
      else headers[parameter.name] = value.replace(/[^\x21-\x7e]/g, '') || 'x';
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    const search = query.size > 0 ? `?${query}` : '';
    return {
      operation: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      path: `${filled}${search}`,
      headers,
      ...(body !== undefined && { body: JSON.stringify(body) }),
    };
  });
};

/** `count` requests over every operation of the committed document, drawn from `seed`. */
export const fuzzRequests = ({
  seed,
  count,
  known,
}: {
  seed: number;
  count: number;
  known: KnownIds;
}): FuzzRequest[] => {
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Document;
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => requestOf(document, path, method, operation, known)),
  );
  // Every operation in turn, so each is asked as often as the others.
  return fc.sample(fc.tuple(...operations), { seed, numRuns: Math.ceil(count / operations.length) }).flat();
};

/** Sends `requests` `concurrency` at a time (each sender takes the next when its answer is read); resolves their answers in order. */
export const sendConcurrently = async <T>(
  requests: readonly FuzzRequest[],
  concurrency: number,
  send: (request: FuzzRequest) => Promise<T>,
): Promise<T[]> => {
  const answers: T[] = [];
  let next = 0;
  const sender = async () => {
    while (next < requests.length) {
      const index = next;
      next += 1;
      answers[index] = await send(requests[index] as FuzzRequest);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  return answers;
};
