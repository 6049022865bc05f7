import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU counters (USER_HZ). */
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses). */
const statFields = (pid: number): string[] | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
};

/**
 * CPU seconds (user + system) a process used so far, all its threads included; with `reaped`, also
 * what its children that exited and were waited for used (cutime, cstime).
 */
export const processCpuSeconds = (pid: number, { reaped = false } = {}): number => {
  const fields = statFields(pid);
  // Gone meanwhile: a child's time is then in its parent's reaped counters.
  if (fields === undefined) return 0;
  // After the command name: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const ticks = [11, 12, ...(reaped ? [13, 14] : [])].reduce((sum, index) => sum + Number(fields[index]), 0);
  return ticks / TICKS_PER_SECOND;
};

/**
 * CPU seconds of a process tree's root and its direct children, living and reaped: for a PostgreSQL
 * postmaster, every backend and auxiliary process of the cluster, including backends that ended.
 */
export const treeCpuSeconds = (root: number): number =>
  childPids(root).reduce((total, pid) => total + processCpuSeconds(pid), processCpuSeconds(root, { reaped: true }));

/** The direct children of a process, from /proc. */
export const childPids = (root: number): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && statFields(Number(entry))?.[1] === String(root))
    .map(Number);
