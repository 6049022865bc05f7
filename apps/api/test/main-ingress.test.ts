import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { killAllMains, logLines, MAIN_TEST_TOKEN, startMain } from '#test/main-process';

const dataDirs: string[] = [];
const makeDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-ingress-test-'));
  dataDirs.push(dir);
  return dir;
};

afterEach(async () => {
  await killAllMains();
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('main behind an ingress', () => {
  it('serves metrics and probes on PLANT_METRICS_PORT, not on the API port, until it stops', async () => {
    const server = await startMain({
      PLANT_DATA_DIR: makeDataDir(),
      PLANT_API_TOKENS: MAIN_TEST_TOKEN,
      PLANT_METRICS_PORT: '0',
      PLANT_SHUTDOWN_DRAIN_MS: '1500',
    });
    await server.waitForStdout(/"msg":"metrics and probes listening"/);
    const ops = logLines(server.stdout()).find((line) => line.msg === 'metrics and probes listening')?.url as string;
    expect(ops).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(ops).not.toBe(server.url);

    await expectError(await fetch(`${server.url}/metrics`), 404);
    const scrape = await fetch(`${ops}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toMatch(/^process_cpu_seconds_total /m);
    expect((await fetch(`${ops}/healthz`)).status).toBe(200);
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);

    server.child.kill('SIGTERM');
    // Draining: the probe on the metrics port says so.
    await expect.poll(async () => (await fetch(`${ops}/readyz`)).status, { timeout: 1_000, interval: 50 }).toBe(503);
    expect(await server.exited()).toStrictEqual({ code: 0, signal: null });
    await expect(fetch(`${ops}/healthz`)).rejects.toThrow();
  }, 20_000);

  it('serves no /metrics on the API port unless PLANT_METRICS_ON_API_PORT=true', async () => {
    const closed = await startMain({ PLANT_DATA_DIR: makeDataDir(), PLANT_API_TOKENS: MAIN_TEST_TOKEN });
    await expectError(await fetch(`${closed.url}/metrics`), 404);
    expect((await fetch(`${closed.url}/readyz`)).status).toBe(200);
    const open = await startMain({
      PLANT_DATA_DIR: makeDataDir(),
      PLANT_API_TOKENS: MAIN_TEST_TOKEN,
      PLANT_METRICS_ON_API_PORT: 'true',
    });
    const scrape = await fetch(`${open.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toMatch(/^process_cpu_seconds_total /m);
  }, 20_000);

  it('enforces JWT scopes unless told not to, and then warns at start', async () => {
    const jwt = {
      PLANT_DATA_DIR: makeDataDir(),
      // Plain http is fine for a loopback identity provider; nothing listens there, nor needs to.
      PLANT_API_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
      PLANT_API_JWT_ISSUER: 'https://issuer.test/',
      PLANT_API_JWT_AUDIENCE: 'plant-store',
    };
    const warning = /PLANT_API_JWT_REQUIRE_SCOPES=false/;
    const enforced = await startMain(jwt);
    expect(enforced.stdout()).not.toMatch(warning);
    const open = await startMain({ ...jwt, PLANT_DATA_DIR: makeDataDir(), PLANT_API_JWT_REQUIRE_SCOPES: 'false' });
    const line = logLines(open.stdout()).find((entry) => warning.test(String(entry.msg)));
    expect(line?.level).toBe(40);
  }, 20_000);
});
