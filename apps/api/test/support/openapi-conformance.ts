import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterEach } from 'vitest';

/**
 * Checks HTTP responses against an OpenAPI document (by default the committed
 * packages/contract/openapi.json; `responseChecker` takes any, such as the one the service serves)
 * with Ajv over the document's own JSON Schemas — not the zod schemas it was generated from, so
 * a generator bug or a server that drifts from the document is caught.
 */

type Json = { [key: string]: unknown };
type HeaderSpec = { required?: boolean; schema?: Json; $ref?: string };
type ResponseSpec = { $ref?: string; description?: string; headers?: Record<string, HeaderSpec>; content?: Json };
type Operation = { responses: Record<string, ResponseSpec> };
/** The parts of an OpenAPI document the checks read. */
export type OpenApiDocumentJson = { paths: Record<string, Record<string, Operation>>; components: Json };

const DOCUMENT_FILE = createRequire(import.meta.url).resolve('@org/plant-contract/openapi.json');
const DOCUMENT_ID = 'urn:plant-store:openapi';

const escapePart = (part: string) => part.replaceAll('~', '~0').replaceAll('/', '~1');
const pointer = (...parts: string[]) => parts.map((part) => `/${escapePart(part)}`).join('');

const unescapePart = (part: string) => part.replaceAll('~1', '/').replaceAll('~0', '~');

/** The JSON pointer of a local `$ref` (`#/components/headers/X-Request-Id`). */
const refPointer = (ref: string) => ref.replace(/^#/, '');

export type ResponseToCheck = {
  method: string;
  /** The document's path template, or undefined when the path is not in the document. */
  pathTemplate: string | undefined;
  status: number;
  contentType: string | null;
  body: string;
  headers?: Headers;
};

const mediaTypeOf = (contentType: string | null) => (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

/** A request as sent: its method, path with query, headers and body text. */
export type RequestToCheck = { method: string; path: string; headers: Record<string, string>; body?: string };

export type ResponseChecker = {
  /** The document's path template for a request path (`/plants/7` → `/plants/{id}`), if any. */
  pathTemplateOf(path: string): string | undefined;
  /** Every way the response departs from the document; empty when it conforms. */
  responseProblems(response: ResponseToCheck): string[];
  /**
   * Every way the request departs from the document (an operation it has, its parameters, its
   * JSON body); empty when the document allows it, and then the service must not refuse it with 400.
   */
  requestProblems(request: RequestToCheck): string[];
};

type Parameter = { name: string; in: string; required?: boolean; schema: Json };
type RequestOperation = {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Json }> };
};

const INT64_LIMIT = 2n ** 63n;

const RFC3339_DATE_TIME =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** JSON Schema's `date-time`: RFC 3339's date-time exactly (`t` and `z` in either case, a leap second allowed), on a real day. */
const isRfc3339DateTime = (text: string): boolean => {
  const [, year, month, day] = RFC3339_DATE_TIME.exec(text) ?? [];
  if (year === undefined) return false;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  return date.getUTCDate() === Number(day);
};

/**
 * The value a parameter's text stands for under its schema: an integer is its decimal digits
 * (held to int64 exactly, which a double cannot), anything else the text itself.
 */
const parameterValue = (text: string, schema: Json): { value: unknown } | { problem: string } => {
  if (schema.type !== 'integer') return { value: text };
  if (!/^-?(0|[1-9][0-9]*)$/.test(text)) return { problem: 'is not an integer' };
  if (schema.format === 'int64' && (BigInt(text) < -INT64_LIMIT || BigInt(text) >= INT64_LIMIT)) {
    return { problem: 'is beyond int64' };
  }
  return { value: Number(text) };
};

/**
 * Checks of responses against `document`, read with plain JSON.parse: integers beyond 2^53 round,
 * but stay integers, which is what the schemas check.
 */
export const responseChecker = (document: OpenApiDocumentJson): ResponseChecker => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 63 });
  ajv.addFormat('uri', { type: 'string', validate: (text: string) => URL.canParse(text) });
  ajv.addFormat('date-time', { type: 'string', validate: isRfc3339DateTime });
  // The schemas live inside the document; these two keys only carry them, so `$ref`s resolve as written.
  ajv.addKeyword({ keyword: 'components' });
  ajv.addKeyword({ keyword: 'paths' });
  ajv.addSchema({ $id: DOCUMENT_ID, components: document.components, paths: document.paths });

  const validators = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      validators.set(pointer, validate);
    }
    return validate;
  };

  /** The object a local `$ref` names, or the value itself when it is no reference. */
  const resolve = <T>(value: T & { $ref?: string }): T => {
    if (value.$ref === undefined) return value;
    const parts = refPointer(value.$ref).split('/').slice(1).map(unescapePart);
    return parts.reduce<unknown>((node, part) => (node as Json)[part], document) as T;
  };

  const templates = Object.keys(document.paths)
    .map((template) => {
      const segments = template
        .split('/')
        .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')));
      return { template, params: (template.match(/\{/g) ?? []).length, pattern: new RegExp(`^${segments.join('/')}$`) };
    })
    // A literal path wins over a template that also matches it.
    .sort((a, b) => a.params - b.params);

  const pathTemplateOf = (path: string): string | undefined =>
    templates.find(({ pattern }) => pattern.test(path))?.template;

  const checkJson = (schemaPointer: string, body: string, where: string): string[] => {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return [`${where}: the body is not JSON: ${JSON.stringify(body.slice(0, 200))}`];
    }
    const validate = validatorAt(schemaPointer);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${where}: body${error.instancePath} ${error.message}`);
  };

  const responseProblems = ({ method, pathTemplate, status, contentType, body, headers }: ResponseToCheck) => {
    const verb = method.toUpperCase();
    const where = `${verb} ${pathTemplate ?? '(path not in the document)'} → ${status}`;
    const operations = pathTemplate === undefined ? undefined : document.paths[pathTemplate];
    const operation = operations?.[verb.toLowerCase()] ?? (verb === 'HEAD' ? operations?.get : undefined);

    if (!operation) {
      // Outside the document only failures are answered, with the Error body; OPTIONS is HTTP's own.
      if (verb === 'OPTIONS' && status === 204 && body === '' && operations) return [];
      if (status < 400) return [`${where}: a success for an operation the document does not have`];
      if (!isJson(mediaTypeOf(contentType))) return [`${where}: Content-Type ${contentType} is not JSON`];
      return checkJson(pointer('components', 'schemas', 'Error'), body, where);
    }

    const operationKey = operations?.[verb.toLowerCase()] ? verb.toLowerCase() : 'get';
    const statusKey = operation.responses[String(status)] ? String(status) : 'default';
    const declared = operation.responses[statusKey];
    if (!declared) return [`${where}: status ${status} is not declared in the document`];
    const responsePointer = declared.$ref
      ? refPointer(declared.$ref)
      : pointer('paths', pathTemplate ?? '', operationKey, 'responses', statusKey);
    const response = resolve(declared);
    const problems: string[] = [];

    for (const [name, spec] of Object.entries(response.headers ?? {})) {
      const header = resolve(spec);
      const value = headers?.get(name) ?? null;
      if (value === null) {
        if (header.required && headers) problems.push(`${where}: the required header ${name} is missing`);
        continue;
      }
      const headerPointer = spec.$ref ? refPointer(spec.$ref) : `${responsePointer}${pointer('headers', name)}`;
      if (header.schema && !validatorAt(`${headerPointer}/schema`)(value)) {
        problems.push(`${where}: header ${name}: ${JSON.stringify(value)} does not match its schema`);
      }
    }

    if (verb === 'HEAD') return problems;
    const content = response.content ?? {};
    const mediaTypes = Object.keys(content);
    if (mediaTypes.length === 0) {
      if (body !== '')
        problems.push(`${where}: the document declares no body, got ${JSON.stringify(body.slice(0, 200))}`);
      return problems;
    }
    const mediaType = mediaTypeOf(contentType);
    const declaredType = mediaTypes.find((candidate) => candidate.toLowerCase() === mediaType);
    if (!declaredType) {
      return [...problems, `${where}: Content-Type ${contentType} is not one of ${mediaTypes.join(', ')}`];
    }
    if (!isJson(mediaType)) return problems;
    const schemaPointer = `${responsePointer}${pointer('content', declaredType, 'schema')}`;
    return [...problems, ...checkJson(schemaPointer, body, where)];
  };

  const requestProblems = ({ method, path, headers, body }: RequestToCheck): string[] => {
    const url = new URL(path, 'http://document.invalid');
    const template = pathTemplateOf(url.pathname);
    const verb = method.toLowerCase();
    const operation = template === undefined ? undefined : (document.paths[template]?.[verb] as RequestOperation);
    const where = `${method.toUpperCase()} ${path}`;
    if (template === undefined || operation === undefined) return [`${where}: no such operation`];
    const templateSegments = template.split('/');
    const pathSegments = url.pathname.split('/');
    const problems: string[] = [];
    for (const [index, parameter] of (operation.parameters ?? []).entries()) {
      const text =
        parameter.in === 'path'
          ? decodeURIComponent(pathSegments[templateSegments.indexOf(`{${parameter.name}}`)] ?? '')
          : parameter.in === 'query'
            ? url.searchParams.get(parameter.name)
            : (Object.entries(headers).find(([name]) => name.toLowerCase() === parameter.name)?.[1] ?? null);
      if (text === null) {
        if (parameter.required) problems.push(`${where}: the ${parameter.in} parameter ${parameter.name} is missing`);
        continue;
      }
      const parsed = parameterValue(text, parameter.schema);
      const schemaPointer = pointer('paths', template, verb, 'parameters', String(index), 'schema');
      if ('problem' in parsed) problems.push(`${where}: ${parameter.name} ${parsed.problem}`);
      else if (!validatorAt(schemaPointer)(parsed.value)) {
        problems.push(`${where}: ${parameter.name} ${JSON.stringify(text)} does not match its schema`);
      }
    }
    const content = operation.requestBody?.content;
    if (content === undefined) return problems;
    if (body === undefined) {
      return operation.requestBody?.required ? [...problems, `${where}: the body is required`] : problems;
    }
    const schemaPointer = pointer('paths', template, verb, 'requestBody', 'content', 'application/json', 'schema');
    return [...problems, ...checkJson(schemaPointer, body, where)];
  };

  return { pathTemplateOf, responseProblems, requestProblems };
};

const committed = responseChecker(JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as OpenApiDocumentJson);
/** `pathTemplateOf` of the committed document. */
export const pathTemplateOf = committed.pathTemplateOf;
/** `responseProblems` of the committed document. */
export const responseProblems = committed.responseProblems;
/** `requestProblems` of the committed document. */
export const requestProblems = committed.requestProblems;

let violations: string[] = [];
let checked = 0;

/** How many responses were checked so far in this test file. */
export const checkedResponseCount = (): number => checked;

/** Throws when the response departs from the document. */
export const assertResponseConforms = (response: ResponseToCheck): void => {
  checked += 1;
  const problems = responseProblems(response);
  if (problems.length === 0) return;
  violations.push(...problems);
  throw new Error(`The response departs from openapi.json:\n  ${problems.join('\n  ')}`);
};

/** The departures recorded since the last call, cleared: for tests that provoke them on purpose. */
export const takeViolations = (): string[] => {
  const found = violations;
  violations = [];
  return found;
};

// A caller may swallow the thrown error (a client that wraps fetch failures, `rejects.toThrow()`);
// the test still fails here.
afterEach(() => {
  const found = takeViolations();
  if (found.length > 0) throw new Error(`Responses departed from openapi.json:\n  ${found.join('\n  ')}`);
});

const realFetch = globalThis.fetch.bind(globalThis);

/**
 * `fetch` that checks every response it returns against the OpenAPI document (status, headers,
 * Content-Type and body). Use it for raw requests and as the client's injected `fetch`.
 */
export const conformingFetch: typeof fetch = async (input, init) => {
  const request = input instanceof Request ? input : undefined;
  const url = new URL(request ? request.url : String(input));
  const method = init?.method ?? request?.method ?? 'GET';
  const response = await realFetch(input, init);
  const body = await response.clone().text();
  assertResponseConforms({
    method,
    pathTemplate: pathTemplateOf(url.pathname),
    status: response.status,
    contentType: response.headers.get('content-type'),
    body,
    headers: response.headers,
  });
  return response;
};
