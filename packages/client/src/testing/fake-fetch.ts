import { vi } from 'vitest';
import type { FetchLike } from '../fetcher.ts';

/** A fetch that never answers: it rejects only when its signal aborts, as the real one does. */
export const hanging = () =>
  vi.fn<FetchLike>(
    (_input, init) =>
      new Promise((_resolve, reject) => {
        const signal = init.signal as AbortSignal;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  );
