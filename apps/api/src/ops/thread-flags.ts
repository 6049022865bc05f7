/**
 * The Node flags a thread of the service (the SQLite thread, the delivery thread) starts with: none
 * of the process's but the CPU profiler's. Each thread runs one known module, so inherited flags such
 * as --input-type (from `node --eval`) would break its start and --import preloads would only slow
 * it; `--cpu-prof*` passes on so that a profiled process (`pnpm --filter @org/plant-bench profile`)
 * writes a profile for every thread, not for the HTTP thread alone.
 */
export const threadFlags = (): string[] => process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'));
