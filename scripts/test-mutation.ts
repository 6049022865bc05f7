/**
 * `pnpm test:mutation [-- stryker options]`: mutation testing with StrykerJS over the contract, the
 * client, the client's fake (@org/plant-client/testing, a run of its own with the API's suites that
 * test it) and the API's pure modules, one run after the other, then the score of each and of the
 * client with its fake: the share of mutants (valid ones: those that type-check) that some test
 * detects, killed or timed out. It stops with an error when a score is under the threshold in
 * scripts/stryker-options.ts. Not run by .ci/run: it takes tens of minutes (docs/testing.md,
 * "Mutation testing").
 *
 * `pnpm test:mutation packages/client` does only that package's runs. Other arguments go to every
 * `stryker run`, e.g. `-- --incremental` to test only the mutants whose code or covering tests
 * changed since the last run: quicker, but only a first look (see scripts/stryker-options.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATION_SCORE_THRESHOLD } from './stryker-options.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
/** Each Stryker run: the package it runs in, its script, and where its JSON report lands. */
const RUNS = [
  { name: 'packages/contract', pkg: 'packages/contract', script: 'test:mutation', report: 'reports/mutation' },
  { name: 'packages/client', pkg: 'packages/client', script: 'test:mutation', report: 'reports/mutation' },
  {
    name: 'packages/client fake',
    pkg: 'packages/client',
    script: 'test:mutation:fake',
    report: 'reports/mutation-fake',
  },
  { name: 'apps/api', pkg: 'apps/api', script: 'test:mutation', report: 'reports/mutation' },
] as const;

type Report = { files: Record<string, { mutants: { status: string }[] }> };
type Score = { name: string; detected: number; survived: number; noCoverage: number; invalid: number; seconds: number };

const scoreOf = ({ name, pkg, report }: (typeof RUNS)[number], seconds: number): Score => {
  const { files } = JSON.parse(readFileSync(join(ROOT, pkg, report, 'mutation.json'), 'utf8')) as Report;
  const score: Score = { name, detected: 0, survived: 0, noCoverage: 0, invalid: 0, seconds };
  for (const { mutants } of Object.values(files)) {
    for (const { status } of mutants) {
      if (status === 'Killed' || status === 'Timeout') score.detected += 1;
      else if (status === 'Survived') score.survived += 1;
      else if (status === 'NoCoverage') score.noCoverage += 1;
      // A mutant that does not type-check or load is no program at all; `Ignored` ones are disabled.
      else if (status === 'CompileError' || status === 'RuntimeError') score.invalid += 1;
    }
  }
  return score;
};

/** Two runs' figures as one: the client with its fake, as the client's users get them. */
const sum = (name: string, a: Score, b: Score): Score => ({
  name,
  detected: a.detected + b.detected,
  survived: a.survived + b.survived,
  noCoverage: a.noCoverage + b.noCoverage,
  invalid: a.invalid + b.invalid,
  seconds: a.seconds + b.seconds,
});

const percent = ({ detected, survived, noCoverage }: Score): number =>
  (100 * detected) / (detected + survived + noCoverage);

// `pnpm test:mutation -- --incremental` hands the `--` on; Stryker would refuse it as an argument.
const args = process.argv.slice(2).filter((arg) => arg !== '--');
// A package's path picks its runs (`pnpm test:mutation packages/client`: the client and its fake).
const picked = args.filter((arg) => RUNS.some(({ pkg }) => pkg === arg));
const strykerArgs = args.filter((arg) => !picked.includes(arg));
const runs = picked.length === 0 ? RUNS : RUNS.filter(({ pkg }) => picked.includes(pkg));

const scores: Score[] = [];
for (const run of runs) {
  const started = performance.now();
  const stryker = spawnSync('pnpm', ['run', '--silent', run.script, ...strykerArgs], {
    cwd: join(ROOT, run.pkg),
    stdio: 'inherit',
  });
  if (stryker.status !== 0) process.exit(stryker.status ?? 1);
  scores.push(scoreOf(run, (performance.now() - started) / 1000));
}
const client = scores.find(({ name }) => name === 'packages/client');
const fake = scores.find(({ name }) => name === 'packages/client fake');
if (client !== undefined && fake !== undefined) scores.push(sum('packages/client with its fake', client, fake));

console.log('\nMutation score per run (detected / (detected + survived + no coverage)):');
console.table(
  scores.map((score) => ({
    run: score.name,
    'score %': Number(percent(score).toFixed(2)),
    detected: score.detected,
    survived: score.survived,
    'no coverage': score.noCoverage,
    'type errors (not counted)': score.invalid,
    'time (s)': Math.round(score.seconds),
  })),
);
const under = scores.filter((score) => percent(score) < MUTATION_SCORE_THRESHOLD);
if (under.length > 0) {
  console.error(`Under ${MUTATION_SCORE_THRESHOLD}%: ${under.map((score) => score.name).join(', ')}.`);
  process.exit(1);
}
