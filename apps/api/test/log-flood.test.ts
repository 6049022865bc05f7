import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killAllMains, logLines, MAIN_TEST_TOKEN, startMain } from '#test/main-process';

const dataDirs: string[] = [];
afterEach(async () => {
  await killAllMains();
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const droppedLines = async (ops: string): Promise<number | undefined> => {
  const text = await (await fetch(`${ops}/metrics`)).text();
  const match = text.match(/^plant_log_lines_dropped_total (\d+)$/m);
  return match ? Number(match[1]) : undefined;
};

describe('a flood of failed requests while stdout lags', () => {
  it('drops the log lines past PLANT_LOG_BUFFER_BYTES and counts them, and keeps serving', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plant-log-flood-test-'));
    dataDirs.push(dataDir);
    const server = await startMain({
      PLANT_DATA_DIR: dataDir,
      PLANT_API_TOKENS: MAIN_TEST_TOKEN,
      PLANT_METRICS_PORT: '0',
      PLANT_LOG_BUFFER_BYTES: '65536',
    });
    await server.waitForStdout(/"msg":"metrics and probes listening"/);
    const ops = logLines(server.stdout()).find((line) => line.msg === 'metrics and probes listening')?.url as string;
    expect(await droppedLines(ops)).toBe(0);

    // Nobody reads the service's stdout any more: once the pipe is full, lines wait in its buffer.
    server.child.stdout.pause();
    const longPath = `/plants/${'x'.repeat(8_000)}`;
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`${server.url}${longPath}`)));
      for (const answer of answers) {
        expect(answer.status).toBeGreaterThanOrEqual(400);
        await answer.arrayBuffer();
      }
    }
    expect(await droppedLines(ops)).toBeGreaterThan(0);
    const created = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MAIN_TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 1, name: 'Fern' }),
    });
    expect(created.status).toBe(200);
    server.child.stdout.resume();
  }, 60_000);
});
