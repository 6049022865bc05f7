import { pbkdf2 } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deferCleanups } from '../testing/cleanups.ts';
import { startSilentNameServer } from '../testing/silent-name-server.ts';
import { createHostResolver, parseHostsFile } from './host-resolver.ts';

const defer = deferCleanups();

const silentResolver = async (options: { timeoutMs: number; maxLookups?: number }) => {
  const server = await startSilentNameServer();
  defer(server.close);
  return { server, resolve: createHostResolver({ ...options, servers: [server.address], hosts: new Map() }) };
};

describe('createHostResolver', () => {
  it('fails a lookup the name server never answers within the timeout, saying so', async () => {
    const { server, resolve } = await silentResolver({ timeoutMs: 300 });
    await expect(resolve('hang.example.test')).rejects.toMatchObject({
      name: 'HostLookupError',
      code: 'ETIMEOUT',
      message: 'hang.example.test: no answer from the name server within 300 ms.',
    });
    expect(server.queries).toBeGreaterThan(0);
  });

  it('leaves the thread pool free while lookups wait on a silent name server', async () => {
    const { resolve } = await silentResolver({ timeoutMs: 30_000 });
    // More lookups than libuv has threads: with getaddrinfo these would hold all four.
    let settled = 0;
    const lookups = Array.from({ length: 8 }, (_, index) =>
      resolve(`hang-${index}.example.test`).finally(() => {
        settled += 1;
      }),
    );
    for (const lookup of lookups) lookup.catch(() => {});
    await Promise.all([
      promisify(pbkdf2)('secret', 'salt', 1_000, 32, 'sha256'),
      promisify(gzip)(Buffer.alloc(1024)),
      readFile(import.meta.filename),
    ]);
    expect(settled).toBe(0);
  });

  it('shares one query between lookups of one host, and refuses lookups beyond the bound', async () => {
    const { resolve } = await silentResolver({ timeoutMs: 30_000, maxLookups: 2 });
    const first = resolve('one.example.test');
    expect(resolve('ONE.example.test.')).toBe(first);
    const second = resolve('two.example.test');
    for (const lookup of [first, second]) lookup.catch(() => {});
    await expect(resolve('three.example.test')).rejects.toMatchObject({
      code: 'EBUSY',
      message: 'three.example.test: 2 other lookups are already waiting for an answer.',
    });
  });

  it('answers IP literals, hosts-file names, localhost and .invalid without asking the name server', async () => {
    const server = await startSilentNameServer();
    defer(server.close);
    const hosts = parseHostsFile('# comment\n10.1.2.3 Receiver receiver.cluster # inline\n::1 v6.local\nnot-an-ip x\n');
    expect([...hosts.keys()]).toStrictEqual(['receiver', 'receiver.cluster', 'v6.local']);
    const resolve = createHostResolver({ timeoutMs: 30_000, servers: [server.address], hosts });
    expect(await resolve('192.0.2.1')).toStrictEqual([{ address: '192.0.2.1', family: 4 }]);
    expect(await resolve('2001:db8::1')).toStrictEqual([{ address: '2001:db8::1', family: 6 }]);
    expect(await resolve('receiver')).toStrictEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolve('Receiver.Cluster')).toStrictEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await resolve('v6.local')).toStrictEqual([{ address: '::1', family: 6 }]);
    expect(await resolve('hooks.localhost')).toStrictEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    await expect(resolve('nowhere.invalid')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(server.queries).toBe(0);
  });
});
