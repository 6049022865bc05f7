/**
 * `pnpm test:mutation [-- stryker options]`: mutation testing with StrykerJS over the contract, the
 * client and the API's pure modules, one package after the other, then the score of each: the share
 * of mutants (valid ones: those that type-check) that some test detects, killed or timed out. The
 * run stops with an error when a package scores under the threshold in scripts/stryker-options.ts.
 * Not run by .ci/run: it takes tens of minutes (README, "Mutation testing").
 *
 * Extra arguments go to every `stryker run`, e.g. `-- --incremental` to test only the mutants whose
 * code or covering tests changed since the last run: quicker, but only a first look (see
 * scripts/stryker-options.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATION_SCORE_THRESHOLD } from './stryker-options.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = ['packages/contract', 'packages/client', 'apps/api'];

type Report = { files: Record<string, { mutants: { status: string }[] }> };
type Score = { pkg: string; detected: number; survived: number; noCoverage: number; invalid: number; seconds: number };

const scoreOf = (pkg: string, seconds: number): Score => {
  const report = JSON.parse(readFileSync(join(ROOT, pkg, 'reports/mutation/mutation.json'), 'utf8')) as Report;
  const score: Score = { pkg, detected: 0, survived: 0, noCoverage: 0, invalid: 0, seconds };
  for (const { mutants } of Object.values(report.files)) {
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

const percent = ({ detected, survived, noCoverage }: Score): number =>
  (100 * detected) / (detected + survived + noCoverage);

// `pnpm test:mutation -- --incremental` hands the `--` on; Stryker would refuse it as an argument.
const strykerArgs = process.argv.slice(2).filter((arg, index) => !(index === 0 && arg === '--'));

const scores: Score[] = [];
for (const pkg of PACKAGES) {
  const started = performance.now();
  const run = spawnSync('pnpm', ['run', '--silent', 'test:mutation', ...strykerArgs], {
    cwd: join(ROOT, pkg),
    stdio: 'inherit',
  });
  if (run.status !== 0) process.exit(run.status ?? 1);
  scores.push(scoreOf(pkg, (performance.now() - started) / 1000));
}

console.log('\nMutation score per package (detected / (detected + survived + no coverage)):');
console.table(
  scores.map((score) => ({
    package: score.pkg,
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
  console.error(`Under ${MUTATION_SCORE_THRESHOLD}%: ${under.map((score) => score.pkg).join(', ')}.`);
  process.exit(1);
}
