/**
 * Client overhead, run as its own process by main.ts: createPlant through @org/plant-client
 * against a hand-written fetch doing the same request (same headers, same body, status check,
 * JSON parse) to the same server, in alternating batches (ABBA) so that drift cancels.
 * Input: one JSON argument (ClientBenchInput); output: one JSON line (ClientBenchResult).
 */
import { createPlantClient } from '@org/plant-client';
import { median } from './stats.ts';

export type ClientBenchInput = {
  url: string;
  token: string;
  /** Requests in flight at once. */
  concurrency: number;
  batches: number;
  batchSize: number;
  firstId: number;
};

export type ClientBenchResult = {
  concurrency: number;
  requests: number;
  /** Median batch time per request, in microseconds. */
  clientUs: number;
  fetchUs: number;
  /** Median of per-pair ratios of client to fetch batch time: 1.05 means the client is 5% slower. */
  ratio: number;
};

type Send = (plant: { id: number; name: string; tag: string }) => Promise<unknown>;

const run = async ({ url, token, concurrency, batches, batchSize, firstId }: ClientBenchInput) => {
  const client = createPlantClient({ baseUrl: url, token });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const viaClient: Send = (plant) => client.createPlant(plant);
  const viaFetch: Send = async (plant) => {
    const response = await fetch(`${url}/plants`, { method: 'POST', headers, body: JSON.stringify(plant) });
    const body: unknown = await response.json();
    if (response.status !== 200) throw new Error(`POST /plants answered ${response.status}`);
    return body;
  };

  let nextId = firstId;
  const batch = async (send: Send): Promise<number> => {
    let remaining = batchSize;
    const started = performance.now();
    const worker = async () => {
      while (remaining > 0) {
        remaining -= 1;
        nextId += 1;
        await send({ id: nextId, name: 'Monstera deliciosa', tag: 'indoor' });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return ((performance.now() - started) * 1000) / batchSize;
  };

  // Unmeasured: JIT, connection pool, lazy loading of undici and zod paths.
  await batch(viaClient);
  await batch(viaFetch);
  const times = { client: [] as number[], fetch: [] as number[] };
  for (let index = 0; index < batches; index += 1) {
    const clientFirst = index % 2 === 0;
    for (const mode of clientFirst ? (['client', 'fetch'] as const) : (['fetch', 'client'] as const)) {
      times[mode].push(await batch(mode === 'client' ? viaClient : viaFetch));
    }
  }
  const clientUs = median(times.client);
  const fetchUs = median(times.fetch);
  // Each client batch against the fetch batch next to it in time: drift on a shared machine moves
  // both alike, so the median of per-pair ratios is steadier than a ratio of medians.
  const ratio = median(times.client.map((us, index) => us / (times.fetch[index] as number)));
  const result: ClientBenchResult = {
    concurrency,
    requests: 2 * batches * batchSize,
    clientUs,
    fetchUs,
    ratio,
  };
  console.log(JSON.stringify(result));
};

await run(JSON.parse(process.argv[2] ?? '{}') as ClientBenchInput);
