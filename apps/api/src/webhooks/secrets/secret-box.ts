import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest. With PLANT_WEBHOOK_SECRETS_KEY each endpoint's secret is stored sealed
 * with AES-256-GCM, so that a copy of the database (a backup, a replica, a leak) forges nothing
 * without the key, which lives only in the service's environment. A sealed secret names the key
 * that sealed it (its id), so that a later release can accept an old key beside a new one while it
 * re-seals; and it is bound to its endpoint (the id is the authenticated data), so that a row's
 * secret cannot be moved to another endpoint either.
 *
 *   whenc_v1.<key id>.<nonce, base64url>.<ciphertext and tag, base64url>
 */

const SEALED_PREFIX = 'whenc_v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** The key's length: AES-256. */
export const SECRETS_KEY_BYTES = 32;

export type SecretBox = {
  /** The id of the key that seals new secrets; undefined when secrets are stored in plain text. */
  readonly keyId: string | undefined;
  /** The form `secret` is stored in for `endpointId`. */
  seal(endpointId: string, secret: string): string;
  /** The secret `stored` stands for; throws when it was sealed with a key this box does not hold. */
  open(endpointId: string, stored: string): string;
};

export const isSealed = (stored: string): boolean => stored.startsWith(SEALED_PREFIX);

/** Which key sealed `stored` (undefined for a plain secret). */
export const sealedWith = (stored: string): string | undefined =>
  isSealed(stored) ? stored.slice(SEALED_PREFIX.length).split('.')[0] : undefined;

export class SecretKeyError extends Error {
  override readonly name = 'SecretKeyError';
}

/** The key's id: the start of its SHA-256, which says which key it is without saying the key. */
export const keyIdOf = (key: Buffer): string => createHash('sha256').update(key).digest('hex').slice(0, 16);

/** Secrets stored as they are: no PLANT_WEBHOOK_SECRETS_KEY. */
export const plainSecrets: SecretBox = {
  keyId: undefined,
  seal: (_endpointId, secret) => secret,
  open: (_endpointId, stored) => {
    if (isSealed(stored)) {
      throw new SecretKeyError(
        `The endpoint's secret is encrypted (key id ${sealedWith(stored)}); set PLANT_WEBHOOK_SECRETS_KEY.`,
      );
    }
    return stored;
  },
};

/** Seals with `key` (32 bytes); opens what it sealed, and plain secrets not sealed yet. */
export const secretBox = (key: Buffer): SecretBox => {
  if (key.length !== SECRETS_KEY_BYTES) throw new SecretKeyError(`The key must be ${SECRETS_KEY_BYTES} bytes.`);
  const keyId = keyIdOf(key);
  return {
    keyId,
    seal(endpointId, secret) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(endpointId));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED_PREFIX}${keyId}.${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
    },
    open(endpointId, stored) {
      if (!isSealed(stored)) return stored;
      const [id, nonce, sealed] = stored.slice(SEALED_PREFIX.length).split('.');
      if (id !== keyId) {
        throw new SecretKeyError(
          `The endpoint's secret is encrypted with another key (id ${id}) than PLANT_WEBHOOK_SECRETS_KEY (id ${keyId}).`,
        );
      }
      const bytes = Buffer.from(sealed ?? '', 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce ?? '', 'base64url'))
        .setAAD(Buffer.from(endpointId))
        .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    },
  };
};
