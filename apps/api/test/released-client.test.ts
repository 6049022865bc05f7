import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllMains, type RunningMain, startMain } from '#test/main-process';
import { installReleasedClient, type ReleasedClient } from '#test/released-client';

/**
 * The client as last released, packed as it was published, against the server of this commit:
 * what a team that has not upgraded meets when the backend deploys.
 */

type Client = typeof import('@org/plant-client');

const TOKEN = 'released-client-token-0123456789abcdef';

let released: ReleasedClient;
let client: Client;
let server: RunningMain;
let dataDir: string;

beforeAll(async () => {
  released = installReleasedClient();
  client = (await import(released.entry)) as Client;
  dataDir = mkdtempSync(join(tmpdir(), 'plant-released-client-data-'));
  server = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
}, 300_000);

afterAll(async () => {
  await killAllMains();
  rmSync(dataDir, { recursive: true, force: true });
  released?.cleanup();
});

const plants = () => client.createPlantClient({ baseUrl: server.url, token: TOKEN });

const failureOf = async (call: Promise<unknown>) => {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(client.PlantApiError);
  return error as InstanceType<Client['PlantApiError']>;
};

describe('the released client against this server', () => {
  it('creates, reads, lists across two pages and deletes plants', async () => {
    const api = plants();
    await expect(api.createPlant({ id: 1, name: 'Monstera', tag: 'indoor' })).resolves.toStrictEqual({
      name: 'Monstera',
      tag: 'indoor',
    });
    await api.createPlant({ id: 2, name: 'Fern' });
    await api.createPlant({ id: 9007199254740993n, name: 'Pilea' });
    await expect(api.getPlant(1)).resolves.toStrictEqual({ id: 1, name: 'Monstera', tag: 'indoor' });

    const listed = [];
    for await (const plant of api.listPlants({ pageSize: 2 })) listed.push(plant);
    expect(listed).toStrictEqual([
      { id: 1, name: 'Monstera', tag: 'indoor' },
      { id: 2, name: 'Fern' },
      { id: 9007199254740993n, name: 'Pilea' },
    ]);

    await api.deletePlant(2);
    expect((await failureOf(api.getPlant(2))).status).toBe(404);
  });

  it('reads a 400, a 401 and a 404 as PlantApiError with their status and message', async () => {
    // Iterated as every version of the client allows (the released one returns an async iterator).
    const invalid = await failureOf(plants().listPlants({ pageSize: 5000 })[Symbol.asyncIterator]().next());
    expect(invalid.status).toBe(400);
    expect(invalid.message).toMatch(/\blimit\b/);

    const stranger = client.createPlantClient({ baseUrl: server.url, token: 'not-a-token-of-this-service' });
    const unauthorized = await failureOf(stranger.getPlant(1));
    expect(unauthorized.status).toBe(401);

    const missing = await failureOf(plants().getPlant(404_404));
    expect(missing.status).toBe(404);
    expect(missing.message).toBe('No plant has id 404404.');
  });
});
