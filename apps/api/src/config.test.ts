import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      apiTokens: [],
      dataDir: './data',
      logLevel: 'info',
      rateLimitPerToken: 1000,
      authFailuresPerMinute: 60,
      requireScopes: false,
    });
  });

  it('reads every variable, splitting and trimming the token list', () => {
    const config = loadConfig({
      PORT: '4000',
      HOST: '0.0.0.0',
      PLANT_API_TOKENS: ' first-token-0123456789 , second-token-0123456789,',
      PLANT_DATA_DIR: '/var/lib/plants',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      apiTokens: ['first-token-0123456789', 'second-token-0123456789'],
      dataDir: '/var/lib/plants',
      logLevel: 'warn',
    });
  });

  it('accepts tokens given as SHA-256 digests', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(loadConfig({ PLANT_API_TOKENS: `${digest},plain-token-0123456789` }).apiTokens).toEqual([
      digest,
      'plain-token-0123456789',
    ]);
  });

  it('reads rate limits and JWT settings', () => {
    expect(
      loadConfig({
        PLANT_RATE_LIMIT_PER_TOKEN: '0',
        PLANT_AUTH_FAILURES_PER_MINUTE: '5.5',
        PLANT_API_JWKS_URL: 'https://issuer.example.com/.well-known/jwks.json',
        PLANT_API_JWT_ISSUER: 'https://issuer.example.com/',
        PLANT_API_JWT_AUDIENCE: 'plant-store',
        PLANT_API_JWT_ALGORITHMS: 'ES256, RS256',
        PLANT_API_JWT_REQUIRE_SCOPES: 'true',
      }),
    ).toMatchObject({
      rateLimitPerToken: 0,
      authFailuresPerMinute: 5.5,
      requireScopes: true,
      jwt: {
        jwksUrl: 'https://issuer.example.com/.well-known/jwks.json',
        issuer: 'https://issuer.example.com/',
        audience: 'plant-store',
        algorithms: ['ES256', 'RS256'],
      },
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' })).toMatchObject({ port: 3000, logLevel: 'info' });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [{ PORT: '70000' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent.',
    ],
    [
      { PLANT_API_TOKENS: 'short' },
      /^Invalid configuration: PLANT_API_TOKENS must be a comma-separated list of tokens/,
    ],
    [{ PLANT_API_TOKENS: 'has a space in it, really long' }, /^Invalid configuration: PLANT_API_TOKENS /],
    [{ PLANT_API_TOKENS: 'sha256:abc' }, /^Invalid configuration: PLANT_API_TOKENS /],
    [{ PLANT_RATE_LIMIT_PER_TOKEN: '-1' }, /^Invalid configuration: PLANT_RATE_LIMIT_PER_TOKEN must be a non-negative/],
    [{ PLANT_API_JWKS_URL: 'ftp://x/keys' }, /^Invalid configuration: PLANT_API_JWKS_URL must be an http\(s\) URL\.$/],
    [{ PLANT_API_JWKS_URL: 'https://x/keys' }, /^Invalid configuration: PLANT_API_JWT_ISSUER is required with/],
    [
      {
        PLANT_API_JWKS_URL: 'https://x/keys',
        PLANT_API_JWT_ISSUER: 'x',
        PLANT_API_JWT_AUDIENCE: 'y',
        PLANT_API_JWT_ALGORITHMS: 'none',
      },
      /^Invalid configuration: PLANT_API_JWT_ALGORITHMS must be/,
    ],
    [{ PLANT_API_JWT_REQUIRE_SCOPES: 'true' }, /needs PLANT_API_JWKS_URL/],
    [{ PLANT_API_JWT_REQUIRE_SCOPES: 'yes' }, /PLANT_API_JWT_REQUIRE_SCOPES must be true or false/],
  ])('rejects %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes a rejected token', () => {
    expect(() => loadConfig({ PLANT_API_TOKENS: 'secret value' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});
