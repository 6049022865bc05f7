import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StaticToken } from './authenticator.ts';
import type { ApiTokenEntry } from './token-entries.ts';
import { hashToken } from './token-hash.ts';

export const TOKEN_HASH_FILE = 'api-token.sha256';

export type ApiTokens = {
  tokens: StaticToken[];
  /** Set only on the start that generated it: the one time the plaintext exists. */
  generatedToken?: string;
  /** Where the generated token's hash is kept, when tokens do not come from the environment. */
  hashFile?: string;
};

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * The tokens the service accepts: those configured (plain, or `sha256:<hex>`, each the operator's
 * or a named principal's), or else one of the operator's generated on first start whose SHA-256
 * alone is kept in the data directory, so the service never runs open.
 */
export const resolveApiTokens = (configured: readonly ApiTokenEntry[], dataDir: string): ApiTokens => {
  if (configured.length > 0) {
    return {
      tokens: configured.map(({ token, principal }) => ({
        hash: token.toLowerCase().startsWith('sha256:')
          ? Buffer.from(token.slice('sha256:'.length), 'hex')
          : hashToken(token),
        ...(principal && { principal }),
      })),
    };
  }
  const hashFile = join(dataDir, TOKEN_HASH_FILE);
  let stored: string | undefined;
  try {
    stored = readFileSync(hashFile, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (stored !== undefined) {
    if (!HEX_SHA256.test(stored)) {
      throw new Error(`${hashFile} does not hold a SHA-256 hex digest; delete it to generate a new token.`);
    }
    return { tokens: [{ hash: Buffer.from(stored, 'hex') }], hashFile };
  }
  const generatedToken = randomBytes(32).toString('base64url');
  const hash = hashToken(generatedToken);
  mkdirSync(dataDir, { recursive: true });
  // Write then rename, so a crash never leaves a half-written hash behind.
  const temporary = `${hashFile}.${process.pid}.tmp`;
  writeFileSync(temporary, `${hash.toString('hex')}\n`, { mode: 0o600 });
  renameSync(temporary, hashFile);
  return { tokens: [{ hash }], generatedToken, hashFile };
};
