import type { ServerResponse } from 'node:http';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';
import { HttpError } from './http-error.ts';

/** A reservation made by `reserve`, released when its response closes. */
export type Reservation = {
  /** Gives back what the answer turned out not to need, once its rows are known. */
  shrink(bytes: number): void;
};

/**
 * The bytes of answers that a client chooses the size of (lists of plants, deliveries, endpoints),
 * counted from before the store is asked until the response closes (sent to the socket and flushed,
 * or cut off): what admission's count of requests in flight cannot bound, since one such answer may
 * be a thousand times another.
 */
export type AnswerBudget = {
  /**
   * Reserves `bytes` for the answer of `res` to `client` (a credential's key, see `clientKey`), or
   * throws an HttpError 503 with Retry-After when the budget, or the client's share of it, cannot
   * hold them now. A client's first reservation always fits its share, and the budget's first
   * reservation always fits the budget, whatever their size.
   */
  reserve(res: ServerResponse, bytes: number, client: string): Reservation;
};

/**
 * A client's share of the budget: a quarter, so that one client reading its answers slowly (or not
 * at all) leaves the rest to the others; never less than the largest page of plants. A client
 * holding nothing may always take one answer, however large.
 */
const CLIENT_SHARE_DIVISOR = 4;

const MESSAGE =
  'The service is at its limit of large answers in flight (PLANT_MAX_ANSWER_BYTES); retry after the Retry-After delay, or with a smaller limit.';
const SHARE_MESSAGE =
  'This client holds its share of large answers in flight (a quarter of PLANT_MAX_ANSWER_BYTES); read the answers it has asked for, then retry after the Retry-After delay.';

/**
 * A budget of `maxBytes` (PLANT_MAX_ANSWER_BYTES), of which each client may hold a quarter, or
 * `largestPageBytes` when that is more.
 */
export const answerBudget = (maxBytes: number = CONFIG_DEFAULTS.maxAnswerBytes, largestPageBytes = 0): AnswerBudget => {
  const share = Math.max(maxBytes / CLIENT_SHARE_DIVISOR, largestPageBytes);
  let used = 0;
  /** Bytes held per client; a client holding nothing has no entry, so idle clients take no room. */
  const byClient = new Map<string, number>();
  const give = (client: string, bytes: number) => {
    used -= bytes;
    const left = (byClient.get(client) ?? 0) - bytes;
    if (left > 0) byClient.set(client, left);
    else byClient.delete(client);
  };
  return {
    reserve(res, bytes, client) {
      const clientUsed = byClient.get(client) ?? 0;
      if (used > 0 && used + bytes > maxBytes) throw new HttpError(503, MESSAGE, { 'Retry-After': '1' });
      if (clientUsed > 0 && clientUsed + bytes > share) throw new HttpError(503, SHARE_MESSAGE, { 'Retry-After': '1' });
      // A response that closed already will not tell it again: nothing to hold for it.
      if (res.closed) return { shrink: () => {} };
      let held = bytes;
      used += held;
      byClient.set(client, clientUsed + held);
      res.once('close', () => {
        give(client, held);
        held = 0;
      });
      return {
        shrink(to) {
          if (to >= held) return;
          give(client, held - to);
          held = to;
        },
      };
    },
  };
};
