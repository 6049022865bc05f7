import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiTokens, resolveApiTokens, TOKEN_HASH_FILE } from './api-tokens.ts';
import { createTokenVerifier, hashToken } from './token-hash.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'plant-api-tokens-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('createTokenVerifier', () => {
  it('accepts every configured token and nothing else', () => {
    const verify = createTokenVerifier([hashToken('alpha-token'), hashToken('beta-token')]);
    expect(verify('alpha-token')).toBe(true);
    expect(verify('beta-token')).toBe(true);
    for (const other of ['', 'alpha', 'alpha-token ', 'ALPHA-TOKEN', 'alpha-tokenbeta-token', 'gamma-token']) {
      expect(verify(other)).toBe(false);
    }
  });

  it('compares SHA-256 digests, so tokens of any length are handled', () => {
    const long = 'x'.repeat(10_000);
    const verify = createTokenVerifier([hashToken(long)]);
    expect(verify(long)).toBe(true);
    expect(verify('x')).toBe(false);
    expect(verify(`${long}x`)).toBe(false);
  });

  it('refuses to build a verifier with no token, so the service never runs open', () => {
    expect(() => createTokenVerifier([])).toThrow(/At least one API token is required/);
  });
});

const hashesOf = ({ tokens }: ApiTokens) => tokens.map(({ hash }) => hash);

describe('resolveApiTokens', () => {
  it('uses the configured tokens and leaves the data directory alone', () => {
    const dataDir = join(root, 'data');
    const tokens = resolveApiTokens(
      [{ token: 'one' }, { token: 'two', principal: { name: 'team-b', scopes: ['plants:read'] } }],
      dataDir,
    );
    expect(tokens).toStrictEqual({
      tokens: [
        { hash: hashToken('one') },
        { hash: hashToken('two'), principal: { name: 'team-b', scopes: ['plants:read'] } },
      ],
    });
    expect(() => statSync(dataDir)).toThrow(/ENOENT/);
  });

  it('takes sha256:<hex> entries as the digest of a token, so no plaintext needs configuring', () => {
    const digest = hashToken('hashed-secret-token').toString('hex');
    const tokens = resolveApiTokens([{ token: `sha256:${digest.toUpperCase()}` }, { token: 'plain-token' }], root);
    const verify = createTokenVerifier(hashesOf(tokens));
    expect(verify('hashed-secret-token')).toBe(true);
    expect(verify('plain-token')).toBe(true);
    expect(verify(`sha256:${digest}`)).toBe(false);
  });

  it('lets configured tokens win over a stored hash', () => {
    writeFileSync(join(root, TOKEN_HASH_FILE), `${hashToken('stored').toString('hex')}\n`);
    const tokens = resolveApiTokens([{ token: 'configured' }], root);
    const verify = createTokenVerifier(hashesOf(tokens));
    expect(verify('configured')).toBe(true);
    expect(verify('stored')).toBe(false);
    expect(tokens.generatedToken).toBeUndefined();
  });

  it('generates one 43-character base64url token on first start and keeps only its hex SHA-256', () => {
    const dataDir = join(root, 'nested', 'data');
    const tokens = resolveApiTokens([], dataDir);
    const token = tokens.generatedToken;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    if (token === undefined) throw new Error('no token was generated');

    const hashFile = join(dataDir, TOKEN_HASH_FILE);
    expect(tokens.hashFile).toBe(hashFile);
    expect(tokens.tokens).toStrictEqual([{ hash: hashToken(token) }]);
    expect(createTokenVerifier(hashesOf(tokens))(token)).toBe(true);

    const content = readFileSync(hashFile, 'utf8');
    expect(content).toBe(`${hashToken(token).toString('hex')}\n`);
    expect(content.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(content).not.toContain(token);
    expect(statSync(hashFile).mode & 0o777).toBe(0o600);
    // Written then renamed: no temporary file is left behind.
    expect(readdirSync(dataDir)).toStrictEqual([TOKEN_HASH_FILE]);
  });

  it('loads the stored hash on a second start without generating a new token', () => {
    const first = resolveApiTokens([], root);
    const hashFile = join(root, TOKEN_HASH_FILE);
    const content = readFileSync(hashFile, 'utf8');

    const second = resolveApiTokens([], root);
    expect(second.generatedToken).toBeUndefined();
    expect(second.hashFile).toBe(hashFile);
    expect(second.tokens).toStrictEqual(first.tokens);
    expect(readFileSync(hashFile, 'utf8')).toBe(content);
    expect(createTokenVerifier(hashesOf(second))(first.generatedToken as string)).toBe(true);
  });

  it('generates a different token for each data directory', () => {
    const a = resolveApiTokens([], join(root, 'a'));
    const b = resolveApiTokens([], join(root, 'b'));
    expect(a.generatedToken).not.toBe(b.generatedToken);
  });

  it.each([
    ['text', 'not a hash'],
    ['an empty file', ''],
    ['a truncated digest', 'a'.repeat(63)],
    ['a digest with extra characters', `${'a'.repeat(64)}0`],
    ['the plaintext token', 'secret-token-value'],
  ])('fails clearly when the hash file holds %s, naming the file and the remedy', (_label, content) => {
    const hashFile = join(root, TOKEN_HASH_FILE);
    writeFileSync(hashFile, content);
    expect(() => resolveApiTokens([], root)).toThrow(
      `${hashFile} does not hold a SHA-256 hex digest; delete it to generate a new token.`,
    );
    expect(readFileSync(hashFile, 'utf8')).toBe(content);
  });

  it('does not replace an unreadable hash file with a new token', () => {
    mkdirSync(join(root, TOKEN_HASH_FILE));
    expect(() => resolveApiTokens([], root)).toThrow(/EISDIR/);
    expect(statSync(join(root, TOKEN_HASH_FILE)).isDirectory()).toBe(true);
  });
});
