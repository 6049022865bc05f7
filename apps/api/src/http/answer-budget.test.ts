import { EventEmitter } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { LIST_LIMIT_MAX } from '@org/plant-contract';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { httpRequest } from '#test/http-request';
import { until } from '#test/until';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { TEAM_SCOPES } from '../auth/token-entries.ts';
import { hashToken } from '../auth/token-hash.ts';
import { LARGEST_PAGE_BYTES, PAGE_BYTES } from '../plants/plants-router.ts';
import type { ListOptions, StoredPlant } from '../store/plant-store.ts';
import { plantBytes } from '../store/row-bytes.ts';
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
    eventTypes: [],
    payloadFormat: 'plain' as const,
    enabled: true,
    createdAt: new Date(0),
    owner: 'operator',
  };
  const store = fakeStore({
    list: () => new Promise((resolve) => gates.push(() => resolve(plants))),
    webhooks: {
      ...fakeStore().webhooks,
      listEndpoints: async () => [endpoint],
      listDeliveries: async () => [],
      getEndpoint: async (id: string) => (id === endpoint.id ? endpoint : undefined),
    },
  });
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

    // The same principal asks again: its share (never less than the largest page) holds no second one.
    const shed = await httpRequest(`${url}/plants?limit=1000`, { headers: auth });
    expect([shed.status, shed.headers['retry-after'], shed.json()]).toStrictEqual([
      503,
      '1',
      {
        error: 503,
        message:
          'This client holds its share of large answers in flight (PLANT_MAX_ANSWER_BYTES, shared by the clients holding answers); read the answers it has asked for, then retry after the Retry-After delay.',
      },
    ]);
    // Endpoints are a list too, counted in the same budget for the bytes they hold; an empty list holds none.
    const endpoints = await httpRequest(`${url}/webhooks`, { headers: auth });
    expect([endpoints.status, endpoints.headers['retry-after']]).toStrictEqual([503, '1']);
    expect((await httpRequest(`${url}/webhooks/ep_1/deliveries`, { headers: auth })).json()).toStrictEqual([]);
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

  /** Pages as large as the service makes them: 256 KiB of JSON, about 330 bytes a plant. */
  const maximalPages = async ({ limit, maxBytes = Number.POSITIVE_INFINITY }: ListOptions) => {
    const plants: StoredPlant[] = [];
    for (let bytes = 0; plants.length < limit && bytes < maxBytes; ) {
      const plant = { id: BigInt(plants.length + 1), name: 'n'.repeat(200), tag: 't'.repeat(100) };
      plants.push(plant);
      bytes += plantBytes(plant);
    }
    return plants;
  };
  /** The plants of a maximal page: up to the one that brings it to PAGE_BYTES. */
  const maximalPage = async () => (await maximalPages({ limit: LIST_LIMIT_MAX, maxBytes: PAGE_BYTES })).length;

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

  it('serves a fifth principal while four hold more unread maximal pages than the budget', async () => {
    const tokens = [1, 2, 3, 4, 5].map((n) => `answer-budget-principal-${n}-0123456789abcdef`);
    const app = createApp({
      store: fakeStore({ list: maximalPages }),
      authenticate: staticTokens(
        tokens.map((token, n) => ({ hash: hashToken(token), principal: { name: `p${n}`, scopes: TEAM_SCOPES } })),
      ),
      // Four times four of the largest pages: four principals could hold it all, were each given a quarter.
      maxAnswerBytes: 16 * LARGEST_PAGE_BYTES,
    });
    server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server?.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const holders = tokens.slice(0, 4);
    for (const token of holders) await stopsReading(url, token, 40);
    // Each holder is refused once the holders fill what is not kept back for newcomers.
    for (const token of holders) {
      await until(
        () => httpRequest(`${url}/plants?limit=1000`, { headers: { authorization: `Bearer ${token}` } }),
        (answer) => answer.status === 503,
      );
    }
    const fifth = await httpRequest(`${url}/plants?limit=1000`, {
      headers: { authorization: `Bearer ${tokens[4]}` },
    });
    expect(fifth.status).toBe(200);
    expect(fifth.json()).toHaveLength(await maximalPage());
  });

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
    expect(other.json()).toHaveLength(await maximalPage());
    // The greedy token was refused for its share, not for the whole budget.
    expect([greedy.headers['retry-after'], greedy.json()]).toStrictEqual([
      '1',
      {
        error: 503,
        message:
          'This client holds its share of large answers in flight (PLANT_MAX_ANSWER_BYTES, shared by the clients holding answers); read the answers it has asked for, then retry after the Retry-After delay.',
      },
    ]);
  });
});

describe('answerBudget', () => {
  const response = () => Object.assign(new EventEmitter(), { closed: false }) as unknown as ServerResponse;

  it('shares three quarters among the clients holding answers, never less than the largest page each', () => {
    const budget = answerBudget(1000, 100);
    const first = response();
    budget.reserve(first, 400, 'a');
    // Alone, a client may hold three quarters.
    budget.reserve(response(), 350, 'a');
    expect(() => budget.reserve(response(), 1, 'a')).toThrow(expect.objectContaining({ status: 503 }));
    // A newcomer's first answer takes the quarter kept back.
    budget.reserve(response(), 200, 'b');
    first.emit('close');
    // Two clients hold answers now: a's share is half of 750.
    expect(() => budget.reserve(response(), 26, 'a')).toThrow(expect.objectContaining({ status: 503 }));
    budget.reserve(response(), 25, 'a');
    // b holds 200 and may grow to its share, 375, while the three quarters have room.
    budget.reserve(response(), 175, 'b');
    expect(() => budget.reserve(response(), 1, 'b')).toThrow(expect.objectContaining({ status: 503 }));
  });

  it('refuses a client holding nothing only when the whole budget cannot hold its answer', () => {
    const budget = answerBudget(1000, 100);
    for (const client of ['a', 'b', 'c', 'd']) budget.reserve(response(), 180, client);
    // The holders have 720 of their 750: 31 more would pass it, whoever asks.
    expect(() => budget.reserve(response(), 31, 'a')).toThrow(expect.objectContaining({ status: 503 }));
    budget.reserve(response(), 250, 'e');
    expect(() => budget.reserve(response(), 31, 'f')).toThrow(expect.objectContaining({ status: 503 }));
    budget.reserve(response(), 30, 'f');
  });
});
