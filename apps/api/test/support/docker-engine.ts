import { execFile, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

export type DockerEngine = {
  /** Stops the daemon when this helper started it; leaves a daemon that was already running alone. */
  stop(): Promise<void>;
};

/** `docker <args>`: its standard output, or a rejection carrying its standard error. */
export const docker = async (args: string[], options: { timeoutMs?: number } = {}): Promise<string> => {
  const { stdout } = await promisify(execFile)('docker', args, {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: options.timeoutMs ?? 0,
  });
  return stdout.trim();
};

const onPathAll = (command: string): string[] =>
  (process.env.PATH ?? '').split(delimiter).flatMap((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return [join(dir, command)];
    } catch {
      return [];
    }
  });

const succeeds = (command: string, args: string[]) =>
  promisify(execFile)(command, args, { encoding: 'utf8' }).then(
    ({ stdout }) => stdout.trim(),
    () => undefined,
  );

/**
 * The docker command that builds with BuildKit (every instruction that only sets metadata is free
 * there, where the legacy builder commits a layer, a full copy under vfs, for each), and whether
 * it does: one with the buildx plugin, or a client from before 23.0, which has BuildKit built in;
 * otherwise the first docker on PATH, with the legacy builder (the Dockerfiles stay compatible).
 */
const builder = async (): Promise<{ command: string; buildKit: boolean }> => {
  const clients = [...new Set(onPathAll('docker'))];
  for (const command of clients) {
    if ((await succeeds(command, ['buildx', 'version'])) !== undefined) return { command, buildKit: true };
    const version = await succeeds(command, ['version', '--format', '{{.Client.Version}}']);
    if (Number(version?.split('.')[0]) < 23) return { command, buildKit: true };
  }
  return { command: clients[0] ?? 'docker', buildKit: false };
};

/** `docker build <args>`, with BuildKit where a client offers it. */
export const dockerBuild = async (args: string[]): Promise<string> => {
  const { command, buildKit } = await builder();
  const { stdout } = await promisify(execFile)(command, ['build', ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, DOCKER_BUILDKIT: buildKit ? '1' : '0' },
  });
  return stdout.trim();
};

const answers = () =>
  docker(['version', '--format', '{{.Server.Version}}'], { timeoutMs: 10_000 }).then(
    () => true,
    () => false,
  );

const onPath = (command: string): boolean => onPathAll(command).length > 0;

/**
 * A Docker engine for the container test: the one that answers, or `dockerd` started here and
 * stopped by `stop()`; a sentence saying why there is none otherwise. The daemon started here uses
 * the vfs storage driver (no overlay mounts needed) and no bridge network or iptables rules: every
 * container of the test runs with `--network host`. Its data root is Docker's usual one, so images
 * (the stand-in bases, the built image) outlive it.
 */
export const dockerEngine = async (): Promise<DockerEngine | string> => {
  if (!onPath('docker')) return 'No docker command (apt-get install docker.io).';
  if (await answers()) return { stop: async () => {} };
  if (!onPath('dockerd'))
    return 'No Docker daemon answers and there is no dockerd to start (apt-get install docker.io).';
  if (process.getuid?.() !== 0) return 'No Docker daemon answers, and only root can start one.';

  const scratch = mkdtempSync(join(tmpdir(), 'plant-dockerd-'));
  const log = join(scratch, 'dockerd.log');
  const output = openSync(log, 'w');
  const daemon = spawn('dockerd', ['--storage-driver=vfs', '--bridge=none', '--iptables=false', '--ip6tables=false'], {
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const exited = new Promise<void>((resolve) => daemon.once('exit', () => resolve()));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answers())) {
    if (daemon.exitCode !== null || Date.now() > deadline) {
      daemon.kill('SIGKILL');
      const lastLines = readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n');
      rmSync(scratch, { recursive: true, force: true });
      throw new Error(`dockerd did not start:\n${lastLines}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    stop: async () => {
      if (daemon.exitCode === null) {
        daemon.kill('SIGTERM');
        const timer = setTimeout(() => daemon.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(scratch, { recursive: true, force: true });
    },
  };
};
