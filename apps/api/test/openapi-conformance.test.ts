import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  checkedResponseCount,
  conformingFetch,
  pathTemplateOf,
  type ResponseToCheck,
  responseProblems,
  takeViolations,
} from '#test/openapi-conformance';
import { startTestServer, TEST_TOKEN } from '#test/test-server';

const JSON_TYPE = 'application/json; charset=utf-8';
const errorBody = (status: number) => JSON.stringify({ error: status, message: 'Something failed.' });

const created: ResponseToCheck = {
  method: 'POST',
  pathTemplate: '/plants',
  status: 200,
  contentType: JSON_TYPE,
  body: '{"name":"Fern","tag":"fern"}',
  headers: new Headers({ 'x-request-id': 'abc' }),
};

describe('pathTemplateOf', () => {
  it('finds the document path of a request path', () => {
    expect(pathTemplateOf('/plants')).toBe('/plants');
    expect(pathTemplateOf('/plants/9007199254740993')).toBe('/plants/{id}');
    expect(pathTemplateOf('/plants/1/leaves')).toBeUndefined();
    expect(pathTemplateOf('/openapi.json')).toBeUndefined();
  });
});

describe('responseProblems', () => {
  it('accepts a response the document describes', () => {
    expect(responseProblems(created)).toEqual([]);
    expect(responseProblems({ ...created, status: 400, body: errorBody(400) })).toEqual([]);
  });

  it('accepts int64 ids beyond 2^53 and at the bounds', () => {
    const body = '{"id":9223372036854775807,"name":"Max"}';
    expect(responseProblems({ ...created, method: 'GET', pathTemplate: '/plants/{id}', body })).toEqual([]);
    const list = '[{"id":-9223372036854775808,"name":"Min"},{"id":9007199254740993,"name":"Big"}]';
    expect(responseProblems({ ...created, method: 'GET', body: list })).toEqual([]);
  });

  it('names a body that does not match the schema', () => {
    expect(responseProblems({ ...created, body: '{"title":"Fern"}' })).toEqual([
      "POST /plants → 200: body must have required property 'name'",
    ]);
    expect(responseProblems({ ...created, body: '{"name":"Fern","tag":null}' })).toEqual([
      'POST /plants → 200: body/tag must be string',
    ]);
    expect(responseProblems({ ...created, status: 409, body: '{"error":"409","message":"x"}' })).toEqual([
      'POST /plants → 409: body/error must be integer',
    ]);
  });

  it('names a body that is not JSON, or not declared JSON', () => {
    expect(responseProblems({ ...created, body: '<html>' })).toEqual([
      'POST /plants → 200: the body is not JSON: "<html>"',
    ]);
    expect(responseProblems({ ...created, contentType: 'text/html' })).toEqual([
      'POST /plants → 200: Content-Type text/html is not one of application/json',
    ]);
  });

  it('names a status the operation does not declare', () => {
    expect(responseProblems({ ...created, status: 201 })).toEqual([
      'POST /plants → 201: status 201 is not declared in the document',
    ]);
  });

  it('names a missing required header and a header that does not match its schema', () => {
    const unauthorized = { ...created, status: 401, body: errorBody(401) };
    expect(responseProblems(unauthorized)).toEqual([
      'POST /plants → 401: the required header WWW-Authenticate is missing',
    ]);
    const headers = new Headers({ 'www-authenticate': 'Bearer realm="plant-store"' });
    expect(responseProblems({ ...unauthorized, headers })).toEqual([]);
    const unavailable = { ...created, status: 503, body: errorBody(503) };
    expect(responseProblems({ ...unavailable, headers: new Headers({ 'retry-after': 'soon' }) })).toEqual([
      'POST /plants → 503: header Retry-After: "soon" does not match its schema',
    ]);
  });

  it('checks Idempotent-Replayed on the success of a route that takes an Idempotency-Key', () => {
    const rotated = {
      ...created,
      pathTemplate: '/webhooks/{id}/rotate-secret',
      body: '{"secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}',
    };
    expect(responseProblems({ ...rotated, headers: new Headers({ 'idempotent-replayed': 'true' }) })).toEqual([]);
    expect(responseProblems({ ...rotated, headers: new Headers({ 'idempotent-replayed': 'yes' }) })).toEqual([
      'POST /webhooks/{id}/rotate-secret → 200: header Idempotent-Replayed: "yes" does not match its schema',
    ]);
  });

  it('wants no body where the document declares none', () => {
    const deleted = { ...created, method: 'DELETE', pathTemplate: '/plants/{id}', status: 204, contentType: null };
    expect(responseProblems({ ...deleted, body: '' })).toEqual([]);
    expect(responseProblems({ ...deleted, body: '{}' })).toEqual([
      'DELETE /plants/{id} → 204: the document declares no body, got "{}"',
    ]);
  });

  it('checks HEAD by the GET operation, without a body', () => {
    expect(responseProblems({ ...created, method: 'HEAD', body: '' })).toEqual([]);
    expect(responseProblems({ ...created, method: 'HEAD', status: 409, body: '' })).toEqual([
      'HEAD /plants → 409: status 409 is not declared in the document',
    ]);
  });

  it('wants an Error for paths and methods outside the document, and never a success', () => {
    const unknown = { ...created, method: 'GET', pathTemplate: undefined, status: 404, body: errorBody(404) };
    expect(responseProblems(unknown)).toEqual([]);
    expect(responseProblems({ ...unknown, method: 'PUT', pathTemplate: '/plants', status: 405 })).toEqual([]);
    expect(responseProblems({ ...unknown, body: 'Not Found', contentType: 'text/plain' })).toEqual([
      'GET (path not in the document) → 404: Content-Type text/plain is not JSON',
    ]);
    expect(responseProblems({ ...unknown, status: 200 })).toEqual([
      'GET (path not in the document) → 200: a success for an operation the document does not have',
    ]);
  });
});

describe('conformingFetch', () => {
  it('checks a response of the real service and hands it on unread', async () => {
    const server = await startTestServer();
    try {
      const before = checkedResponseCount();
      const response = await conformingFetch(`${server.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
        body: '{"id":9007199254740993,"name":"Fern"}',
      });
      expect(checkedResponseCount()).toBe(before + 1);
      expect(await response.json()).toEqual({ name: 'Fern' });
    } finally {
      await server.cleanup();
    }
  });

  it('rejects a response that departs from the document, and records it for the afterEach check', async () => {
    const drifted = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"title":"Fern"}');
    });
    await new Promise<void>((resolve) => drifted.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = drifted.address() as AddressInfo;
      await expect(conformingFetch(`http://127.0.0.1:${port}/plants`, { method: 'POST' })).rejects.toThrow(
        "POST /plants → 200: body must have required property 'name'",
      );
      expect(takeViolations()).toEqual(["POST /plants → 200: body must have required property 'name'"]);
    } finally {
      await new Promise((resolve) => drifted.close(resolve));
    }
  });
});
