import type { ServerResponse } from 'node:http';
import { HttpError } from './http-error.ts';

/**
 * PLANT_MAX_ANSWER_BYTES by default: 63 of the largest pages at once. Such a page holds 2.2 times
 * its bytes in the heap while answered (scripts/answer-heap.ts), so 35 MiB at most, beside the 61
 * MiB that admission's bounds let in (docs/operations.md, Overload), within `pnpm start`'s 160 MiB
 * old space.
 */
export const ANSWER_BUDGET_DEFAULT_BYTES = 16 * 1024 * 1024;

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
   * Reserves `bytes` for the answer of `res`, or throws an HttpError 503 with Retry-After when the
   * budget cannot hold them now. The first reservation always fits, whatever its size.
   */
  reserve(res: ServerResponse, bytes: number): Reservation;
};

const MESSAGE =
  'The service is at its limit of large answers in flight (PLANT_MAX_ANSWER_BYTES); retry after the Retry-After delay, or with a smaller limit.';

export const answerBudget = (maxBytes: number = ANSWER_BUDGET_DEFAULT_BYTES): AnswerBudget => {
  let used = 0;
  return {
    reserve(res, bytes) {
      if (used > 0 && used + bytes > maxBytes) throw new HttpError(503, MESSAGE, { 'Retry-After': '1' });
      // A response that closed already will not tell it again: nothing to hold for it.
      if (res.closed) return { shrink: () => {} };
      let held = bytes;
      used += held;
      res.once('close', () => {
        used -= held;
        held = 0;
      });
      return {
        shrink(to) {
          if (to >= held) return;
          used -= held - to;
          held = to;
        },
      };
    },
  };
};
