import { type SpawnOptions, spawn } from 'node:child_process';

export type ChildResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/**
 * Runs a command to its end and collects its output; kills it and rejects (with its stderr) when it
 * runs longer than `timeoutMs`, so no test waits on a stuck child.
 */
export const runToEnd = (
  command: string,
  args: readonly string[],
  { timeoutMs, ...options }: Omit<SpawnOptions, 'stdio'> & { timeoutMs: number },
): Promise<ChildResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not finish within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
