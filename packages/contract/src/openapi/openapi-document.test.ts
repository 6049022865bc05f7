import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { isAppRouteNoBody } from '@ts-rest/core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { contract } from '../contract.ts';
import { parseExactJson, stringifyExactJson } from '../exact-json.ts';
import { ListPlantsQuery } from '../parameters.ts';
import { ApiError, NewPlant, Plant } from '../schemas.ts';
import { CONTRACT_VERSION } from '../version.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhook-events.ts';
import {
  CreatedWebhookEndpoint,
  NewWebhookEndpoint,
  RecoverWebhookDeliveries,
  RequeuedWebhookDeliveries,
  RotatedWebhookSecret,
  WEBHOOK_URL_MAX_LENGTH,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookIdParams,
} from '../webhooks.ts';
import { COMPONENT_DOCS } from './components.ts';
import { createOpenApiDocument, type OpenApiDocument, stringifyOpenApiDocument } from './openapi-document.ts';

const document = createOpenApiDocument();
const text = stringifyOpenApiDocument(document);
/** The document as a reader gets it: plain JSON (int64 bounds rounded to doubles, as any JSON tool reads them). */
const json = JSON.parse(text) as OpenApiDocument;

const INT64 = { type: 'integer', format: 'int64', minimum: -(2n ** 63n), maximum: 2n ** 63n - 1n };

/** Ajv over the document's own schemas, with the OpenAPI formats it uses. */
const documentAjv = () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 63 });
  ajv.addFormat('uri', { type: 'string', validate: (text: string) => URL.canParse(text) });
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => !Number.isNaN(Date.parse(text)) });
  ajv.addKeyword({ keyword: 'components' });
  ajv.addKeyword({ keyword: 'paths' });
  ajv.addSchema({ $id: 'urn:plant-store:openapi', components: json.components, paths: json.paths });
  return (pointer: string) => ajv.compile({ $ref: `urn:plant-store:openapi#${pointer}` });
};
const schemaAt = documentAjv();

const pointer = (...parts: string[]) =>
  parts.map((part) => `/${part.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document for an independent validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(json));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has only valid JSON Schema 2020-12 schemas, which Ajv compiles in strict mode', () => {
    for (const name of Object.keys(json.components.schemas)) {
      expect(() => schemaAt(pointer('components', 'schemas', name)), name).not.toThrow();
    }
  });

  it("is OpenAPI 3.1.0 at the contract package's version, with bearer authentication for the whole API", () => {
    expect(json.openapi).toBe('3.1.0');
    expect(json.info.version).toBe(CONTRACT_VERSION);
    expect(json.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(json.security).toEqual([{ bearerAuth: [] }]);
  });

  it('defines Plant, NewPlant (Plant plus a required int64 id) and Error (int32 error, string message)', () => {
    const { Plant: plant, NewPlant: newPlant, Error: error } = document.components.schemas;
    expect(plant).toMatchObject({
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string' }, tag: { type: 'string' } },
    });
    expect(newPlant).toMatchObject({
      type: 'object',
      required: ['id', 'name'],
      properties: { id: INT64, name: { type: 'string' }, tag: { type: 'string' } },
    });
    expect(error).toMatchObject({
      type: 'object',
      required: ['error', 'message'],
      properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } },
    });
  });

  it('writes the int64 bounds digit for digit', () => {
    expect(text).toContain('"minimum": -9223372036854775808,');
    expect(text).toContain('"maximum": 9223372036854775807');
    const exact = parseExactJson(text) as OpenApiDocument;
    expect(exact.components.schemas.NewPlant?.properties).toMatchObject({
      id: { minimum: -(2n ** 63n), maximum: 2n ** 63n - 1n },
    });
  });

  it('answers POST /plants with 200 "plant response" and 400 "unexpected error", as the interface says', () => {
    const create = json.paths['/plants']?.post;
    expect(create?.requestBody).toMatchObject({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPlant' } } },
    });
    expect(create?.responses['200']).toMatchObject({
      description: 'plant response',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Plant' } } },
    });
    expect(create?.responses['400']).toMatchObject({
      description: 'unexpected error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    });
  });

  it('has an operation for every route, with every status it answers and the Error schema for each failure', () => {
    for (const [operationId, route] of Object.entries(contract)) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const operation = json.paths[path]?.[route.method.toLowerCase()];
      expect(operation?.operationId, `${route.method} ${path}`).toBe(operationId);
      expect(operation?.summary).toBeTruthy();
      expect(operation?.description).toBeTruthy();
      expect(Object.keys(operation?.responses ?? {}).sort()).toEqual(Object.keys(route.responses).sort());
      for (const [status, declared] of Object.entries(route.responses)) {
        const response = operation?.responses[status];
        expect(response?.description, `${operationId} ${status}`).toBeTruthy();
        if (Number(status) >= 400) {
          expect(response?.description).toMatch(/^unexpected error/);
          expect(response?.content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Error' });
        }
        if (isAppRouteNoBody(declared)) expect(response?.content).toBeUndefined();
      }
      for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
        expect(operation?.parameters).toContainEqual(expect.objectContaining({ name, in: 'path', required: true }));
      }
    }
  });

  it('lets reading answer a list of stored plants, each with its id', () => {
    const schema = json.paths['/plants']?.get?.responses['200']?.content?.['application/json']?.schema;
    expect(schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/PlantWithId' } });
    expect(json.components.schemas.PlantWithId).toMatchObject({ required: ['id', 'name'] });
  });

  it('says where the service is: the origin that serves it, unless told otherwise', () => {
    expect(json.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const servers = [{ url: 'https://plants.example.com' }];
    expect(createOpenApiDocument({ servers }).servers).toEqual(servers);
  });

  it('declares a webhook per event type of the catalogue: a POST of its data, with the Standard Webhooks headers and its type, acknowledged by any 2xx', () => {
    expect(Object.keys(json.webhooks)).toStrictEqual([...WEBHOOK_EVENT_TYPES]);
    const bodies = { newPlant: 'NewPlant', plantDeleted: 'PlantDeleted' } satisfies Record<WebhookEventType, string>;
    for (const type of WEBHOOK_EVENT_TYPES) {
      const post = json.webhooks[type]?.post;
      expect(post?.operationId).toBe(type);
      expect(post?.requestBody).toMatchObject({
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${bodies[type]}` } } },
      });
      expect(post?.parameters?.map(({ name, in: where, required }) => [name, where, required])).toStrictEqual([
        ['webhook-id', 'header', true],
        ['webhook-timestamp', 'header', true],
        ['webhook-signature', 'header', true],
        ['webhook-event-type', 'header', true],
      ]);
      expect(post?.parameters?.at(-1)?.schema).toStrictEqual({ type: 'string', const: type });
      expect(Object.keys(post?.responses ?? {})).toStrictEqual(['2XX']);
      expect(post?.security).toStrictEqual([]);
    }
  });

  it('has the webhook management paths, the created endpoint with its secret only in the 201', () => {
    expect(Object.keys(json.paths['/webhooks'] ?? {}).sort()).toStrictEqual(['get', 'post']);
    expect(Object.keys(json.paths['/webhooks/{id}'] ?? {}).sort()).toStrictEqual(['delete', 'get', 'patch']);
    expect(Object.keys(json.paths['/webhooks/{id}/deliveries'] ?? {})).toStrictEqual(['get']);
    expect(Object.keys(json.paths['/webhooks/{id}/rotate-secret'] ?? {})).toStrictEqual(['post']);
    expect(Object.keys(json.paths['/webhooks/{id}/recover'] ?? {})).toStrictEqual(['post']);
    expect(Object.keys(json.paths['/webhooks/{id}/deliveries/{deliveryId}/retry'] ?? {})).toStrictEqual(['post']);
    expect(
      json.paths['/webhooks/{id}/rotate-secret']?.post?.responses['200']?.content?.['application/json']?.schema,
    ).toEqual({
      $ref: '#/components/schemas/RotatedWebhookSecret',
    });
    expect(Object.keys(json.paths['/webhooks/{id}/recover']?.post?.responses ?? {})).toContain('202');
    expect(Object.keys(json.paths['/webhooks/{id}/deliveries/{deliveryId}/retry']?.post?.responses ?? {})).toContain(
      '202',
    );
    expect(json.paths['/webhooks']?.post?.responses['201']?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreatedWebhookEndpoint',
    });
    expect(json.components.schemas.WebhookEndpoint?.properties).not.toHaveProperty('secret');
    expect(json.components.schemas.CreatedWebhookEndpoint?.required).toContain('secret');
  });

  it('says on the successes of every route that takes an Idempotency-Key that they may be replays, and only there', () => {
    const replayed = { $ref: '#/components/headers/Idempotent-Replayed' };
    const keyed: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const operation of Object.values(methods)) {
        const takesKey = operation.parameters?.some(({ name }) => name === 'idempotency-key') === true;
        if (takesKey) keyed.push(operation.operationId);
        for (const [status, response] of Object.entries(operation.responses)) {
          const expected = takesKey && Number(status) < 300 ? replayed : undefined;
          expect(response.headers?.['Idempotent-Replayed'], `${path} ${status}`).toStrictEqual(expected);
        }
      }
    }
    expect(keyed.sort()).toStrictEqual(['createWebhook', 'recoverWebhook', 'rotateWebhookSecret', 'testWebhook']);
    expect(document.components.headers['Idempotent-Replayed']).toMatchObject({
      schema: { type: 'string', enum: ['true'] },
    });
  });

  it('is the same document every time', () => {
    expect(stringifyOpenApiDocument(createOpenApiDocument())).toBe(text);
  });
});

describe('the examples in the document', () => {
  it.each([
    ['Plant', Plant],
    ['NewPlant', NewPlant],
    ['Error', ApiError],
    ['NewWebhookEndpoint', NewWebhookEndpoint],
    ['WebhookEndpoint', WebhookEndpoint],
    ['CreatedWebhookEndpoint', CreatedWebhookEndpoint],
    ['WebhookDelivery', WebhookDelivery],
    ['WebhookEndpointChanges', WebhookEndpointChanges],
    ['RotatedWebhookSecret', RotatedWebhookSecret],
    ['RecoverWebhookDeliveries', RecoverWebhookDeliveries],
    ['RequeuedWebhookDeliveries', RequeuedWebhookDeliveries],
  ])('of %s satisfy both the zod schema and the JSON Schema', (name, schema) => {
    const examples = COMPONENT_DOCS[name]?.examples ?? [];
    expect(examples.length).toBeGreaterThan(0);
    const validate = schemaAt(pointer('components', 'schemas', name));
    for (const example of examples) {
      expect(schema.safeParse(example).error).toBeUndefined();
      expect(validate(JSON.parse(stringifyExactJson(example))), JSON.stringify(validate.errors)).toBe(true);
    }
  });

  it('of every request and response match their schema', () => {
    let checked = 0;
    for (const [path, methods] of Object.entries(json.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const bodies: Array<[where: string[], content: Record<string, { example?: unknown }> | undefined]> = [
          [['requestBody'], operation.requestBody?.content],
          ...Object.entries(operation.responses).map(([status, response]): [string[], typeof response.content] => [
            ['responses', status],
            response.content,
          ]),
        ];
        for (const [where, content] of bodies) {
          for (const [mediaType, { example }] of Object.entries(content ?? {})) {
            if (example === undefined) continue;
            const at = pointer('paths', path, method, ...where, 'content', mediaType, 'schema');
            const validate = schemaAt(at);
            expect(validate(example), `${method} ${path} ${at}: ${JSON.stringify(validate.errors)}`).toBe(true);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(5);
  });
});

describe('the JSON Schema of NewPlant', () => {
  const validate = schemaAt(pointer('components', 'schemas', 'NewPlant'));

  it.each([
    ['a plant with a tag', '{"id":1,"name":"Fern","tag":"fern"}'],
    ['an id beyond 2^53', '{"id":9007199254740993,"name":"Fern"}'],
    ['the int64 minimum', '{"id":-9223372036854775808,"name":"Fern"}'],
    ['unknown fields, which the service ignores', '{"id":1,"name":"Fern","colour":"green"}'],
  ])('accepts %s, as the contract does', (_, body) => {
    expect(NewPlant.safeParse(parseExactJson(body)).success).toBe(true);
    expect(validate(JSON.parse(body))).toBe(true);
  });

  it.each([
    ['a missing id', '{"name":"Fern"}'],
    ['a missing name', '{"id":1}'],
    ['a fractional id', '{"id":1.5,"name":"Fern"}'],
    ['a string id', '{"id":"1","name":"Fern"}'],
    ['an empty name', '{"id":1,"name":""}'],
    ['a null tag', '{"id":1,"name":"Fern","tag":null}'],
    ['a name over 200 characters', `{"id":1,"name":"${'n'.repeat(201)}"}`],
    ['an array', '[]'],
  ])('refuses %s, as the contract does', (_, body) => {
    expect(NewPlant.safeParse(parseExactJson(body)).success).toBe(false);
    expect(validate(JSON.parse(body))).toBe(false);
  });
});

describe('the openapi module', () => {
  it('imports nothing from node: (the contract package runs in browsers)', () => {
    const dir = import.meta.dirname;
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.includes('.test'))) {
      expect(readFileSync(join(dir, file), 'utf8'), file).not.toMatch(/from ['"]node:/);
    }
  });
});

describe('length limits', () => {
  const queryTag = ListPlantsQuery.shape.tag;
  const tagParameter = json.paths['/plants']?.get?.parameters?.findIndex(({ name }) => name === 'tag');
  const webhookIdParameter = pointer('paths', '/webhooks/{id}', 'get', 'parameters', '0', 'schema');
  const fields = [
    ['NewPlant name', NewPlant.shape.name, pointer('components', 'schemas', 'NewPlant', 'properties', 'name'), 200],
    ['NewPlant tag', NewPlant.shape.tag, pointer('components', 'schemas', 'NewPlant', 'properties', 'tag'), 100],
    ['Plant name (answered)', Plant.shape.name, pointer('components', 'schemas', 'Plant', 'properties', 'name'), 200],
    ['tag query', queryTag, pointer('paths', '/plants', 'get', 'parameters', String(tagParameter), 'schema'), 100],
    [
      'webhook description',
      NewWebhookEndpoint.shape.description,
      pointer('components', 'schemas', 'NewWebhookEndpoint', 'properties', 'description'),
      500,
    ],
    ['webhook id', WebhookIdParams.shape.id, webhookIdParameter, 100],
  ] as const;

  // An emoji is one character (code point) and two UTF-16 code units: where zod's max would differ.
  it.each(fields)(
    '%s: the contract and the document take astral characters up to the limit, not one more',
    (...row) => {
      const [, schema, at, max] = row;
      const validate = schemaAt(at);
      for (const [text, fits] of [
        ['🌵'.repeat(max), true],
        [`${'🌵'.repeat(max - 1)}a`, true],
        ['🌵'.repeat(max + 1), false],
        [`${'🌵'.repeat(max)}a`, false],
      ] as const) {
        expect(schema.safeParse(text).success, `contract, ${[...text].length} characters`).toBe(fits);
        expect(validate(text), `document, ${[...text].length} characters`).toBe(fits);
      }
      const refused = schema.safeParse('🌵'.repeat(max + 1));
      expect(refused.error?.issues[0]?.message).toBe(`must be at most ${max} characters`);
    },
  );

  it('the webhook URL counts characters too', () => {
    const url = (characters: number) =>
      `https://example.com/${'🌵'.repeat(characters - 'https://example.com/'.length)}`;
    const validate = schemaAt(pointer('components', 'schemas', 'NewWebhookEndpoint', 'properties', 'url'));
    expect(NewWebhookEndpoint.shape.url.safeParse(url(WEBHOOK_URL_MAX_LENGTH)).success).toBe(true);
    expect(validate(url(WEBHOOK_URL_MAX_LENGTH))).toBe(true);
    expect(NewWebhookEndpoint.shape.url.safeParse(url(WEBHOOK_URL_MAX_LENGTH + 1)).success).toBe(false);
    expect(validate(url(WEBHOOK_URL_MAX_LENGTH + 1))).toBe(false);
  });
});
