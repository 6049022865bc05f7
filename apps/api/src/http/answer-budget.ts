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
 * counted from the reservation until the response closes (sent to the socket and flushed, or cut
 * off): what admission's count of requests in flight cannot bound, since one such answer may be a
 * thousand times another.
 */
export type AnswerBudget = {
  /**
   * Reserves `bytes` for the answer of `res` to `client` (a principal's key, see `clientKey`), or
   * throws an HttpError 503 with Retry-After when the budget, or the client's share of it, cannot
   * hold them now. A client holding nothing is refused only when the whole budget cannot hold its
   * answer, and the budget's first reservation always fits, whatever its size.
   */
  reserve(res: ServerResponse, bytes: number, client: string): Reservation;
};

/**
 * The part of the budget kept back for clients holding nothing: those holding answers share the
 * rest, so however many of them read slowly (or not at all), a newcomer's first answer fits.
 */
const KEPT_BACK_DIVISOR = 4;

const MESSAGE =
  'The service is at its limit of large answers in flight (PLANT_MAX_ANSWER_BYTES); retry after the Retry-After delay, or with a smaller limit.';
const SHARE_MESSAGE =
  'This client holds its share of large answers in flight (PLANT_MAX_ANSWER_BYTES, shared by the clients holding answers); read the answers it has asked for, then retry after the Retry-After delay.';

const refused = (message: string) => new HttpError(503, message, { 'Retry-After': '1' });

/**
 * A budget of `maxBytes` (PLANT_MAX_ANSWER_BYTES). A quarter is kept back for the first answer of
 * clients holding nothing; clients holding answers share the other three quarters equally (a share
 * that shrinks as more of them hold answers, never below `largestPageBytes`), so that no client,
 * nor a few together, can starve the others.
 */
export const answerBudget = (maxBytes: number = CONFIG_DEFAULTS.maxAnswerBytes, largestPageBytes = 0): AnswerBudget => {
  const held = maxBytes - maxBytes / KEPT_BACK_DIVISOR;
  let used = 0;
  /** Bytes held per client; a client holding nothing has no entry, so idle clients take no room. */
  const byClient = new Map<string, number>();
  const give = (client: string, bytes: number) => {
    used -= bytes;
    const left = (byClient.get(client) ?? 0) - bytes;
    if (left > 0) byClient.set(client, left);
    else byClient.delete(client);
  };
  /** Why `client`, holding `clientUsed`, may not take `bytes` more now; undefined when it may. */
  const refusal = (clientUsed: number, bytes: number): string | undefined => {
    if (clientUsed === 0) return used > 0 && used + bytes > maxBytes ? MESSAGE : undefined;
    if (clientUsed + bytes > Math.max(held / byClient.size, largestPageBytes)) return SHARE_MESSAGE;
    return used + bytes > held ? MESSAGE : undefined;
  };
  return {
    reserve(res, bytes, client) {
      // An empty answer holds nothing.
      if (bytes <= 0) return { shrink: () => {} };
      const clientUsed = byClient.get(client) ?? 0;
      const why = refusal(clientUsed, bytes);
      if (why !== undefined) throw refused(why);
      // A response that closed already will not tell it again: nothing to hold for it.
      if (res.closed) return { shrink: () => {} };
      let holding = bytes;
      used += holding;
      byClient.set(client, clientUsed + holding);
      res.once('close', () => {
        give(client, holding);
        holding = 0;
      });
      return {
        shrink(to) {
          if (to >= holding) return;
          give(client, holding - to);
          holding = to;
        },
      };
    },
  };
};
