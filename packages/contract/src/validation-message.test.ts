import { describe, expect, it } from 'vitest';
import { type ZodError, z } from 'zod';
import { INT64_MAX, INT64_MIN } from './int64.ts';
import { NAME_MAX_LENGTH, NewPlant } from './schemas.ts';
import { validationMessage } from './validation-message.ts';

const errorOf = (schema: z.ZodType, value: unknown): ZodError => {
  const result = schema.safeParse(value);
  if (result.success) throw new Error('expected the value to be invalid');
  return result.error;
};

const bodyMessage = (value: unknown) => validationMessage('request body', errorOf(NewPlant, value));

describe('validationMessage', () => {
  it('names a missing field', () => {
    expect(bodyMessage({ id: 1 })).toBe('Invalid request body: name is required.');
  });

  it('names a field of the wrong type', () => {
    expect(bodyMessage({ id: 1, name: 42 })).toBe('Invalid request body: name must be a string.');
    expect(bodyMessage({ id: 1, name: 'Fern', tag: null })).toBe('Invalid request body: tag must be a string.');
  });

  it('names empty and over-long strings with the limit', () => {
    expect(bodyMessage({ id: 1, name: '' })).toBe('Invalid request body: name must not be empty.');
    expect(bodyMessage({ id: 1, name: 'n'.repeat(NAME_MAX_LENGTH + 1) })).toBe(
      `Invalid request body: name must be at most ${NAME_MAX_LENGTH} characters.`,
    );
  });

  it('names an id outside int64 with the range', () => {
    expect(bodyMessage({ id: INT64_MAX + 1n, name: 'Fern' })).toBe(
      `Invalid request body: id must be an integer from ${INT64_MIN} to ${INT64_MAX}.`,
    );
    expect(bodyMessage({ id: '1', name: 'Fern' })).toBe(
      `Invalid request body: id must be an integer from ${INT64_MIN} to ${INT64_MAX}.`,
    );
  });

  it('says a sentence once even when the value breaks several checks with it', () => {
    const result = NewPlant.safeParse({ id: Number.POSITIVE_INFINITY, name: 'Fern' });
    if (result.success) throw new Error('Infinity must not be an id');
    expect(validationMessage('request body', result.error)).toBe(
      `Invalid request body: id must be an integer from ${-(2n ** 63n)} to ${2n ** 63n - 1n}.`,
    );
  });

  it('says an unsafe number id must be a bigint', () => {
    expect(bodyMessage({ id: 2 ** 60, name: 'Fern' })).toBe(
      'Invalid request body: id must be a bigint when beyond ±(2^53 − 1), so that it stays exact.',
    );
  });

  it('calls an empty path the top-level value', () => {
    for (const value of [[], 'plant', 3, null]) {
      expect(bodyMessage(value)).toBe('Invalid request body: the top-level value must be a JSON object.');
    }
  });

  it('lists every issue in order, separated by semicolons, as one sentence', () => {
    expect(bodyMessage({ id: 1.5, name: '', tag: 3 })).toBe(
      `Invalid request body: id must be an integer from ${INT64_MIN} to ${INT64_MAX}; name must not be empty; tag must be a string.`,
    );
  });

  it('joins nested paths with dots, array indexes included', () => {
    const schema = z.object({
      plant: z.object({ tags: z.array(z.string({ invalid_type_error: 'must be a string' })) }),
    });
    expect(validationMessage('request body', errorOf(schema, { plant: { tags: ['a', 1] } }))).toBe(
      'Invalid request body: plant.tags.1 must be a string.',
    );
  });

  it('uses the given place in the sentence', () => {
    const schema = z.object({ limit: z.number({ invalid_type_error: 'must be a number' }) });
    expect(validationMessage('query parameters', errorOf(schema, { limit: 'ten' }))).toBe(
      'Invalid query parameters: limit must be a number.',
    );
  });

  const fields = (count: number) =>
    z.object(
      Object.fromEntries(
        Array.from({ length: count }, (_, i) => [`f${i}`, z.string({ required_error: 'is required' })]),
      ),
    );

  it('lists up to five issues in full', () => {
    expect(validationMessage('request body', errorOf(fields(5), {}))).toBe(
      'Invalid request body: f0 is required; f1 is required; f2 is required; f3 is required; f4 is required.',
    );
  });

  it('lists the first five issues and counts the rest', () => {
    expect(validationMessage('request body', errorOf(fields(8), {}))).toBe(
      'Invalid request body: f0 is required; f1 is required; f2 is required; f3 is required; f4 is required; and 3 more.',
    );
  });

  it('keeps a message short however many issues there are', () => {
    const message = validationMessage('request body', errorOf(fields(1000), {}));
    expect(message).toMatch(/; and 995 more\.$/);
    expect(message.length).toBeLessThan(200);
  });
});
