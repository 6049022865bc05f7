import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { PlantStoreFake } from '@org/plant-client/testing';
import type { PlantStore, StoredPlant } from '../../src/store/plant-store.ts';

/** The node:http request as the fetch Request the fake answers. */
const toRequest = async (req: IncomingMessage, origin: string): Promise<Request> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    for (const value of values ?? []) headers.append(name, value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD' && chunks.length > 0;
  return new Request(`${origin}${req.url ?? '/'}`, {
    method,
    headers,
    ...(hasBody && { body: Buffer.concat(chunks) }),
  });
};

const answer = async (fake: PlantStoreFake, origin: string, req: IncomingMessage, res: ServerResponse) => {
  let response: Response;
  try {
    response = await fake.handle(await toRequest(req, origin));
  } catch {
    // A fault's lost answer or dropped connection: the client sees the socket close.
    res.destroy();
    return;
  }
  const body = Buffer.from(await response.arrayBuffer());
  const headers = [...response.headers].flat();
  // As Express sends it: a length rather than chunks (HEAD and 204 carry none).
  if (body.byteLength > 0) headers.push('content-length', String(body.byteLength));
  res.writeHead(response.status, headers);
  res.end(body);
};

/** The fake served over real HTTP on 127.0.0.1:<ephemeral>, for the API's HTTP suites. */
export const serveFake = async (fake: PlantStoreFake): Promise<{ server: Server; url: string }> => {
  let origin = '';
  const server = createServer((req, res) => {
    answer(fake, origin, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The fake server has no port.');
  origin = `http://127.0.0.1:${address.port}`;
  return { server, url: origin };
};

const unavailable = (what: string) => () => {
  throw new Error(`The fake target offers the suites reads of its plants only, not ${what}: go through HTTP.`);
};

/**
 * The fake's plants read through the PlantStore methods the HTTP suites use to look behind the API
 * (`get`, `list`); the rest is the API's to do, over HTTP.
 */
export const fakeStoreView = (fake: PlantStoreFake): PlantStore => {
  const stored = (): StoredPlant[] =>
    fake.plants.map(({ id, name, tag }) =>
      tag === undefined ? { id: BigInt(id), name } : { id: BigInt(id), name, tag },
    );
  return {
    get webhooks(): never {
      return unavailable('its webhook store')();
    },
    get requests(): never {
      return unavailable('its request store')();
    },
    create: unavailable('create'),
    delete: unavailable('delete'),
    get: async (id) => stored().find((plant) => plant.id === id),
    list: async ({ after, limit, tag }) =>
      stored()
        .filter((plant) => (after === undefined || plant.id > after) && (tag === undefined || plant.tag === tag))
        .slice(0, limit),
    health: async () => {},
    alive: () => true,
    close: async () => {},
  };
};
