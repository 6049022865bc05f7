import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the calling thread's scheduling priority by `steps` nice levels (at most to 19), and
 * answers its nice value then; undefined where threads have no id of their own to set it by (not
 * Linux). On Linux the nice value belongs to each thread, not to the process: `setpriority` with a
 * thread's id changes that thread alone (setpriority(2), "Notes"). Relative, since lowering is
 * always allowed and raising is not: a process started under `nice` keeps its offset.
 */
export const lowerThreadPriority = (steps: number): number | undefined => {
  let threadId: number;
  try {
    // /proc/thread-self links to <pid>/task/<tid>.
    threadId = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return undefined;
  }
  if (!Number.isInteger(threadId)) return undefined;
  const nice = Math.min(19, getPriority(threadId) + steps);
  setPriority(threadId, nice);
  return nice;
};
