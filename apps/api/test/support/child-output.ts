import type { Readable } from 'node:stream';

/** Everything a child process has written so far, read at any moment (its streams as UTF-8). */
export type ChildOutput = { stdout(): string; stderr(): string };

export const collectOutput = (child: { stdout: Readable; stderr: Readable }): ChildOutput => {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
};
