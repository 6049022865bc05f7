/**
 * `pnpm test:stress`: the whole suite (`pnpm test --force`: no result replayed from turbo's cache)
 * RUNS times in a row while a CPU load keeps two cores busy (stress-ng when installed, otherwise a
 * busy loop on two worker threads), to catch the tests that fail on a busy machine with nothing
 * wrong. Stops at the first failing run, prints which tests failed, and exits non-zero. It takes
 * five times the suite, so it is not part of .ci/run.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';

const RUNS = 5;
const BUSY_CORES = 2;

type Load = { describe: string; stop(): Promise<void> };

const startLoad = (): Load => {
  if (spawnSync('stress-ng', ['--version'], { stdio: 'ignore' }).status === 0) {
    const stress: ChildProcess = spawn('stress-ng', ['--cpu', String(BUSY_CORES), '--quiet'], { stdio: 'ignore' });
    return {
      describe: `stress-ng --cpu ${BUSY_CORES}`,
      stop: () =>
        new Promise((resolve) => {
          if (stress.exitCode !== null || stress.signalCode !== null) resolve();
          else stress.once('exit', () => resolve()).kill('SIGTERM');
        }),
    };
  }
  const loops = Array.from({ length: BUSY_CORES }, () => new Worker('for (;;);', { eval: true }));
  return {
    describe: `a busy loop on ${BUSY_CORES} worker threads (stress-ng is not installed)`,
    stop: async () => {
      await Promise.all(loops.map((loop) => loop.terminate()));
    },
  };
};

/** The failing test files and tests that vitest and turbo name in a run's output. */
const failuresIn = (output: string): string[] => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are control characters.
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const named = plain
    .split('\n')
    // Without turbo's prefix (`@org/plant-api:test: `).
    .map((line) => line.replace(/^@[\w/-]+:[\w:-]+: /, '').trim())
    .filter((line) => /^(FAIL|×) |^Failed:|ERR_PNPM|Unhandled/.test(line));
  return [...new Set(named)];
};

const runSuite = (): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const suite = spawn('pnpm', ['test', '--force'], { stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [suite.stdout, suite.stderr]) {
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        process.stdout.write(chunk);
      });
    }
    suite.once('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString('utf8') }),
    );
  });

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

const load = startLoad();
process.once('SIGINT', () => {
  void load.stop().then(() => process.exit(130));
});
console.log(`test:stress: ${RUNS} runs of the whole suite under ${load.describe}`);
const started = performance.now();
let failed = false;
try {
  for (let run = 1; run <= RUNS; run++) {
    const runStarted = performance.now();
    const { code, output } = await runSuite();
    const took = minutes(performance.now() - runStarted);
    if (code !== 0) {
      console.error(`\ntest:stress: run ${run} of ${RUNS} failed (exit ${code}, ${took}). Failing:`);
      for (const line of failuresIn(output)) console.error(`  ${line}`);
      failed = true;
      break;
    }
    console.log(`\ntest:stress: run ${run} of ${RUNS} passed (${took})`);
  }
} finally {
  await load.stop();
}
console.log(`test:stress: ${failed ? 'failed' : `${RUNS} runs passed`} in ${minutes(performance.now() - started)}`);
process.exitCode = failed ? 1 : 0;
