import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { type OpenApiDocumentJson, type ResponseChecker, responseChecker } from '#test/openapi-conformance';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';
import { answerClientErrors } from './client-errors.ts';
import { createHttpServer } from './http-server.ts';

/**
 * Answers that come from below the routes (Node's HTTP parser, the middleware stack) on every
 * operation of the document the service serves: each must be a status that operation documents,
 * with the body the document gives it.
 */

const TOKEN = 'documented-statuses-token-0123456789';

let server: Server;
let port: number;
let document: OpenApiDocumentJson & { paths: Record<string, Record<string, unknown>> };
let checker: ResponseChecker;

beforeAll(async () => {
  const app = createApp({ store: fakeStore(), authenticate: staticTokens([{ hash: hashToken(TOKEN) }]) });
  // Short header timeout: a request whose headers stall gets its 408 within a second.
  server = createHttpServer(app, { ...CONFIG_DEFAULTS.server, headersTimeoutMs: 300, requestTimeoutMs: 600 });
  answerClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  document = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as typeof document;
  checker = responseChecker(document);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Answer = { status: number; contentType: string | null; body: string; headers: Headers };

/** Writes `request` on a raw socket (clients refuse to send some of these) and reads the answer to the end. */
const exchange = (request: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.once('error', reject);
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...fields] = head.split('\r\n');
      const headers = new Headers();
      for (const field of fields) {
        const colon = field.indexOf(':');
        headers.append(field.slice(0, colon), field.slice(colon + 1).trim());
      }
      resolve({ status: Number(statusLine.split(' ')[1]), contentType: headers.get('content-type'), body, headers });
    });
  });

const examplePath = (template: string) => template.replace(/\{[^}]+\}/g, '1');

type Fault = readonly [
  fault: string,
  /** The status every operation answers; undefined where it depends on the operation (a body where none is read). */
  status: number | undefined,
  request: (method: string, path: string) => string,
];

const withBody =
  (contentType: string, body: string, more = '') =>
  (method: string, path: string) =>
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\n` +
    `Content-Type: ${contentType}\r\n${more}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const FAULTS: readonly Fault[] = [
  [
    'headers over 16 KiB',
    431,
    (method, path) =>
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nX-Padding: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
  ],
  [
    'a query string over 64 KB',
    431,
    (method, path) =>
      `${method} ${path}?q=${'a'.repeat(65 * 1024)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
  ],
  // The headers never end: Node answers when the header timeout passes.
  ['headers that do not arrive in time', 408, (method, path) => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n`],
  [
    'a malformed header',
    400,
    (method, path) => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nBad Header: x\r\n\r\n`,
  ],
  ['no token', 401, (method, path) => `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`],
  [
    'two bearer tokens',
    400,
    (method, path) =>
      `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer a b\r\n\r\n`,
  ],
  [
    'a token in the query string',
    400,
    (method, path) =>
      `${method} ${path}?access_token=x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
  ],
  ['a body that is not JSON', undefined, withBody('text/plain', 'plain')],
  ['a body over 16 KiB', undefined, withBody('application/json', `{"pad":"${'x'.repeat(17 * 1024)}"}`)],
  [
    'a Content-Encoding the service does not read',
    undefined,
    withBody('application/json', '{}', 'Content-Encoding: br\r\n'),
  ],
  ['malformed JSON', undefined, withBody('application/json', '{"id":')],
];

describe('every operation of the served document', () => {
  it('documents the answers of the HTTP parser and the middleware, with their bodies', async () => {
    const operations = Object.entries(document.paths).flatMap(([template, methods]) =>
      Object.keys(methods).map((method) => ({ template, method: method.toUpperCase() })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(13);
    const problems: string[] = [];
    await Promise.all(
      operations.flatMap(({ template, method }) =>
        FAULTS.map(async ([fault, expected, request]) => {
          const answer = await exchange(request(method, examplePath(template)));
          if (expected !== undefined && answer.status !== expected) {
            problems.push(`${method} ${template}, ${fault}: answered ${answer.status}, not ${expected}`);
          }
          for (const problem of checker.responseProblems({ method, pathTemplate: template, ...answer })) {
            problems.push(`${fault}: ${problem}`);
          }
        }),
      ),
    );
    expect(problems).toStrictEqual([]);
  });
});
