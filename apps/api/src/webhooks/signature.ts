import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Random bytes in a new secret: within the 24 to 64 that Standard Webhooks asks for. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` and the base64 of random bytes. */
export const newSecret = (): string => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The key a secret stands for: the base64-decoded bytes after `whsec_`. */
export const secretKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

/** The Standard Webhooks headers of one attempt: webhook-id, webhook-timestamp (Unix seconds) and webhook-signature. */
export const signedHeaders = (
  key: Buffer,
  id: string,
  timestampSeconds: number,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } => {
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
};
