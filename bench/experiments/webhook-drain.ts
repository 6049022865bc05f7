/**
 * How fast a backlog of deliveries drains to a healthy receiver, alone and beside a receiver that
 * accepts connections and never answers (issue 19: beside it, at least 0.8× the rate alone). Each
 * round starts our API on a fresh data directory, subscribes the receivers (the hanging one first),
 * creates `--plants` plants while the healthy receiver holds every request, then lets it answer 204
 * and times the backlog until its last delivery. Printed, never gated.
 *
 *   pnpm --filter @org/plant-bench webhook-drain [--plants 5000] [--rounds 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startHeldReceiver } from '../src/held-receiver.ts';
import { post, startServer } from '../src/server-process.ts';
import { median } from '../src/stats.ts';
import { BENCH_HEADERS, createTargets, sendCreates } from '../src/targets.ts';

const { values } = parseArgs({
  options: {
    plants: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
  },
});
const PLANTS = Number(values.plants);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 10;
/** Longer than a round: the hanging receiver holds its slots throughout, the held requests survive. */
const TIMEOUT_MS = 120_000;

/** Creates PLANTS plants, IN_FLIGHT at a time. */
const createPlants = (url: string): Promise<void> => sendCreates(url, 1, PLANTS, IN_FLIGHT);

const subscribe = async (api: string, url: string) => {
  const answer = await post(`${api}/webhooks`, BENCH_HEADERS, JSON.stringify({ url }));
  if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status} ${answer.body}`);
};

/** Deliveries per second to the healthy receiver, from its opening to its last delivery. */
const drainRate = async (withHanging: boolean): Promise<number> => {
  const target = createTargets(undefined).find((candidate) => candidate.key === 'c');
  if (!target) throw new Error('The API target (c) is missing.');
  const instance = await target.instance();
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-drain-'));
  const env = {
    ...instance.command.env,
    PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    PLANT_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  };
  const server = await startServer({ ...instance.command, env }, join(dir, 'server.log'));
  const hanging = await startHeldReceiver({ hang: true });
  const healthy = await startHeldReceiver();
  try {
    if (withHanging) await subscribe(server.url, hanging.url());
    await subscribe(server.url, healthy.url());
    await createPlants(server.url);
    // The worker has its first attempts out, held by the receiver: the rest is the backlog.
    await healthy.until(1);
    const start = performance.now();
    healthy.open();
    await healthy.until(PLANTS);
    return PLANTS / ((performance.now() - start) / 1000);
  } finally {
    await server.stop();
    await Promise.all([hanging.close(), healthy.close()]);
    await instance.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
};

const alone: number[] = [];
const beside: number[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  alone.push(await drainRate(false));
  beside.push(await drainRate(true));
  console.log(
    `round ${round}: ${Math.round(alone.at(-1) ?? 0)}/s alone, ${Math.round(beside.at(-1) ?? 0)}/s beside a hanging receiver`,
  );
}
const ratio = median(beside.map((rate, index) => rate / (alone[index] ?? Number.NaN)));
console.log(
  `backlog of ${PLANTS} to a healthy receiver: ${Math.round(median(alone))} deliveries/s alone, ${Math.round(median(beside))}/s beside a hanging one: ${ratio.toFixed(2)}x (target >= 0.8x: ${ratio >= 0.8 ? 'met' : 'missed'})`,
);
