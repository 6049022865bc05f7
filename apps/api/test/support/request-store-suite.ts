import { describe, expect, it } from 'vitest';
import type { PlantStore } from '../../src/store/plant-store.ts';
import { PRUNED_PER_WRITE } from '../../src/store/request-store.ts';

const T = 1_700_000_000_000;
const at = (ms: number) => new Date(T + ms);

/** The request store's behaviour every backend must show; part of describePlantStore. */
export const describeRequestStore = (store: () => PlantStore): void => {
  describe('idempotency keys', () => {
    const claim = (key: string, fingerprint: string, ms: number, { principal = 'p', most = 100 } = {}) =>
      store().requests.claimIdempotencyKey({
        key,
        principal,
        fingerprint,
        at: at(ms),
        expiredBefore: at(ms - 1_000_000),
        staleBefore: at(ms - 500_000),
        maxPerPrincipal: most,
      });

    it('claims a key once, keeps its answer, and frees it once expired or stale', async () => {
      const requests = store().requests;
      expect(await claim('k1', 'a', 0)).toStrictEqual({ outcome: 'claimed' });
      expect(await claim('k1', 'a', 1)).toStrictEqual({ outcome: 'running' });
      expect(await claim('k1', 'b', 1)).toStrictEqual({ outcome: 'mismatch' });
      await requests.finishIdempotencyKey('k1', 'a', 201, '{"secret":"whsec_x"}');
      expect(await claim('k1', 'a', 2)).toStrictEqual({ outcome: 'done', status: 201, body: '{"secret":"whsec_x"}' });
      // A finished key is not stale: only its expiry frees it.
      expect(await claim('k1', 'a', 600_000)).toMatchObject({ outcome: 'done' });
      expect(await claim('k1', 'b', 1_000_001)).toStrictEqual({ outcome: 'claimed' });
      // An unfinished claim whose process died is claimed again once stale; a released one at once.
      expect(await claim('k2', 'a', 0)).toStrictEqual({ outcome: 'claimed' });
      expect(await claim('k2', 'a', 500_001)).toStrictEqual({ outcome: 'claimed' });
      await requests.releaseIdempotencyKey('k2', 'a');
      expect(await claim('k2', 'a', 500_002)).toStrictEqual({ outcome: 'claimed' });
    });

    it('refuses a new key while the principal holds its most live keys, until the oldest expires', async () => {
      for (const [index, key] of ['k1', 'k2', 'k3'].entries()) {
        expect(await claim(key, 'a', index, { most: 3 })).toStrictEqual({ outcome: 'claimed' });
      }
      expect(await claim('k4', 'a', 10, { most: 3 })).toStrictEqual({ outcome: 'too-many', oldestAt: at(0) });
      // A key it holds still answers; another principal is not held by its keys.
      expect(await claim('k1', 'a', 10, { most: 3 })).toStrictEqual({ outcome: 'running' });
      expect(await claim('k5', 'a', 10, { principal: 'q', most: 3 })).toStrictEqual({ outcome: 'claimed' });
      expect(await claim('k4', 'a', 1_000_001, { most: 3 })).toStrictEqual({ outcome: 'claimed' });
    });

    it('deletes expired keys as keys are claimed, a few at each claim', async () => {
      const keys = PRUNED_PER_WRITE + 2;
      for (let index = 0; index < keys; index += 1) await claim(`old${index}`, 'a', index);
      // Long after: each claim deletes PRUNED_PER_WRITE of them; the expired ones still answer nothing.
      expect(await claim('new1', 'a', 3_000_000)).toStrictEqual({ outcome: 'claimed' });
      expect(await claim('new2', 'a', 3_000_001)).toStrictEqual({ outcome: 'claimed' });
      // Every old key is gone: claimed anew with another request, no mismatch.
      for (let index = 0; index < keys; index += 1) {
        expect(await claim(`old${index}`, 'b', 3_000_002)).toStrictEqual({ outcome: 'claimed' });
      }
    });

    it('lists the answers kept in plain text, and replaces one only if it is still what was read', async () => {
      const requests = store().requests;
      await claim('k1', 'a', 0);
      await requests.finishIdempotencyKey('k1', 'a', 201, '{"secret":"whsec_x"}');
      await claim('k2', 'a', 0);
      await requests.finishIdempotencyKey('k2', 'a', 200, 'whenc_v1.id.nonce.sealed');
      // Still running: nothing kept yet.
      await claim('k3', 'a', 0);
      expect(await requests.plainKeptAnswers(10)).toStrictEqual([{ key: 'k1', body: '{"secret":"whsec_x"}' }]);
      expect(await requests.replaceKeptAnswer('k1', 'other', 'whenc_v1.x')).toBe(false);
      expect(await requests.replaceKeptAnswer('k1', '{"secret":"whsec_x"}', 'whenc_v1.x')).toBe(true);
      expect(await requests.plainKeptAnswers(10)).toStrictEqual([]);
    });
  });

  describe('test-delivery windows', () => {
    const take = (key: string, ms: number) => store().requests.takeWebhookTest(key, at(ms), 2, 60_000);

    it('takes `most` tests a window, then says when the window has room again', async () => {
      expect(await take('w', 0)).toStrictEqual({ outcome: 'taken' });
      expect(await take('w', 10_000)).toStrictEqual({ outcome: 'taken' });
      expect(await take('w', 20_000)).toStrictEqual({ outcome: 'limited', retryInMs: 40_000 });
      // Another key has a window of its own.
      expect(await take('v', 20_000)).toStrictEqual({ outcome: 'taken' });
      expect(await take('w', 60_000)).toStrictEqual({ outcome: 'taken' });
      expect(await take('w', 60_001)).toStrictEqual({ outcome: 'taken' });
      expect(await take('w', 60_002)).toStrictEqual({ outcome: 'limited', retryInMs: 59_998 });
    });

    it('counts every one of many tests taken at once', async () => {
      const taken = await Promise.all(Array.from({ length: 6 }, () => take('many', 0)));
      expect(taken.filter(({ outcome }) => outcome === 'taken')).toHaveLength(2);
    });
  });
};
