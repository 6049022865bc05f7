import type { Logger } from 'pino';
import type { WebhookStore } from '../../store/webhook-store.ts';
import { isSealed, plainSecrets, type SecretBox, SecretKeyError, sealedWith, secretBox } from './secret-box.ts';

/**
 * Run at start, before anything is delivered: makes sure every stored secret can be opened with
 * the configured key (or refuses to start, naming PLANT_WEBHOOK_SECRETS_KEY), and with a key seals
 * the secrets still stored in plain text (those registered before the key was set). Each is
 * replaced only if it is still what was read, so replicas starting together do not undo each other.
 * Resolves with the number of endpoints stored, which it read anyway.
 */
export const sealStoredSecrets = async (
  store: WebhookStore,
  secrets: SecretBox,
  { logger, production }: { logger: Logger; production: boolean },
): Promise<number> => {
  const endpoints = await store.endpointSecrets();
  const stored = endpoints.flatMap(({ id, secret, previousSecrets }) => [
    { id, which: 'secret' as const, value: secret },
    ...previousSecrets.map((value) => ({ id, which: 'previousSecret' as const, value })),
  ]);
  const foreign = stored.find(({ value }) => isSealed(value) && sealedWith(value) !== secrets.keyId);
  if (foreign !== undefined) {
    const keyId = sealedWith(foreign.value);
    throw new SecretKeyError(
      secrets.keyId === undefined
        ? `Webhook secrets in the store are encrypted (key id ${keyId}): set PLANT_WEBHOOK_SECRETS_KEY to the key that encrypted them.`
        : `Webhook secrets in the store are encrypted with another key (id ${keyId}) than PLANT_WEBHOOK_SECRETS_KEY (id ${secrets.keyId}).`,
    );
  }
  if (secrets.keyId === undefined) {
    if (production) {
      logger.warn(
        'PLANT_WEBHOOK_SECRETS_KEY is not set: webhook signing secrets are stored in plain text, and a copy of the database can forge deliveries',
      );
    }
    return endpoints.length;
  }
  let sealed = 0;
  for (const { id, which, value } of stored) {
    if (!isSealed(value) && (await store.replaceSecret(id, which, value, secrets.seal(id, value)))) sealed += 1;
  }
  if (sealed > 0) logger.info({ sealed, keyId: secrets.keyId }, 'webhook signing secrets encrypted');
  return endpoints.length;
};

/**
 * What a process that reads webhook secrets runs at start (the service and the worker): the secret
 * box of PLANT_WEBHOOK_SECRETS_KEY (or none), once sealStoredSecrets made sure it opens every stored
 * secret, and the number of endpoints stored. A key that cannot ends the start with one line,
 * through `fail`.
 */
export const openWebhookSecrets = async (
  store: WebhookStore,
  { secretsKey, production }: { secretsKey?: Buffer | undefined; production: boolean },
  logger: Logger,
  fail: (message: string) => never,
): Promise<{ secrets: SecretBox; endpoints: number }> => {
  const secrets = secretsKey === undefined ? plainSecrets : secretBox(secretsKey);
  try {
    return { secrets, endpoints: await sealStoredSecrets(store, secrets, { logger, production }) };
  } catch (error) {
    if (error instanceof SecretKeyError) fail(`Cannot start: ${error.message}`);
    throw error;
  }
};
