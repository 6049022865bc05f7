/**
 * apps/api/Dockerfile, built and run by a real Docker engine (`pnpm test:container`; not part of
 * `pnpm test`, the build takes minutes). The engine is the one that answers, or dockerd started
 * here and stopped afterwards; without one the test is skipped with a message, except under CI.
 * Every container uses the host's network (no bridge is needed, none may be available).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseImages } from '#test/base-images';
import { docker, dockerBuild, dockerEngine } from '#test/docker-engine';
import { freePort } from '#test/free-port';
import { httpRequest, type NoAnswerError, postPlant } from '#test/http-request';
import { startOtlpReceiver } from '#test/otlp-receiver';
import type { TestDatabase } from '#test/postgres-server';
import { freshDatabase, postgresAdminUrl } from '#test/postgres-test-database';
import { until } from '#test/until';

const IMAGE = 'plant-store/api:local';
const ROOT = join(import.meta.dirname, '..', '..', '..');
const API_DIR = join(import.meta.dirname, '..');
const TOKEN = 'container-test-token-0123456789abcdef';
const BUILD_TIMEOUT_MS = 25 * 60_000;

const engine = await dockerEngine();
if (typeof engine === 'string') {
  if (process.env.CI) throw new Error(`${engine} CI must build and run the container image.`);
  console.warn(`${engine} The container test is skipped.`);
}

const api = JSON.parse(readFileSync(join(API_DIR, 'package.json'), 'utf8')) as {
  version: string;
  scripts: { start: string };
};
const revision = (() => {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();

const cleanups: (() => Promise<unknown>)[] = [];
const removeLater = (kind: 'container' | 'volume', name: string) =>
  cleanups.push(() => docker([kind, 'rm', '-f', name]).catch(() => undefined));

let volumeCount = 0;
const newVolume = async (): Promise<string> => {
  const name = `plant-container-test-${process.pid}-${++volumeCount}`;
  await docker(['volume', 'create', name]);
  removeLater('volume', name);
  return name;
};

type Container = { id: string; url: string; port: number };

/** `docker run -d` of the image on a free host port, with the token and the given settings. */
const runContainer = async (options: { volume?: string; env?: Record<string, string> } = {}): Promise<Container> => {
  const port = await freePort('0.0.0.0');
  const env = { PORT: String(port), PLANT_API_TOKENS: TOKEN, ...options.env };
  const id = await docker([
    'run',
    '--detach',
    '--network',
    'host',
    ...Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ...(options.volume ? ['--volume', `${options.volume}:/data`] : []),
    IMAGE,
  ]);
  removeLater('container', id);
  const url = `http://127.0.0.1:${port}`;
  await until(
    () =>
      httpRequest(`${url}/readyz`, { agent: false, timeoutMs: 2_000 }).then(
        (answer) => answer.status,
        () => 0,
      ),
    (status) => status === 200,
    60_000,
    200,
  ).catch(async (error: Error) => {
    throw new Error(`${error.message}\n${await docker(['logs', id]).catch(() => '')}`);
  });
  return { id, url, port };
};

const inspect = async <T>(target: string, format: string): Promise<T> =>
  JSON.parse(await docker(['inspect', '--format', `{{json ${format}}}`, target])) as T;

const getPlant = (container: Container, id: bigint) =>
  httpRequest(`${container.url}/plants/${id}`, { headers: { authorization: `Bearer ${TOKEN}` }, agent: false });

/** The first non-loopback IPv4 address of this machine, if it has one. */
const externalAddress = (): string | undefined =>
  Object.values(networkInterfaces())
    .flat()
    .find((address) => address?.family === 'IPv4' && !address.internal)?.address;

describe.skipIf(typeof engine === 'string')(`the container image (${IMAGE})`, () => {
  beforeAll(async () => {
    const bases = await baseImages();
    console.log(`Building ${IMAGE} on ${bases.description}`);
    await dockerBuild([
      '--network',
      'host',
      '--file',
      join(API_DIR, 'Dockerfile'),
      '--build-arg',
      `BUILD_IMAGE=${bases.build}`,
      '--build-arg',
      `RUNTIME_IMAGE=${bases.runtime}`,
      '--build-arg',
      `VERSION=${api.version}`,
      '--build-arg',
      `REVISION=${revision}`,
      '--tag',
      IMAGE,
      ROOT,
    ]);
    const bytes = await inspect<number>(IMAGE, '.Size');
    console.log(`${IMAGE}: ${(bytes / 2 ** 20).toFixed(0)} MiB`);
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    if (typeof engine !== 'string') await engine.stop();
  }, 120_000);

  it('declares what deployers rely on: non-root user, /data volume, exec-form health check, SIGTERM, labels', async () => {
    const config = await inspect<{
      User: string;
      Env: string[];
      Volumes: Record<string, unknown>;
      StopSignal: string;
      Healthcheck: { Test: string[] };
      Labels: Record<string, string>;
      Cmd: string[];
      WorkingDir: string;
    }>(IMAGE, '.Config');
    expect(config.User).toBe('node');
    expect(Object.keys(config.Volumes)).toStrictEqual(['/data']);
    expect(config.Env).toEqual(expect.arrayContaining(['HOST=0.0.0.0', 'PORT=3000', 'PLANT_DATA_DIR=/data']));
    expect(config.StopSignal).toBe('SIGTERM');
    // Exec form: no shell, and no curl, in the image.
    expect(config.Healthcheck.Test.slice(0, 2)).toStrictEqual(['CMD', 'node']);
    expect(config.Labels).toMatchObject({
      'org.opencontainers.image.version': api.version,
      'org.opencontainers.image.revision': revision,
      'org.opencontainers.image.source': expect.stringMatching(/^https:\/\//),
    });
    // The same command as `npm start` in the bundle, node itself as PID 1 so that SIGTERM reaches it.
    expect(config.Cmd.join(' ')).toBe(api.scripts.start);
    expect(config.WorkingDir).toBe('/app');
  });

  it('runs the service as a non-root user, on all interfaces, storing plants on the mounted volume', async () => {
    const volume = await newVolume();
    const container = await runContainer({ volume });
    const pid = await inspect<number>(container.id, '.State.Pid');
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    expect(uid).toBe('1000');
    expect(await docker(['exec', container.id, 'id', '-un'])).toBe('node');

    const created = await postPlant(
      container.url,
      TOKEN,
      { id: 2n ** 62n, name: 'Boxed', tag: 'image' },
      { agent: false },
    );
    expect(created.status, created.text).toBe(200);
    const read = await getPlant(container, 2n ** 62n);
    expect(read.status).toBe(200);
    expect(read.text).toBe(`{"id":${2n ** 62n},"name":"Boxed","tag":"image"}`);
    expect(await docker(['exec', container.id, 'ls', '/data'])).toMatch(/\.(db|sqlite)/);

    // HOST=0.0.0.0: reachable through the machine's own address, as a published port would be.
    const address = externalAddress();
    if (address !== undefined) {
      const outside = await httpRequest(`http://${address}:${container.port}/healthz`, { agent: false });
      expect(outside.status).toBe(200);
    }

    await until(
      () => inspect<string>(container.id, '.State.Health.Status'),
      (status) => status === 'healthy',
      90_000,
      500,
    );
  }, 180_000);

  it('traces with the OTEL_ variables alone: the spans of a create reach the OTLP endpoint, in the caller’s trace', async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const container = await runContainer({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '20',
      },
    });
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const created = await postPlant(
      container.url,
      TOKEN,
      { id: 21n, name: 'Traced' },
      { agent: false, headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } },
    );
    expect(created.status, created.text).toBe(200);
    const names = await otlp.waitFor(({ spans }) => {
      const found = new Set(
        spans()
          .filter((span) => span.traceId === traceId)
          .map((span) => span.name),
      );
      return ['POST /plants', 'request handler - /plants', 'sqlite create'].every((name) => found.has(name))
        ? found
        : undefined;
    });
    expect(names).toContain('sqlite create');
  }, 120_000);

  it('on docker stop drains and exits 0 with nothing acknowledged lost; a new container on the volume has it all', async () => {
    const volume = await newVolume();
    const first = await runContainer({ volume });
    const acknowledged: bigint[] = [];
    const failed: { id: bigint; code: string }[] = [];
    let next = 2n ** 61n;
    let stopping = false;
    const agents: Agent[] = [];
    const worker = async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(agent);
      for (;;) {
        const id = next++;
        try {
          const answer = await postPlant(first.url, TOKEN, { id, name: `Plant ${id}` }, { agent });
          if (answer.status === 200) acknowledged.push(id);
          else failed.push({ id, code: String(answer.status) });
          if (stopping && answer.headers.connection === 'close') return;
        } catch (error) {
          failed.push({ id, code: (error as NoAnswerError).code });
          return;
        }
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, worker));
    await until(
      async () => acknowledged.length,
      (count) => count >= 50,
      60_000,
    );
    stopping = true;
    // docker stop's own 10 s before SIGKILL: the image's drain and grace times fit inside it.
    await docker(['stop', first.id]);
    await workers;
    for (const agent of agents) agent.destroy();

    const state = await inspect<{ ExitCode: number; OOMKilled: boolean }>(first.id, '.State');
    expect(state).toMatchObject({ ExitCode: 0, OOMKilled: false });
    const logs = await docker(['logs', first.id]);
    expect(logs).toContain('"msg":"shutting down"');
    expect(logs).not.toContain('grace period elapsed');
    // Only requests the stopped listener refused went unanswered; every other one got its 200.
    for (const failure of failed) expect(failure.code).toMatch(/^(ECONNREFUSED|ECONNRESET|EPIPE)$/);

    const second = await runContainer({ volume });
    for (const id of acknowledged) expect((await getPlant(second, id)).status, `plant ${id}`).toBe(200);
    for (const { id } of failed) expect((await getPlant(second, id)).status, `unanswered plant ${id}`).toBe(404);
  }, 240_000);

  it.skipIf(postgresAdminUrl() === '')(
    'runs on PostgreSQL with DATABASE_URL',
    async () => {
      const database: TestDatabase = await freshDatabase('plant_container');
      cleanups.push(() => database.drop());
      const container = await runContainer({ env: { DATABASE_URL: database.url } });
      const created = await postPlant(container.url, TOKEN, { id: 42n, name: 'Pooled' }, { agent: false });
      expect(created.status, created.text).toBe(200);
      expect((await getPlant(container, 42n)).text).toBe('{"id":42,"name":"Pooled"}');
    },
    120_000,
  );
});
