const SECRET_PREFIX = 'whsec_';

const base64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

/** A new signing secret as the service makes one: `whsec_` and the base64 of 32 random bytes. */
export const newSecret = (): string => `${SECRET_PREFIX}${base64(crypto.getRandomValues(new Uint8Array(32)))}`;

const keyOf = (secret: string) => {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
};

/**
 * The Standard Webhooks headers of one attempt, as the service signs it: `v1,` and the base64
 * HMAC-SHA256 of `<id>.<timestamp>.<body>` with each secret, space-separated (the newest first).
 */
export const signedHeaders = async (
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<{ 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string }> => {
  const content = new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`);
  const signatures = await Promise.all(
    secrets.map(async (secret) => {
      const signature = await crypto.subtle.sign('HMAC', await keyOf(secret), content);
      return `v1,${base64(new Uint8Array(signature))}`;
    }),
  );
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signatures.join(' '),
  };
};
