import { describe, expect, it } from 'vitest';
import { createHostResolver } from './host-resolver.ts';
import { guardedLookup, LookupUnavailableError, nonPublicCause, refuseTarget } from './target-address.ts';

describe('nonPublicCause', () => {
  it.each([
    ['127.0.0.1', /loopback/],
    ['127.255.1.2', /loopback/],
    ['10.0.0.1', /private/],
    ['172.16.5.4', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['169.254.169.254', /link-local/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['100.127.255.254', /carrier-grade NAT/],
    ['0.0.0.0', /unspecified/],
    ['255.255.255.255', /broadcast/],
    ['224.0.0.1', /multicast/],
    ['::1', /loopback/],
    ['::', /unspecified/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['fc00::1', /unique-local/],
    ['fd12:3456:789a::1', /unique-local/],
    ['::ffff:127.0.0.1', /loopback address \(IPv4-mapped\)/],
    ['::ffff:7f00:1', /loopback address \(IPv4-mapped\)/],
    ['::ffff:10.1.2.3', /private address \(IPv4-mapped\)/],
    ['::ffff:a9fe:a9fe', /link-local address \(IPv4-mapped\)/],
    ['64:ff9b::192.168.0.1', /private address \(NAT64\)/],
    ['64:ff9b::7f00:1', /loopback address \(NAT64\)/],
    ['64:ff9b:1::8.8.8.8', /local-use NAT64/],
    ['64:ff9b:1:ab::1', /local-use NAT64/],
    ['2002:7f00:1::', /loopback address \(6to4\)/],
    ['2002:c0a8:101::1', /private address \(6to4\)/],
    ['2002:a9fe:a9fe::', /link-local address \(6to4\)/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
    ['2001::1', /Teredo/],
    ['::ffff:0:10.0.0.1', /private address \(IPv4-translated\)/],
    ['::127.0.0.1', /loopback address/],
    ['::7f00:1', /loopback address \(IPv4-compatible\)/],
    ['100::1', /discard-only/],
    ['2001:db8::1', /documentation/],
    ['3fff::1', /documentation/],
    ['2001:2::1', /benchmarking/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['192.0.2.1', /documentation/],
    ['198.51.100.7', /documentation/],
    ['203.0.113.9', /documentation/],
    ['198.18.0.1', /reserved/],
    ['240.0.0.1', /reserved/],
    ['192.0.0.8', /reserved/],
    ['192.88.99.1', /reserved/],
    ['not-an-ip', /not an IP address/],
  ])('judges %s non-public', (address, cause) => {
    expect(nonPublicCause(address)).toMatch(cause);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '100.63.255.255',
    '100.128.0.0',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::8.8.8.8',
    '2002:808:808::1',
    '2a00:1450:4001:81b::200e',
  ])('judges %s public', (address) => {
    expect(nonPublicCause(address)).toBeUndefined();
  });
});

describe('refuseTarget', () => {
  const publicDns = { allowPrivate: false, resolve: async () => ['93.184.215.14'] };

  it('accepts an https URL whose host has only public addresses', async () => {
    expect(await refuseTarget('https://receiver.example.com/hooks?x=1', publicDns)).toBeUndefined();
  });

  it.each([
    ['http://receiver.example.com/', /must use https \(got http\)/],
    ['ftp://receiver.example.com/', /must use https/],
    ['https://user:pw@receiver.example.com/', /user name or password/],
    ['https://127.0.0.1/', /127\.0\.0\.1 is a loopback address/],
    ['https://[::1]:8443/', /::1 is a loopback address/],
    ['https://[::ffff:127.0.0.1]/', /loopback address \(IPv4-mapped\)/],
    ['https://10.1.2.3/', /private address/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://100.64.1.1/', /carrier-grade NAT/],
    ['https://[fd00::1]/', /unique-local/],
    ['https://0.0.0.0/', /unspecified/],
    ['https://localhost:8443/', /loopback name/],
    ['https://2130706433/', /loopback/],
    ['https://user@receiver.example.com/', /^url must not contain a user name or password\.$/],
    ['https://:pw@receiver.example.com/', /^url must not contain a user name or password\.$/],
    ['https://hooks.localhost/', /^url must reach a public address: hooks\.localhost is a loopback name\.$/],
    [
      'https://[2001:20::1]/',
      /^url must reach a public address: 2001:20::1 is a special-purpose address \(orchid2\)\.$/,
    ],
    ['receiver.example.com/hooks', /^url must be an absolute URL\.$/],
  ])('refuses %s', async (url, cause) => {
    expect(await refuseTarget(url, publicDns)).toMatch(cause);
  });

  it('refuses a name that resolves to any non-public address', async () => {
    const rebinding = { allowPrivate: false, resolve: async () => ['93.184.215.14', '192.168.0.10'] };
    const refusal = await refuseTarget('https://sneaky.example.com/', rebinding);
    expect(refusal).toBe('url must reach a public address: sneaky.example.com resolves to a private address.');
  });

  it('says which rule refused a resolved name, never the addresses it resolved to', async () => {
    for (const [address, cause] of [
      ['64:ff9b:1::a00:1', 'a local-use NAT64 address'],
      ['2002:a00:1::', 'a private address (6to4)'],
      ['2001:0:4136:e378::1', 'a Teredo tunnel address'],
      ['100::7', 'a discard-only address'],
      ['::ffff:169.254.169.254', 'a link-local address (IPv4-mapped)'],
    ] as const) {
      const refusal = await refuseTarget('https://inside.example.com/', {
        allowPrivate: false,
        resolve: async () => [address],
      });
      expect(refusal).toBe(`url must reach a public address: inside.example.com resolves to ${cause}.`);
    }
  });

  it('refuses a name that does not resolve', async () => {
    const failing = {
      allowPrivate: false,
      resolve: async () => {
        throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
      },
    };
    expect(await refuseTarget('https://nowhere.example/', failing)).toMatch(/cannot be resolved \(ENOTFOUND\)/);
  });

  it('judges nothing when the lookup fails for a passing reason (time-out, busy, no code): it throws', async () => {
    for (const code of ['ETIMEOUT', 'EBUSY', 'ESERVFAIL', undefined]) {
      const failing = {
        allowPrivate: false,
        resolve: async () => {
          throw Object.assign(new Error('nope'), { code });
        },
      };
      await expect(refuseTarget('https://nowhere.example/', failing)).rejects.toThrow(LookupUnavailableError);
    }
  });

  it('refuses a name the system resolver cannot resolve, with its code', async () => {
    expect(await refuseTarget('https://nowhere.invalid/', { allowPrivate: false })).toBe(
      'url host nowhere.invalid cannot be resolved (ENOTFOUND).',
    );
  });

  it('accepts a public IPv6 address, which carries no IPv4 address to judge', async () => {
    expect(await refuseTarget('https://[2606:4700:4700::1111]/', publicDns)).toBeUndefined();
  });

  it('refuses what only ipaddr.js reads as an IP address', () => {
    expect(nonPublicCause('127.1')).toBe('not an IP address');
    expect(nonPublicCause('receiver.example.com')).toBe('not an IP address');
  });

  it('with PLANT_WEBHOOKS_ALLOW_PRIVATE allows private addresses and plain http', async () => {
    expect(await refuseTarget('http://127.0.0.1:8080/hook', { allowPrivate: true })).toBeUndefined();
    expect(await refuseTarget('https://10.0.0.1/', { allowPrivate: true })).toBeUndefined();
    expect(await refuseTarget('ftp://10.0.0.1/', { allowPrivate: true })).toMatch(/https/);
  });
});

describe('guardedLookup (connect time)', () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: unknown; family: number | undefined }>((resolve) => {
      guardedLookup(createHostResolver(), { allowPrivate: false })(host, { all }, (error, address, family) =>
        resolve({ error, address, family }),
      );
    });

  // An IP literal resolves without asking any name server, so the public path needs no network.
  it('passes a public address on, as one address with its family or as the list', async () => {
    expect(await lookup('93.184.215.14', false)).toStrictEqual({ error: null, address: '93.184.215.14', family: 4 });
    expect(await lookup('2606:4700:4700::1111', false)).toStrictEqual({
      error: null,
      address: '2606:4700:4700::1111',
      family: 6,
    });
    expect(await lookup('93.184.215.14', true)).toStrictEqual({
      error: null,
      address: [{ address: '93.184.215.14', family: 4 }],
      family: undefined,
    });
  });

  // .invalid never resolves (RFC 6761): the resolver answers at once, with or without a network.
  it('passes a failed resolution on with its code, in both lookup forms', async () => {
    expect(await lookup('nowhere.invalid', false)).toMatchObject({ error: { code: 'ENOTFOUND' }, address: '' });
    expect(await lookup('nowhere.invalid', true)).toMatchObject({ error: { code: 'ENOTFOUND' }, address: [] });
  });

  it('refuses a name that resolves to a loopback address, in both lookup forms', async () => {
    for (const all of [false, true]) {
      const { error } = await lookup('localhost', all);
      expect(error).toMatchObject({
        name: 'PrivateAddressError',
        code: 'EPRIVATEADDRESS',
        message: expect.stringMatching(/^localhost resolves to a loopback address\.$/),
      });
    }
  });
});
