/**
 * Reads until `done` holds for what was read, every `intervalMs`; throws with the last value read
 * (bigints as strings) once `timeoutMs` has passed.
 */
export const until = async <T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      const seen = JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? String(v) : v));
      throw new Error(`Condition not met within ${timeoutMs} ms: ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};
