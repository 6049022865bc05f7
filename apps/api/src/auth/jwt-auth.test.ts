import { KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { contract, SCOPES } from '@org/plant-contract';
import { errors, exportJWK, generateKeyPair, type JWK, type JWTVerifyGetKey, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { fakeStore } from '#test/fake-store';
import { createApp } from '../app.ts';
import type { StoredPlant } from '../store/plant-store.ts';
import { combineAuthenticators, staticTokens } from './authenticator.ts';
import { type JwtOptions, jwtAuthenticator } from './jwt-authenticator.ts';
import { hashToken } from './token-hash.ts';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'plant-store';
const STATIC_TOKEN = 'static-token-0123456789';

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

let keys: Awaited<ReturnType<typeof generateKeyPair>>;
let otherKeys: Awaited<ReturnType<typeof generateKeyPair>>;
let jwksServer: Server;
let jwksUrl: string;

beforeAll(async () => {
  keys = await generateKeyPair('RS256', { extractable: true });
  otherKeys = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwksServer = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  jwksUrl = `${await listen(jwksServer)}/jwks.json`;
});
afterAll(async () => {
  await close(jwksServer);
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** The authenticator's options, all optional here (the JWKS served above by default), and the app's. */
type AppOptions = Partial<Omit<JwtOptions, 'jwksUrl' | 'issuer' | 'audience' | 'algorithms'>> & {
  url?: string;
  requireScopes?: boolean;
  algorithms?: string[];
  rateLimitPerToken?: number;
};

const startApp = async ({
  url = jwksUrl,
  requireScopes,
  algorithms = ['RS256'],
  jwksTimeoutMs = 1000,
  jwksCooldownMs,
  rateLimitPerToken,
  ...jwtOptions
}: AppOptions = {}) => {
  const created: StoredPlant[] = [];
  const app = createApp({
    store: fakeStore({
      create: async (plant) => {
        created.push(plant);
        return { outcome: 'created', plant };
      },
    }),
    authenticate: combineAuthenticators({
      tokens: staticTokens([{ hash: hashToken(STATIC_TOKEN) }]),
      jwt: jwtAuthenticator({
        jwksUrl: url,
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms,
        jwksTimeoutMs,
        ...(jwksCooldownMs !== undefined && { jwksCooldownMs }),
        ...jwtOptions,
      }),
    }),
    ...(requireScopes !== undefined && { requireScopes }),
    ...(rateLimitPerToken !== undefined && { rateLimitPerToken }),
  });
  const server = createServer(app);
  servers.push(server);
  const base = await listen(server);
  const send = (token: string, method = 'POST') =>
    fetch(`${base}/plants`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(method === 'POST' && { body: '{"id":1,"name":"Fern"}' }),
    });
  return { send, created, base };
};

type Claims = { scope?: string; [claim: string]: unknown };
const sign = (
  claims: Claims = {},
  {
    key = keys.privateKey as Parameters<SignJWT['sign']>[0],
    kid = 'k1',
    alg = 'RS256',
    subject = 'client-42',
    issuer = ISSUER,
    audience = AUDIENCE,
    expires = '5m',
    notBefore = '0s',
  } = {},
) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg, kid })
    .setSubject(subject)
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setNotBefore(notBefore)
    .setExpirationTime(expires)
    .sign(key);

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

const expectInvalidToken = async (response: Response) => {
  await expectError(response, 401, /invalid/);
  expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
};

describe('JWT bearer tokens', () => {
  it('accepts a valid token, and static tokens beside it', async () => {
    const { send, created } = await startApp();
    expect((await send(await sign({ scope: 'plants:write' }))).status).toBe(200);
    expect((await send(STATIC_TOKEN)).status).toBe(200);
    expect(created).toHaveLength(2);
  });

  it.each([
    ['expired', () => sign({}, { expires: '-1m' })],
    ['not yet valid', () => sign({}, { notBefore: '10m' })],
    ['from another issuer', () => sign({}, { issuer: 'https://evil.test/' })],
    ['for another audience', () => sign({}, { audience: 'someone-else' })],
    ['signed with an unknown key id', () => sign({}, { kid: 'k2' })],
    ['signed by another key under the known id', () => sign({}, { key: otherKeys.privateKey })],
  ])('refuses a token %s with 401 invalid_token and stores nothing', async (_label, token) => {
    const { send, created } = await startApp();
    await expectInvalidToken(await send(await token()));
    expect(created).toHaveLength(0);
  });

  it('refuses alg none and a tampered payload', async () => {
    const { send, created } = await startApp();
    const valid = await sign();
    const [header, payload, signature] = valid.split('.');
    const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    const tampered = `${header}.${base64url({ sub: 'admin', iss: ISSUER, aud: AUDIENCE, exp: 9_999_999_999 })}.${signature}`;
    for (const token of [unsigned, tampered]) await expectInvalidToken(await send(token));
    expect(created).toHaveLength(0);
  });

  it('refuses a token without exp, which would never expire, as it refuses other invalid tokens', async () => {
    const { send, created } = await startApp();
    const endless = await new SignJWT({ scope: 'plants:write' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('client-42')
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .sign(keys.privateKey);
    const response = await send(endless);
    await expectInvalidToken(response);
    expect(created).toHaveLength(0);
  });

  it('accepts an identity provider whose clock is up to 30 s off, and no more unless configured', async () => {
    const ahead = () => sign({ scope: 'plants:write' }, { notBefore: '20s' });
    const lapsed = () => sign({ scope: 'plants:write' }, { expires: '-20s' });
    const tolerant = await startApp();
    expect((await tolerant.send(await ahead())).status).toBe(200);
    expect((await tolerant.send(await lapsed())).status).toBe(200);
    await expectInvalidToken(await tolerant.send(await sign({ scope: 'plants:write' }, { notBefore: '40s' })));
    await expectInvalidToken(await tolerant.send(await sign({ scope: 'plants:write' }, { expires: '-40s' })));
    const strict = await startApp({ clockToleranceMs: 0 });
    await expectInvalidToken(await strict.send(await ahead()));
    await expectInvalidToken(await strict.send(await lapsed()));
  });

  it('answers 503 with Retry-After, never 200, when the JWKS cannot be fetched', async () => {
    const down = createServer();
    const url = `${await listen(down)}/jwks.json`;
    await close(down);
    const { send, created } = await startApp({ url });
    const response = await send(await sign());
    await expectError(response, 503, /retry/);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(created).toHaveLength(0);
  });

  it('requires plants:write to write and plants:read (or plants:write) to read, by default', async () => {
    const { send, created } = await startApp();
    const reader = await sign({ scope: 'plants:read' });
    const response = await send(reader);
    await expectError(response, 403, /plants:write/);
    expect(response.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    expect(response.headers.get('www-authenticate')).toContain('scope="plants:write"');
    expect((await send(reader, 'GET')).status).toBe(200);
    await expectError(await send(await sign({ scope: 'other' }), 'GET'), 403, /plants:read/);
    expect((await send(await sign({ scope: 'plants:read plants:write' }))).status).toBe(200);
    expect((await send(await sign({ scp: ['plants:write'] }))).status).toBe(200);
    // Static tokens are not scoped: they may do everything.
    expect((await send(STATIC_TOKEN)).status).toBe(200);
    expect(created).toHaveLength(3);
  });

  it('requires webhooks:write to change webhooks and webhooks:read to read them; plants scopes do not do', async () => {
    const { base } = await startApp();
    const send = async (scope: string, method = 'GET') =>
      fetch(`${base}/webhooks`, {
        method,
        headers: { authorization: `Bearer ${await sign({ scope })}`, 'content-type': 'application/json' },
        ...(method === 'POST' && { body: '{"url":"http://receiver.test/hook"}' }),
      });
    await expectError(await send('plants:read plants:write'), 403, /webhooks:read/);
    expect((await send('webhooks:read')).status).toBe(200);
    expect((await send('webhooks:write')).status).toBe(200);
    const refused = await send('webhooks:read plants:write', 'POST');
    await expectError(refused, 403, /webhooks:write/);
    expect(refused.headers.get('www-authenticate')).toContain('scope="webhooks:write"');
    // Past authorization: the body is judged (plain http is refused without PLANT_WEBHOOKS_ALLOW_PRIVATE).
    await expectError(await send('webhooks:write', 'POST'), 400, /https/);
  });
});

/** A request to each route of the contract, with placeholder path parameters and a body where one is due. */
const routeRequests = Object.entries(contract).map(([name, route]) => ({
  name,
  method: route.method,
  path: route.path.replace(':id', '1'),
  scope: (route.metadata as { scope: string }).scope,
  ...(route.method === 'POST' && {
    body: route.path === '/plants' ? '{"id":1,"name":"Fern"}' : '{"url":"https://receiver.example/hook"}',
  }),
}));

describe('least privilege for JWTs', () => {
  it.each(routeRequests)('$name ($method $path) needs $scope, as its contract metadata declares', async (route) => {
    const { base } = await startApp();
    const send = async (scope?: string) =>
      fetch(`${base}${route.path}`, {
        method: route.method,
        headers: {
          authorization: `Bearer ${await sign(scope === undefined ? {} : { scope })}`,
          'content-type': 'application/json',
        },
        ...(route.body !== undefined && { body: route.body }),
      });
    const others = SCOPES.filter((scope) => scope !== route.scope && scope !== route.scope.replace(':read', ':write'));
    for (const scope of [undefined, others.join(' ')]) {
      const refused = await send(scope);
      await expectError(refused, 403, new RegExp(`lacks the ${route.scope} scope`));
      expect(refused.headers.get('www-authenticate')).toContain(`scope="${route.scope}"`);
    }
    // Past authorization, whatever the route then answers (404 for an unknown id, 400 for a body).
    expect([401, 403]).not.toContain((await send(route.scope)).status);
  });

  it('lets a plants:read token neither list, register nor delete webhooks', async () => {
    const { base } = await startApp();
    const token = await sign({ scope: 'plants:read' });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    await expectError(await fetch(`${base}/webhooks`, { headers }), 403, /webhooks:read/);
    const body = '{"url":"https://receiver.example/hook"}';
    await expectError(await fetch(`${base}/webhooks`, { method: 'POST', headers, body }), 403, /webhooks:write/);
    await expectError(await fetch(`${base}/webhooks/1`, { method: 'DELETE', headers }), 403, /webhooks:write/);
  });

  it('lets any valid JWT call every route only when scopes are turned off explicitly', async () => {
    const { send, base } = await startApp({ requireScopes: false });
    const unscoped = await sign();
    expect((await send(unscoped)).status).toBe(200);
    expect((await fetch(`${base}/webhooks`, { headers: { authorization: `Bearer ${unscoped}` } })).status).toBe(200);
  });
});

/** A JWKS endpoint whose keys the test changes, counting its fetches; it can also stop answering. */
const startJwks = async (initial: JWK[]) => {
  let served = initial;
  let fetches = 0;
  let hanging = false;
  const server = createServer((_req, res) => {
    fetches += 1;
    if (hanging) return;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: served }));
  });
  servers.push(server);
  const url = `${await listen(server)}/jwks.json`;
  return {
    url,
    fetches: () => fetches,
    serve: (keys: JWK[]) => {
      served = keys;
    },
    hang: () => {
      hanging = true;
    },
  };
};

/** Every test here writes, so its tokens carry the scope that needs. */
const WRITER = { scope: 'plants:write' };

const publicJwk = async (
  pair: { publicKey: Parameters<typeof exportJWK>[0] },
  kid: string,
  alg: string,
): Promise<JWK> => ({
  ...(await exportJWK(pair.publicKey)),
  kid,
  alg,
  use: 'sig',
});

describe('signing keys and algorithms', () => {
  it('fetches the keys again for an unknown key id, so a token signed with a rotated-in key is accepted', async () => {
    const jwks = await startJwks([await publicJwk(keys, 'k1', 'RS256')]);
    const { send } = await startApp({ url: jwks.url, jwksCooldownMs: 100 });
    expect((await send(await sign(WRITER))).status).toBe(200);
    expect(jwks.fetches()).toBe(1);
    // The identity provider publishes a second key and signs with it.
    jwks.serve([await publicJwk(keys, 'k1', 'RS256'), await publicJwk(otherKeys, 'k2', 'RS256')]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await send(await sign(WRITER, { key: otherKeys.privateKey, kid: 'k2' }))).status).toBe(200);
    expect(jwks.fetches()).toBe(2);
    // Cached from then on.
    expect((await send(await sign(WRITER, { key: otherKeys.privateKey, kid: 'k2' }))).status).toBe(200);
    expect(jwks.fetches()).toBe(2);
  });

  it('costs the identity provider no fetch per token with an unknown key id while the cooldown lasts', async () => {
    const jwks = await startJwks([await publicJwk(keys, 'k1', 'RS256')]);
    const { send } = await startApp({ url: jwks.url, jwksCooldownMs: 60_000 });
    expect((await send(await sign(WRITER))).status).toBe(200);
    const forged = await Promise.all(
      Array.from({ length: 20 }, (_, index) => sign(WRITER, { key: otherKeys.privateKey, kid: `x${index}` })),
    );
    for (const response of await Promise.all(forged.map((token) => send(token)))) await expectInvalidToken(response);
    expect(jwks.fetches()).toBe(1);
  });

  it('answers 503 once the JWKS fetch times out, when the identity provider never answers', async () => {
    const jwks = await startJwks([]);
    jwks.hang();
    const { send, created } = await startApp({ url: jwks.url, jwksTimeoutMs: 200 });
    // The bound is the test's own timeout: a hang would fail it instead of answering.
    const response = await send(await sign(WRITER));
    await expectError(response, 503, /retry/);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(jwks.fetches()).toBe(1);
    expect(created).toHaveLength(0);
  });

  it('keeps verifying with the keys last fetched through a JWKS outage, for jwksMaxStaleMs, then answers 503', async () => {
    const jwks = await startJwks([await publicJwk(keys, 'k1', 'RS256')]);
    let clock = Date.now();
    // Keys due again at every request: each one past the cooldown tries to fetch them.
    const { send } = await startApp({
      url: jwks.url,
      jwksTimeoutMs: 200,
      jwksCacheMaxAgeMs: 0,
      jwksMaxStaleMs: 3_600_000,
      now: () => clock,
    });
    expect((await send(await sign(WRITER))).status).toBe(200);
    expect(jwks.fetches()).toBe(1);

    jwks.hang();
    // The fetch times out; the keys fetched before verify, and go on verifying without a fetch each.
    expect((await send(await sign(WRITER))).status).toBe(200);
    expect(jwks.fetches()).toBe(2);
    for (let index = 0; index < 5; index++) expect((await send(await sign(WRITER))).status).toBe(200);
    expect(jwks.fetches()).toBe(2);
    // A bad token is still refused with them.
    await expectInvalidToken(await send(await sign(WRITER, { key: otherKeys.privateKey })));

    // Past the bound, the keys are too old to trust: 503 as when no key was ever fetched.
    clock += 3_600_000 + 60_000;
    const response = await send(await sign(WRITER));
    await expectError(response, 503, /retry/);
    expect(response.headers.get('retry-after')).toBe('5');
  });

  it('refuses an HS256 token signed with the public key, even where the key lookup would hand it to HMAC', async () => {
    // The classic confusion: the attacker signs HS256 with the RSA public key's PEM, which is
    // public. jose's JWKS never yields a secret key; this lookup does what a naive one does, the PEM
    // for a shared-secret algorithm, so that only the algorithm allow-list stands between the token
    // and a 200.
    const pem = Buffer.from(KeyObject.from(keys.publicKey).export({ type: 'spki', format: 'pem' }));
    const naiveLookup: JWTVerifyGetKey = ({ alg, kid }) => {
      if (kid !== 'k1') throw new errors.JWKSNoMatchingKey();
      return alg?.startsWith('HS') ? pem : keys.publicKey;
    };
    const confused = await sign(WRITER, { key: pem, alg: 'HS256' });
    const { send, created } = await startApp({ algorithms: ['RS256'], keyLookup: naiveLookup });
    await expectInvalidToken(await send(confused));
    expect((await send(await sign(WRITER))).status).toBe(200);
    expect(created).toHaveLength(1);
  });

  it('accepts ES256 and EdDSA tokens only when the allow-list names them', async () => {
    const ec = await generateKeyPair('ES256', { extractable: true });
    const ed = await generateKeyPair('EdDSA', { extractable: true });
    const jwks = await startJwks([
      await publicJwk(keys, 'k1', 'RS256'),
      await publicJwk(ec, 'ec1', 'ES256'),
      await publicJwk(ed, 'ed1', 'EdDSA'),
    ]);
    const es256 = await sign(WRITER, { key: ec.privateKey, kid: 'ec1', alg: 'ES256' });
    const eddsa = await sign(WRITER, { key: ed.privateKey, kid: 'ed1', alg: 'EdDSA' });
    const rs256 = await sign(WRITER);

    const rsaOnly = await startApp({ url: jwks.url });
    await expectInvalidToken(await rsaOnly.send(es256));
    await expectInvalidToken(await rsaOnly.send(eddsa));
    expect((await rsaOnly.send(rs256)).status).toBe(200);

    const modern = await startApp({ url: jwks.url, algorithms: ['ES256', 'EdDSA'] });
    expect((await modern.send(es256)).status).toBe(200);
    expect((await modern.send(eddsa)).status).toBe(200);
    await expectInvalidToken(await modern.send(rs256));
  });

  it("limits each subject on its own: one subject's flood gets 429 while another subject is served", async () => {
    const { send } = await startApp({ rateLimitPerToken: 3 });
    const flooding = await sign(WRITER, { subject: 'batch-job' });
    const calm = await sign(WRITER, { subject: 'web-frontend' });
    const flood = await Promise.all(Array.from({ length: 30 }, () => send(flooding, 'GET')));
    expect(flood.map((response) => response.status)).toContain(429);
    // Another token of the flooding subject (its own jti) shares its bucket: the limit is per subject.
    const another = await sign({ ...WRITER, jti: 'another' }, { subject: 'batch-job' });
    expect(another).not.toBe(flooding);
    expect((await send(another, 'GET')).status).toBe(429);
    const served = await Promise.all(Array.from({ length: 3 }, () => send(calm, 'GET')));
    expect(served.map((response) => response.status)).toEqual([200, 200, 200]);
  });
});

describe('the principal of a JWT', () => {
  it('is refused, 401 invalid_token, without the principal claim or with it empty', async () => {
    const { send, created } = await startApp();
    await expectInvalidToken(await send(await sign(WRITER, { subject: '' })));
    const azpOnly = await startApp({ principalClaim: 'azp' });
    await expectInvalidToken(await azpOnly.send(await sign(WRITER)));
    await expectInvalidToken(await azpOnly.send(await sign({ ...WRITER, azp: 42 })));
    expect(created).toHaveLength(0);
  });

  it('is named by the configured claim: two subjects of one client are one principal, sharing its limits', async () => {
    const { send } = await startApp({ principalClaim: 'azp', rateLimitPerToken: 3 });
    const first = await sign({ ...WRITER, azp: 'inventory-service' }, { subject: 'worker-1' });
    const second = await sign({ ...WRITER, azp: 'inventory-service' }, { subject: 'worker-2' });
    const other = await sign({ ...WRITER, azp: 'web-frontend' }, { subject: 'worker-1' });
    const flood = await Promise.all(Array.from({ length: 30 }, () => send(first, 'GET')));
    expect(flood.map((response) => response.status)).toContain(429);
    expect((await send(second, 'GET')).status).toBe(429);
    expect((await send(other, 'GET')).status).toBe(200);
  });
});
