import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutput } from '#test/child-output';
import { SOURCE_NODE_FLAGS } from '#test/source-node-flags';

const MAIN = pathToFileURL(join(import.meta.dirname, '../src/main.ts')).href;
const dataDir = mkdtempSync(join(tmpdir(), 'plant-startup-modules-'));

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the service at start-up', () => {
  // An ESM import of node:http loads Node's bundled undici for its WebSocket export: 25–40 ms of
  // every cold start and megabytes of heap, for a client the service never uses. The modules that
  // need node:http take it from process.getBuiltinModule instead (http/node-http.ts).
  it("listens without loading Node's bundled undici", async () => {
    // main.ts's top-level await ends once the service listens.
    const script = `await import(${JSON.stringify(MAIN)});
      const undici = process.moduleLoadList.filter((name) => name.includes('undici'));
      console.log('loaded: ' + JSON.stringify(undici));
      process.exit(0);`;
    const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, '--input-type=module', '-e', script], {
      cwd: tmpdir(),
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'warn',
        PLANT_DATA_DIR: dataDir,
        PLANT_API_TOKENS: 'startup-modules-test-token-0123456789',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { stdout, stderr } = collectOutput(child);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, stderr()).toBe(0);
    expect(stdout()).toContain('loaded: []');
  });
});
