import { EventEmitter } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { TEAM_SCOPES } from '../auth/token-entries.ts';
import { hashToken } from '../auth/token-hash.ts';
import type { ListOptions, StoredPlant } from '../store/plant-store.ts';
import { fakeStore } from '../testing/fake-store.ts';
import { httpRequest } from '../testing/http-request.ts';
import { until } from '../testing/until.ts';
import { answerBudget } from './answer-budget.ts';

const TOKEN = 'answer-budget-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** An app whose store holds every list at a gate until the test opens it. */
const start = async (maxAnswerBytes: number) => {
  const gates: (() => void)[] = [];
  const plants: StoredPlant[] = [{ id: 1n, name: 'Monstera' }];
  // ep_1 exists, the operator's: its deliveries are listed (and counted) rather than answered 404.
  const endpoint = {
    id: 'ep_1',
    url: 'https://hooks.example.com/a',
    eventTypes: ['newPlant' as const],
    payloadFormat: 'plain' as const,
    enabled: true,
    createdAt: new Date(),
    owner: 'operator',
  };
  const store = fakeStore({
    list: () => new Promise((resolve) => gates.push(() => resolve(plants))),
  });
  const webhooks = {
    ...store.webhooks,
    getEndpoint: async (id: string) => (id === endpoint.id ? endpoint : undefined),
  };
  Object.assign(store, { webhooks });
  const app = createApp({ store, authenticate: staticTokens([{ hash: hashToken(TOKEN) }]), maxAnswerBytes });
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, gates };
};

describe('the budget of answers in flight (PLANT_MAX_ANSWER_BYTES)', () => {
  it('answers 503 with Retry-After to a list past the budget, and serves lists again once answers are sent', async () => {
    const { url, gates } = await start(1);
    // The first list always fits; it holds the budget until its answer is sent.
    const first = httpRequest(`${url}/plants?limit=1000`, { headers: auth });
    await until(
      async () => gates.length,
      (count) => count === 1,
    );

    const shed = await httpRequest(`${url}/plants`, { headers: auth });
    expect([shed.status, shed.headers['retry-after'], shed.json()]).toStrictEqual([
      503,
      '1',
      {
        error: 503,
        message:
          'The service is at its limit of large answers in flight (PLANT_MAX_ANSWER_BYTES); retry after the Retry-After delay, or with a smaller limit.',
      },
    ]);
    // Deliveries and endpoints are lists too, counted in the same budget.
    for (const path of ['/webhooks/ep_1/deliveries', '/webhooks']) {
      const list = await httpRequest(`${url}${path}`, { headers: auth });
      expect([list.status, list.headers['retry-after']]).toStrictEqual([503, '1']);
    }
    // Creates are not lists: the budget does not hold them.
    const created = await httpRequest(`${url}/plants`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ id: 2, name: 'Fern' }),
    });
    expect(created.status).toBe(200);

    gates.shift()?.();
    expect((await first).json()).toStrictEqual([{ id: 1, name: 'Monstera' }]);
    const again = httpRequest(`${url}/plants`, { headers: auth });
    await until(
      async () => gates.length,
      (count) => count === 1,
    );
    gates.shift()?.();
    expect((await again).status).toBe(200);
  });
});

describe("a client's share of the answer budget", () => {
  const GREEDY = 'answer-budget-greedy-0123456789abcdef';
  const OTHER = 'answer-budget-other-0123456789abcdef';

  /** Pages as large as the service makes them: 256 KiB of names and tags, 300 bytes a plant. */
  const maximalPages = async ({ limit, maxBytes = Number.POSITIVE_INFINITY }: ListOptions) => {
    const plants: StoredPlant[] = [];
    for (let bytes = 0; plants.length < limit && bytes < maxBytes; bytes += 300) {
      plants.push({ id: BigInt(plants.length + 1), name: 'n'.repeat(200), tag: 't'.repeat(100) });
    }
    return plants;
  };

  /**
   * A client that asks for `pages` maximal pages on one connection and reads none of them. Loopback
   * sockets take megabytes before a writer waits, which a reader across a network would not grant:
   * the documentation's script (1.7 MB, counted by no budget) is asked for first, enough times to
   * fill them, so that the pages stay in the service as a slow reader's would.
   */
  const stopsReading = async (url: string, token: string, pages: number) => {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    socket.pause();
    await new Promise((resolve) => socket.once('connect', resolve));
    const ask = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`;
    socket.write(
      ask('/docs/swagger-ui-bundle.js').repeat(12) +
        ask('/plants?limit=1000', `Authorization: Bearer ${token}\r\n`).repeat(pages),
    );
  };

  it('keeps serving lists to a second token while one token holds many unread maximal pages', async () => {
    const app = createApp({
      store: fakeStore({ list: maximalPages }),
      authenticate: staticTokens([
        { hash: hashToken(GREEDY), principal: { name: 'greedy', scopes: TEAM_SCOPES } },
        { hash: hashToken(OTHER), principal: { name: 'other', scopes: TEAM_SCOPES } },
      ]),
    });
    server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    // More pages than the whole budget (16 MiB) holds: 64 of 258 KiB at most.
    await stopsReading(url, GREEDY, 80);
    const greedy = await until(
      () => httpRequest(`${url}/plants?limit=1000`, { headers: { authorization: `Bearer ${GREEDY}` } }),
      (answer) => answer.status === 503,
    );
    const other = await httpRequest(`${url}/plants?limit=1000`, { headers: { authorization: `Bearer ${OTHER}` } });
    expect(other.status).toBe(200);
    expect(other.json()).toHaveLength(874);
    // The greedy token was refused for its share, not for the whole budget.
    expect([greedy.headers['retry-after'], greedy.json()]).toStrictEqual([
      '1',
      {
        error: 503,
        message:
          'This client holds its share of large answers in flight (a quarter of PLANT_MAX_ANSWER_BYTES); read the answers it has asked for, then retry after the Retry-After delay.',
      },
    ]);
  });
});

describe('answerBudget', () => {
  const response = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;

  it('holds a client to a quarter of the budget or the largest page, whichever is more, until its answers close', () => {
    const budget = answerBudget(1000, 300);
    const first = response();
    budget.reserve(first, 200, 'a');
    budget.reserve(response(), 100, 'a');
    expect(() => budget.reserve(response(), 1, 'a')).toThrow(expect.objectContaining({ status: 503 }));
    // Another client still has the rest.
    budget.reserve(response(), 300, 'b');
    first.emit('close');
    expect(() => budget.reserve(response(), 200, 'a')).not.toThrow();
    expect(() => budget.reserve(response(), 1, 'a')).toThrow(expect.objectContaining({ status: 503 }));
  });
});
