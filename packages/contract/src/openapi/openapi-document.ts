import {
  type AppRoute,
  type AppRouter,
  isAppRoute,
  isAppRouteNoBody,
  isAppRouteOtherResponse,
  isZodType,
} from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';
import { contract, type RouteMetadata } from '../contract.ts';
import { exactJsonReplacer, restoreExactIntegers } from '../exact-json.ts';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency.ts';
import { CONTRACT_VERSION } from '../version.ts';
import {
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENTS,
  type WebhookEventType,
} from '../webhook-events.ts';
import { WEBHOOK_HEADERS } from '../webhooks.ts';
import { COMPONENT_DOCS, componentSchemas, WIRE_FORMATS } from './components.ts';
import { type JsonSchema, sameSchema, toJsonSchema } from './json-schema.ts';
import { errorStatusDocs, HEADERS, type HeaderObject } from './responses.ts';

type Reference = { $ref: string };
type MediaType = { schema: JsonSchema; example?: unknown };
type Parameter = {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
};
export type OpenApiResponse = {
  description: string;
  headers?: Record<string, Reference>;
  content?: Record<string, MediaType>;
};
export type OpenApiOperation = {
  operationId: string;
  summary?: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  /** Set on webhooks: the receiver is not called with the API's bearer token. */
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { description?: string; required: boolean; content: Record<string, MediaType> };
  responses: Record<string, OpenApiResponse>;
};
export type OpenApiServer = { url: string; description?: string };

/** The OpenAPI 3.1 document of the Plant Store API (the parts this generator writes). */
export type OpenApiDocument = {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: {
    title: string;
    version: string;
    summary: string;
    description: string;
    license: Record<string, string>;
    /** What `maxLength` counts: JSON Schema's code points, said outright (see LENGTH_UNIT). */
    'x-length-unit': typeof LENGTH_UNIT;
  };
  servers: OpenApiServer[];
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  /** Requests the service makes to its subscribers. */
  webhooks: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, HeaderObject>;
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>;
  };
};

export type OpenApiDocumentOptions = {
  /** Where the API is reached; by default the origin that serves the document (`/`). */
  servers?: OpenApiServer[];
};

const SECURITY_SCHEME = 'bearerAuth';
/**
 * Every `maxLength` counts Unicode code points, as JSON Schema defines it. Said outright because
 * readers (and clients) often count UTF-16 code units, as this contract did before 1.0.0: documents
 * without it were generated then, which is how `pnpm api:check` tells the change of count.
 */
const LENGTH_UNIT = 'code point';
const JSON_MEDIA_TYPE = 'application/json';

const DESCRIPTION = `A plant store: clients add plants with a client-chosen id, read, list and delete them.

**Authentication.** Every operation needs \`Authorization: Bearer <token>\`. A JWT (when the service accepts them) must carry the scope each operation lists under \`security\`; a \`:write\` scope grants the \`:read\` scope of its resource too. The service's unnamed API tokens may call every operation; a named one, the operations its configured scopes grant.

**Ownership.** Every credential belongs to a principal: a JWT's subject (or the claim the service is configured with), a named API token's name, or the operator for the unnamed API tokens. A webhook endpoint belongs to the principal that registered it: \`GET /webhooks\` lists the caller's own, and every operation on another principal's endpoint answers 404 exactly as for an id that does not exist. Limits (the endpoint cap, test deliveries, request rates) count per principal. The \`webhooks:admin\` scope, and the operator, see and manage every endpoint, and see its \`owner\`.

**Errors.** Every failure is \`application/json\` with the \`Error\` body \`{ "error": <HTTP status>, "message": "<sentence naming the field or cause>" }\`, whatever its cause: validation, authentication, an unknown path (404), an unsupported method (405), an unavailable store (503) or an unexpected fault (500).

**Ids** are int64, kept exactly: integers beyond ±(2^53 − 1) must be written as plain JSON integers and are never rounded.

**Lengths** (\`maxLength\`) count characters as JSON Schema does, in Unicode code points (\`x-length-unit\`): an emoji is one character, though it is two UTF-16 code units.`;

const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  plants: 'The plants in the store',
  webhooks: 'Receivers subscribed to new plants, and the deliveries made to them',
};

type WebhookDocs = {
  summary: string;
  /** Who receives it, and when: the start of the operation's description. */
  sentTo: string;
  bodyDescription: string;
};

/** Each event type's words in the document; a type without them fails typecheck here. */
const WEBHOOK_DOCS: Readonly<Record<WebhookEventType, WebhookDocs>> = {
  newPlant: {
    summary: 'A new plant was stored',
    sentTo:
      'Sent to every enabled endpoint subscribed to newPlant (the default) once per newly created plant (never for a replayed create)',
    bodyDescription: 'The plant as stored, with its exact int64 id.',
  },
  plantDeleted: {
    summary: 'A plant was deleted',
    sentTo:
      'Sent to every enabled endpoint subscribed to plantDeleted once per deleted plant (never for a DELETE that answered 404)',
    bodyDescription: 'The id of the deleted plant and the plant as it was stored.',
  },
};

/** What the service POSTs to each endpoint subscribed to the event type. */
const webhookOperation = (type: WebhookEventType, schemaOf: (schema: ZodTypeAny) => JsonSchema): OpenApiOperation => ({
  operationId: type,
  summary: WEBHOOK_DOCS[type].summary,
  description:
    `${WEBHOOK_DOCS[type].sentTo}, signed by the Standard Webhooks scheme. ` +
    'Delivery is at least once: the same webhook-id may arrive more than once, so deduplicate on it. Answer any 2xx within the timeout (15 s by default) to acknowledge; ' +
    'anything else, redirects included, is retried with growing delays (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default, with jitter, honouring Retry-After) and then given up. ' +
    '410 Gone disables the endpoint.',
  tags: ['webhooks'],
  security: [],
  parameters: Object.entries(WEBHOOK_HEADERS).map(([name, description]) => ({
    name,
    in: 'header' as const,
    required: true,
    description,
    schema:
      name === 'webhook-timestamp'
        ? { type: 'string', pattern: '^[0-9]+$' }
        : name === WEBHOOK_EVENT_TYPE_HEADER
          ? { type: 'string', const: type }
          : { type: 'string' },
  })),
  requestBody: {
    // The schema is the plain format's: the standard one wraps the same data, as said here.
    description: `${WEBHOOK_DOCS[type].bodyDescription} This is the body in the plain payload format (the default); in the standard one, the body is \`{ "type": "${type}", "timestamp": <when the event was announced>, "data": <this> }\`.`,
    required: true,
    content: { [JSON_MEDIA_TYPE]: { schema: schemaOf(WEBHOOK_EVENTS[type].data) } },
  },
  responses: {
    '2XX': { description: 'The plant was received; any 2xx status acknowledges it. Any other answer is retried.' },
  },
});

/** Every route of a ts-rest router, with the keys that lead to it. */
const routesOf = (router: AppRouter, prefix: string[] = []): Array<{ keys: string[]; route: AppRoute }> =>
  Object.entries(router).flatMap(([key, value]) =>
    isAppRoute(value) ? [{ keys: [...prefix, key], route: value }] : routesOf(value, [...prefix, key]),
  );

/** `/plants/:id` → `/plants/{id}`. */
const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

const shapeOf = (schema: unknown, where: string): Record<string, ZodTypeAny> => {
  if (schema === undefined || schema === null) return {};
  // ts-rest merges router-level headers into a plain object of zod schemas (`{}` when there are none).
  if (!isZodType(schema) && typeof schema === 'object' && Object.values(schema).every(isZodType)) {
    return schema as Record<string, ZodTypeAny>;
  }
  let current = schema as ZodTypeAny;
  while (isZodType(current) && current._def.typeName === 'ZodEffects') current = current._def.schema;
  if (!isZodType(current) || current._def.typeName !== 'ZodObject') {
    throw new TypeError(`The ${where} of a route must be a zod object to appear in the OpenAPI document.`);
  }
  return (current as unknown as { shape: Record<string, ZodTypeAny> }).shape;
};

/** Moves the schema's description up to the parameter, where OpenAPI tools show it. */
const parameter = (name: string, location: Parameter['in'], required: boolean, schema: JsonSchema): Parameter => {
  const { description, ...rest } = schema;
  return {
    name,
    in: location,
    required,
    ...(typeof description === 'string' && { description }),
    schema: rest,
  };
};

/**
 * Builds the OpenAPI 3.1.0 document from the contract: one operation per route, every declared
 * status with its body schema, components for the exported schemas (`ApiError` is `Error`), and
 * bearer authentication for the whole API. Browser-safe; see `stringifyOpenApiDocument` for JSON.
 */
export const createOpenApiDocument = ({
  servers = [{ url: '/', description: 'The service that serves this document' }],
}: OpenApiDocumentOptions = {}): OpenApiDocument => {
  const components = componentSchemas();
  const refs = components.map(([name, schema]) => [schema, `#/components/schemas/${name}`] as const);
  const schemaOf = (schema: ZodTypeAny, inline?: ZodTypeAny) =>
    toJsonSchema(schema, { refs: refs.filter(([candidate]) => candidate !== inline), overrides: WIRE_FORMATS });
  const componentOf = (schema: ZodTypeAny) => components.find(([, candidate]) => sameSchema(candidate, schema))?.[0];

  const exampleOf = (schema: ZodTypeAny): unknown => {
    if (schema._def.typeName === 'ZodArray') {
      const item = exampleOf(schema._def.type);
      return item === undefined ? undefined : [item];
    }
    const component = componentOf(schema);
    return component === undefined ? undefined : COMPONENT_DOCS[component]?.examples[0];
  };

  const mediaType = (schema: ZodTypeAny): MediaType => {
    const example = exampleOf(schema);
    return { schema: schemaOf(schema), ...(example !== undefined && { example }) };
  };

  /** "plant response", "plant list response": named after the component the body carries. */
  const successDescription = (schema: ZodTypeAny): string => {
    const isArray = schema._def.typeName === 'ZodArray';
    const component = componentOf(isArray ? schema._def.type : schema);
    const label = component ? (COMPONENT_DOCS[component]?.label ?? component) : 'successful';
    return `${label}${isArray ? ' list' : ''} response`;
  };

  /** `keyed`: the route takes an Idempotency-Key, so its successes may be replays that say so. */
  const response = (status: number, declared: AppRoute['responses'][number], keyed: boolean): OpenApiResponse => {
    const headers: Record<string, Reference> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    if (keyed && status < 300)
      headers[IDEMPOTENT_REPLAYED_HEADER] = { $ref: `#/components/headers/${IDEMPOTENT_REPLAYED_HEADER}` };
    if (isAppRouteNoBody(declared)) return { description: status < 300 ? 'no content' : 'unexpected error', headers };
    const contentType = isAppRouteOtherResponse(declared) ? declared.contentType : JSON_MEDIA_TYPE;
    const body = isAppRouteOtherResponse(declared) ? declared.body : declared;
    if (!isZodType(body)) throw new TypeError(`Response ${status} must be a zod schema to appear in the document.`);
    if (status < 400)
      return { description: successDescription(body), headers, content: { [contentType]: mediaType(body) } };
    const docs = errorStatusDocs(status);
    for (const name of docs.headers ?? []) headers[name] = { $ref: `#/components/headers/${name}` };
    const content = { [contentType]: { schema: schemaOf(body), example: { error: status, message: docs.message } } };
    return { description: docs.description, headers, content };
  };

  const operation = (operationId: string, route: AppRoute): OpenApiOperation => {
    const parameters: Parameter[] = [];
    const pathShape = shapeOf(route.pathParams, 'pathParams');
    for (const [, name = ''] of route.path.matchAll(/:(\w+)/g)) {
      const schema = pathShape[name];
      parameters.push(parameter(name, 'path', true, schema ? schemaOf(schema) : { type: 'string' }));
    }
    for (const [name, schema] of Object.entries(shapeOf(route.query, 'query'))) {
      parameters.push(parameter(name, 'query', !schema.isOptional(), schemaOf(schema)));
    }
    const headerShape = shapeOf(route.headers, 'headers');
    for (const [name, schema] of Object.entries(headerShape)) {
      // Authorization is the security scheme's, not a parameter.
      if (name.toLowerCase() !== 'authorization') {
        parameters.push(parameter(name, 'header', !schema.isOptional(), schemaOf(schema)));
      }
    }

    let requestBody: OpenApiOperation['requestBody'];
    if (route.method !== 'GET' && 'body' in route && isZodType(route.body)) {
      const contentType = ('contentType' in route && route.contentType) || JSON_MEDIA_TYPE;
      requestBody = { required: !route.body.isOptional(), content: { [contentType]: mediaType(route.body) } };
    }
    // Statuses are integer keys, which JavaScript enumerates in ascending order: no sort needed.
    const responses: Record<string, OpenApiResponse> = {};
    const keyed = 'idempotency-key' in headerShape;
    for (const [status, body] of Object.entries(route.responses))
      responses[status] = response(Number(status), body, keyed);

    return {
      operationId,
      ...(route.summary !== undefined && { summary: route.summary }),
      ...(route.description !== undefined && { description: route.description }),
      tags: [route.path.split('/')[1] || 'default'],
      ...(route.deprecated && { deprecated: true }),
      // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: here the JWT scope.
      security: [{ [SECURITY_SCHEME]: [(route.metadata as RouteMetadata).scope] }],
      ...(parameters.length > 0 && { parameters }),
      ...(requestBody && { requestBody }),
      responses,
    };
  };

  const paths: OpenApiDocument['paths'] = {};
  const routes = routesOf(contract);
  for (const { keys, route } of routes) {
    const path = openApiPath(route.path);
    const operationId = keys.join('.');
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(operationId, route) };
  }
  const tags = [...new Set(Object.values(paths).flatMap((methods) => Object.values(methods).flatMap((op) => op.tags)))];

  const schemas: Record<string, JsonSchema> = {};
  for (const [name, schema] of components) {
    const docs = COMPONENT_DOCS[name];
    schemas[name] = docs
      ? { description: docs.description, ...schemaOf(schema, schema), examples: docs.examples }
      : schemaOf(schema, schema);
  }

  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Plant Store',
      // The interface's version is the contract package's: a release that changes one changes the other.
      version: CONTRACT_VERSION,
      summary: 'Stores plants, by a client-chosen int64 id.',
      description: DESCRIPTION,
      license: { name: 'MIT', identifier: 'MIT' },
      'x-length-unit': LENGTH_UNIT,
    },
    servers,
    security: [{ [SECURITY_SCHEME]: [] }],
    tags: tags.map((name) => ({ name, ...(TAG_DESCRIPTIONS[name] && { description: TAG_DESCRIPTIONS[name] }) })),
    paths,
    webhooks: Object.fromEntries(WEBHOOK_EVENT_TYPES.map((type) => [type, { post: webhookOperation(type, schemaOf) }])),
    components: {
      schemas,
      headers: { ...HEADERS },
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API token of the service, or a JWT of the configured issuer carrying the scope the operation lists, sent as `Authorization: Bearer <token>`.',
        },
      },
    },
  };
};

/**
 * The document as JSON text, two-space indented with a final newline (as committed in
 * `openapi.json`). The int64 bounds and ids in examples are written digit for digit.
 */
export const stringifyOpenApiDocument = (document: OpenApiDocument): string =>
  `${restoreExactIntegers(JSON.stringify(document, exactJsonReplacer, 2))}\n`;
