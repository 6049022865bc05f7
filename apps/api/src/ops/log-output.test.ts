import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '#test/manual-clock';
import { until } from '#test/until';
import { createLogOutput } from './log-output.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const fileOutput = (maxBufferBytes: number) => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-log-output-'));
  dirs.push(dir);
  const path = join(dir, 'out.log');
  return { path, output: createLogOutput({ fd: openSync(path, 'w'), maxBufferBytes }) };
};

describe('createLogOutput', () => {
  it('holds at most maxBufferBytes of lines waiting to be written, and counts the lines it drops', async () => {
    const { path, output } = fileOutput(16_384);
    const line = `${'x'.repeat(1_023)}\n`;
    // In one turn of the event loop: the first write is in flight, the rest wait in the buffer.
    for (let index = 0; index < 100; index++) output.stream.write(line);
    // 16 lines fill 16 KiB (the one being written counts until it is written).
    expect(output.dropped()).toBe(84);
    await until(
      async () => readFileSync(path, 'utf8'),
      (text) => text.length === 16 * line.length,
    );
    // Room again once written.
    output.stream.write(line);
    expect(output.dropped()).toBe(84);
  });

  it('warns every interval in which lines were dropped, with how many', async () => {
    const { output } = fileOutput(16_384);
    const warnings: { droppedLines: number; droppedSinceStart: number; msg: string }[] = [];
    const logger = pino(
      new Writable({
        write(chunk, _encoding, done) {
          warnings.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    const clock = manualClock();
    const stop = output.reportDrops(logger, { reportEveryMs: 10_000, clock });
    for (let index = 0; index < 40; index++) output.stream.write(`${'y'.repeat(1_023)}\n`);
    const first = output.dropped();
    expect(first).toBeGreaterThan(0);
    await clock.advance(10_000);
    await clock.advance(10_000);
    expect(warnings).toMatchObject([
      { droppedLines: first, droppedSinceStart: first, msg: 'log lines dropped: the log output could not keep up' },
    ]);
    stop();
  });
});
