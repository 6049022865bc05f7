import { parseArgs } from 'node:util';

export type ServerKey = 'a' | 'b' | 'c' | 'd' | 'e' | 'g';

export const SERVER_KEYS: readonly ServerKey[] = ['a', 'b', 'c', 'd', 'e', 'g'];

export type BenchOptions = {
  smoke: boolean;
  rounds: number;
  /** Seconds of load per server per round. */
  duration: number;
  /** Seconds of load per server before the first round, not measured (JIT, caches, pools). */
  warmup: number;
  connections: number;
  threads: number;
  coldStarts: number;
  only: ServerKey[];
  clientBatches: number;
  clientBatchSize: number;
  /** Where latest.json and latest.svg go; undefined: bench/results, or a temp dir when smoke. */
  out: string | undefined;
  /** Rewrite the figures in bench/README.md (full runs only). */
  readme: boolean;
  /** Connection counts of the connections scenario (ours and the peer); empty: skip it. */
  connectionLevels: number[];
};

export const USAGE = `pnpm bench [options]

  --smoke              tiny durations: proves the harness works (also BENCH_SMOKE=1); writes to a temp dir
  --rounds N           rounds of a b c d e g, alternating to cancel drift (default 3)
  --duration S         seconds of load per server per round (default 8)
  --warmup S           unmeasured seconds of load per server before round 1 (default 3)
  --connections N      concurrent connections (default 50)
  --threads N          wrk threads (default 1: one core for the load, one for the server)
  --cold-starts N      cold starts per server, median reported (default 5)
  --only a,b,c,d,e,g   run only these servers ((d) and (g) need PostgreSQL)
  --client-batches N   alternating batches per mode in the client micro-benchmark (default 30)
  --client-batch-size N  requests per batch (default 200)
  --out DIR            write latest.json and latest.svg there (default bench/results)
  --no-readme          leave bench/README.md alone (as smoke runs and runs with --only do)
  --connection-levels L  the connections scenario's levels (default 50,1000,4000,10000; smoke 50,1000)
  --no-connections     skip the connections scenario
`;

const positive = (name: string, text: string | undefined, fallback: number, min = 1): number => {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min} (got ${text}).`);
  return value;
};

export const parseOptions = (argv: string[], env: NodeJS.ProcessEnv): BenchOptions | 'help' => {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      threads: { type: 'string' },
      'cold-starts': { type: 'string' },
      only: { type: 'string' },
      'client-batches': { type: 'string' },
      'client-batch-size': { type: 'string' },
      out: { type: 'string' },
      'no-readme': { type: 'boolean' },
      'connection-levels': { type: 'string' },
      'no-connections': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const smoke = values.smoke === true || (env.BENCH_SMOKE !== undefined && env.BENCH_SMOKE !== '0');
  const only = values.only === undefined ? [...SERVER_KEYS] : values.only.split(',').map((key) => key.trim());
  for (const key of only) {
    if (!(SERVER_KEYS as readonly string[]).includes(key))
      throw new Error(`--only takes a comma-separated list of ${SERVER_KEYS.join(', ')}.`);
  }
  return {
    smoke,
    rounds: positive('rounds', values.rounds, smoke ? 1 : 3),
    duration: positive('duration', values.duration, smoke ? 1 : 8),
    warmup: positive('warmup', values.warmup, smoke ? 0 : 3, 0),
    connections: positive('connections', values.connections, 50),
    threads: positive('threads', values.threads, 1),
    coldStarts: positive('cold-starts', values['cold-starts'], smoke ? 1 : 5),
    only: only as ServerKey[],
    clientBatches: positive('client-batches', values['client-batches'], smoke ? 1 : 30),
    clientBatchSize: positive('client-batch-size', values['client-batch-size'], smoke ? 20 : 200),
    out: values.out,
    readme: !smoke && values.only === undefined && values['no-readme'] !== true,
    connectionLevels:
      values['no-connections'] === true
        ? []
        : (values['connection-levels'] ?? (smoke ? '50,1000' : '50,1000,4000,10000'))
            .split(',')
            .map((level) => positive('connection-levels', level.trim(), 0)),
  };
};
