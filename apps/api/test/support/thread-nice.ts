import { readFileSync } from 'node:fs';

/**
 * A thread's nice value, read from its stat file (`/proc/thread-self/stat`,
 * `/proc/self/task/<id>/stat`): field 19, the 17th after the command's closing parenthesis.
 */
export const niceOf = (statFile: string): number => {
  const stat = readFileSync(statFile, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
};
