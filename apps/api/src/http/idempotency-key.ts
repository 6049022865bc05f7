import { createHash } from 'node:crypto';
import {
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_TTL_MS,
  IDEMPOTENT_REPLAYED_HEADER,
  stringifyExactJson,
} from '@org/plant-contract';
import type { RequestHandler } from 'express';
import { clientKey } from '../auth/bearer-auth.ts';
import type { RequestStore } from '../store/request-store.ts';
import type { SecretBox } from '../webhooks/secrets/secret-box.ts';
import { sendError } from './http-error.ts';

/**
 * A claim never finished this long after it was made is its process's, which died: the key may be
 * claimed again. Far beyond any of these requests (each store call is bounded), far below the TTL.
 */
export const IDEMPOTENCY_STALE_MS = 5 * 60_000;

/**
 * Keys a principal may have live (claimed within 24 hours) at once: each keeps an answer of a few
 * KiB at most, so one principal's keys hold tens of MiB at most, however many requests it sends.
 */
export const IDEMPOTENCY_KEYS_PER_PRINCIPAL = 10_000;

export type IdempotencyKeyOptions = {
  store: RequestStore;
  /** Seals the kept answers (they may hold a signing secret) as endpoint secrets are sealed. */
  secrets: SecretBox;
  /** Unix ms; default: the system's, read at each call (a test that moves the system's time moves it). */
  now?: () => number;
  /** Default IDEMPOTENCY_KEYS_PER_PRINCIPAL. */
  maxPerPrincipal?: number;
};

const digest = (...parts: string[]): string => createHash('sha256').update(parts.join('\0')).digest('hex');

/** Whether an answer is final, so kept: not a refusal to run now that the same request may pass later. */
export const isFinalAnswer = (status: number): boolean => status < 500 && status !== 429 && status !== 408;

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header, as Stripe has it) for a POST that is
 * not idempotent by itself; it runs after the body is parsed. The first final answer is kept per
 * credential and key and replayed, with `Idempotent-Replayed: true`, to a request with the same
 * key, route and body; the same key with another request answers 422, and one that comes while the
 * first still runs 409. A passing failure is not kept, so the request may run again: a 5xx (the
 * store, a name server or a bound failed it), a 429 (a limit refused it; it did not run) or a 408.
 * A kept answer that cannot be opened (PLANT_WEBHOOK_SECRETS_KEY changed or removed since) is an
 * unexpected error: logged, answered 500. A request without the header, or with one the contract
 * refuses (ts-rest then answers 400), passes through.
 */
export const idempotencyKey =
  ({
    store,
    secrets,
    now = () => Date.now(),
    maxPerPrincipal = IDEMPOTENCY_KEYS_PER_PRINCIPAL,
  }: IdempotencyKeyOptions): RequestHandler =>
  (req, res, next) => {
    const header = req.headers['idempotency-key'];
    if (typeof header !== 'string' || header.length === 0 || header.length > IDEMPOTENCY_KEY_MAX) {
      next();
      return;
    }
    const principal = clientKey(req, res);
    const key = digest(principal, header);
    // Exact JSON: a body with an integer beyond 2^53 holds a bigint, which JSON.stringify refuses.
    const fingerprint = digest(req.method, req.originalUrl, stringifyExactJson(req.body ?? null));
    const at = now();
    store
      .claimIdempotencyKey({
        key,
        principal: digest(principal),
        fingerprint,
        at: new Date(at),
        expiredBefore: new Date(at - IDEMPOTENCY_KEY_TTL_MS),
        staleBefore: new Date(at - IDEMPOTENCY_STALE_MS),
        maxPerPrincipal,
      })
      .then((claim) => {
        switch (claim.outcome) {
          case 'running':
            sendError(res, 409, 'A request with this Idempotency-Key is still running; retry it in a moment.', {
              'Retry-After': '1',
            });
            return;
          case 'too-many': {
            const seconds = Math.max(1, Math.ceil((claim.oldestAt.getTime() + IDEMPOTENCY_KEY_TTL_MS - at) / 1000));
            sendError(
              res,
              429,
              `This client has ${maxPerPrincipal} Idempotency-Keys kept (at most, for 24 hours each); retry after ${seconds} s, or reuse the key of a request to retry it.`,
              { 'Retry-After': String(seconds) },
            );
            return;
          }
          case 'mismatch':
            sendError(
              res,
              422,
              'The Idempotency-Key was sent before with another request (route or body); send a new key with a new request.',
            );
            return;
          case 'done': {
            let body: string;
            try {
              body = secrets.open(key, claim.body);
            } catch (error) {
              // Thrown inside this promise's callback, it would end the process (an unhandled rejection).
              next(new Error('The answer kept for an Idempotency-Key cannot be opened.', { cause: error }));
              return;
            }
            res.status(claim.status).set(IDEMPOTENT_REPLAYED_HEADER, 'true').type('application/json').send(body);
            return;
          }
          case 'claimed': {
            const json = res.json.bind(res);
            // The answer is kept before it is sent: a client that lost it and retries finds it.
            res.json = (body: unknown) => {
              res.json = json;
              const kept = !isFinalAnswer(res.statusCode)
                ? store.releaseIdempotencyKey(key, fingerprint)
                : store.finishIdempotencyKey(key, fingerprint, res.statusCode, secrets.seal(key, JSON.stringify(body)));
              // Not kept (the store failed): the answer still goes out; a retry meets 409 until the claim is stale.
              kept.catch(() => {}).then(() => json(body));
              return res;
            };
            next();
          }
        }
      })
      .catch(next);
  };

/** Kept answers sealed per store operation at start. */
const SEAL_BATCH = 500;

/**
 * Run at start with PLANT_WEBHOOK_SECRETS_KEY: seals the answers kept in plain text (before the key
 * was set), as sealStoredSecrets does the endpoints' secrets. Each is replaced only if it is still
 * what was read; resolves with how many were sealed.
 */
export const sealKeptAnswers = async (store: RequestStore, secrets: SecretBox): Promise<number> => {
  if (secrets.keyId === undefined) return 0;
  let sealed = 0;
  for (;;) {
    const plain = await store.plainKeptAnswers(SEAL_BATCH);
    for (const { key, body } of plain) {
      if (await store.replaceKeptAnswer(key, body, secrets.seal(key, body))) sealed += 1;
    }
    if (plain.length < SEAL_BATCH) return sealed;
  }
};
