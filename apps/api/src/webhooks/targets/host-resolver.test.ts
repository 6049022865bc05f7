import { pbkdf2 } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { startAnsweringNameServer } from '#test/answering-name-server';
import { deferCleanups } from '#test/cleanups';
import { startSilentNameServer } from '#test/silent-name-server';
import { createHostResolver, parseHostsFile, parseResolvConf, searchOrder } from './host-resolver.ts';

const defer = deferCleanups();

const silentResolver = async (options: { timeoutMs: number; maxLookups?: number }) => {
  const server = await startSilentNameServer();
  defer(server.close);
  const resolvConf = { search: [], ndots: 1 };
  return {
    server,
    resolve: createHostResolver({ ...options, servers: [server.address], hosts: new Map(), resolvConf }),
  };
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

/** A pod's resolv.conf in the namespace `ns`, as Kubernetes writes it. */
const POD_RESOLV_CONF = `nameserver 10.96.0.10
search ns.svc.cluster.local svc.cluster.local cluster.local
options ndots:5
`;

/** A resolver asking only the name server at `address`, searching as a pod in `ns` does. */
const podResolver = (address: string, timeoutMs: number) =>
  createHostResolver({ timeoutMs, servers: [address], hosts: new Map(), resolvConf: parseResolvConf(POD_RESOLV_CONF) });

describe('search domains (resolv.conf)', () => {
  it('reads the search list and ndots as glibc does', () => {
    expect(parseResolvConf(POD_RESOLV_CONF)).toStrictEqual({
      search: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      ndots: 5,
    });
    // The last of `search` and `domain` wins; ndots is 1 unless said, 15 at most.
    expect(parseResolvConf('search a.example\ndomain Corp.Example.\n')).toStrictEqual({
      search: ['corp.example'],
      ndots: 1,
    });
    expect(parseResolvConf('# search no.example\noptions rotate ndots:20 timeout:1\n')).toStrictEqual({
      search: [],
      ndots: 15,
    });
  });

  it('asks short names in the search domains first, and others as they are first', () => {
    const pod = parseResolvConf(POD_RESOLV_CONF);
    expect(searchOrder('receiver.ns', pod)).toStrictEqual([
      'receiver.ns.ns.svc.cluster.local',
      'receiver.ns.svc.cluster.local',
      'receiver.ns.cluster.local',
      'receiver.ns',
    ]);
    expect(searchOrder('a.b.c.d.e.example', pod)).toStrictEqual([
      'a.b.c.d.e.example',
      'a.b.c.d.e.example.ns.svc.cluster.local',
      'a.b.c.d.e.example.svc.cluster.local',
      'a.b.c.d.e.example.cluster.local',
    ]);
    expect(searchOrder('receiver.', pod)).toStrictEqual(['receiver']);
    expect(searchOrder('receiver', { search: [], ndots: 5 })).toStrictEqual(['receiver']);
  });

  it('resolves in-cluster short names through the search list, stopping at the first answer', async () => {
    const server = await startAnsweringNameServer(
      new Map([
        ['receiver.ns.svc.cluster.local', '10.0.0.7'],
        ['hooks.example.com', '192.0.2.8'],
      ]),
    );
    defer(server.close);
    const resolve = podResolver(server.address, 30_000);
    const asked = async (host: string) => {
      const before = server.asked.length;
      const addresses = await resolve(host);
      return { addresses, asked: [...new Set(server.asked.slice(before))] };
    };

    expect(await asked('receiver')).toStrictEqual({
      addresses: [{ address: '10.0.0.7', family: 4 }],
      asked: ['receiver.ns.svc.cluster.local'],
    });
    expect(await asked('Receiver.NS')).toStrictEqual({
      addresses: [{ address: '10.0.0.7', family: 4 }],
      asked: ['receiver.ns.ns.svc.cluster.local', 'receiver.ns.svc.cluster.local'],
    });
    expect(await asked('hooks.example.com.')).toStrictEqual({
      addresses: [{ address: '192.0.2.8', family: 4 }],
      asked: ['hooks.example.com'],
    });

    const before = server.asked.length;
    await expect(resolve('missing')).rejects.toMatchObject({ code: 'ENOTFOUND', message: 'missing: ENOTFOUND.' });
    expect([...new Set(server.asked.slice(before))]).toStrictEqual([
      'missing.ns.svc.cluster.local',
      'missing.svc.cluster.local',
      'missing.cluster.local',
      'missing',
    ]);
  });

  it('ends a search at a name server that does not answer, within the one timeout', async () => {
    const server = await startSilentNameServer();
    defer(server.close);
    const resolve = podResolver(server.address, 300);
    await expect(resolve('receiver')).rejects.toMatchObject({ name: 'HostLookupError', code: 'ETIMEOUT' });
  });
});
