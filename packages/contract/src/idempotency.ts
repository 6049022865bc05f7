import { z } from 'zod';
import { maxCharacters } from './characters.ts';

/** Longest Idempotency-Key accepted, in characters (Stripe's bound). */
export const IDEMPOTENCY_KEY_MAX = 255;
/** How long the first answer to a request with an Idempotency-Key is kept and replayed. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3_600_000;
/** The header on an answer replayed for an Idempotency-Key, with the value `true`. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * The headers of a POST that is not idempotent by itself (draft-ietf-httpapi-idempotency-key-header).
 * Lower case: Express hands ts-rest the request's headers lower-cased.
 */
export const IdempotencyHeaders = z.object({
  'idempotency-key': maxCharacters(z.string().min(1, 'must not be empty'), IDEMPOTENCY_KEY_MAX)
    .optional()
    .describe(
      `A key the client chooses per logical request (a UUID), at most ${IDEMPOTENCY_KEY_MAX} characters. The first answer is kept for 24 hours for this credential and key, and a retry with the same key and body gets it again, with ${IDEMPOTENT_REPLAYED_HEADER}: true; the same key with another body answers 422, and a retry while the first request still runs answers 409.`,
    ),
});
