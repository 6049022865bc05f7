import { describe, expect, it, vi } from 'vitest';
import * as errors from './errors.ts';

const headers = new Headers({ 'x-request-id': 'req-7' });
const answer = (status: number) => errors.apiErrorFor({ status, code: status, message: `status ${status}`, headers });

const statusClasses = [
  [400, errors.BadRequestError],
  [401, errors.AuthenticationError],
  [403, errors.PermissionDeniedError],
  [404, errors.NotFoundError],
  [409, errors.ConflictError],
  [413, errors.PayloadTooLargeError],
  [415, errors.UnsupportedMediaTypeError],
  [429, errors.RateLimitError],
  [500, errors.InternalServerError],
  [502, errors.InternalServerError],
  [503, errors.ServiceUnavailableError],
  [504, errors.InternalServerError],
] as const;

const allClasses = [
  errors.PlantClientError,
  errors.PlantApiError,
  errors.PlantConnectionError,
  errors.PlantTimeoutError,
  errors.PlantAbortError,
  ...new Set(statusClasses.map(([, Class]) => Class)),
];

describe('apiErrorFor', () => {
  it.each(statusClasses)('answers %s with %o', (status, Class) => {
    const error = answer(status);
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(errors.PlantApiError);
    expect(error).toMatchObject({ name: Class.name, status, code: status, message: `status ${status}` });
    expect(error.requestId).toBe('req-7');
  });

  it.each([405, 408, 418, 431])('answers %s, which has no class of its own, with a plain PlantApiError', (status) => {
    const error = answer(status);
    expect(error.constructor).toBe(errors.PlantApiError);
    expect(error).toMatchObject({ name: 'PlantApiError', status });
  });

  it('makes a 503 an InternalServerError too', () => {
    expect(errors.InternalServerError.isInstance(answer(503))).toBe(true);
    expect(errors.ServiceUnavailableError.isInstance(answer(500))).toBe(false);
  });
});

describe('isInstance', () => {
  it.each(statusClasses)('recognises a %s error as its class and its ancestors only', (status, Class) => {
    const error = answer(status);
    const ancestors = new Set<unknown>([Class, errors.PlantApiError, errors.PlantClientError]);
    if (Class === errors.ServiceUnavailableError) ancestors.add(errors.InternalServerError);
    for (const Other of allClasses) expect(Other.isInstance(error), Other.name).toBe(ancestors.has(Other));
  });

  it.each([
    [new errors.PlantConnectionError('x'), errors.PlantConnectionError],
    [new errors.PlantTimeoutError('x'), errors.PlantTimeoutError],
    [new errors.PlantAbortError('x'), errors.PlantAbortError],
    [new errors.PlantClientError('x'), errors.PlantClientError],
  ])('recognises %o as its class and PlantClientError only', (error, Class) => {
    for (const Other of allClasses) {
      expect(Other.isInstance(error), Other.name).toBe(Other === Class || Other === errors.PlantClientError);
    }
  });

  it.each(allClasses.map((Class) => [Class.name, Class] as const))(
    '%s.isInstance accepts an error from another copy of the package',
    (name, Class) => {
      const foreign = { name, message: 'x', [Symbol.for(`@org/plant-client/${name}`)]: true };
      expect(foreign).not.toBeInstanceOf(Class);
      expect(Class.isInstance(foreign)).toBe(true);
    },
  );

  it('holds across a freshly loaded copy of the classes', async () => {
    vi.resetModules();
    const copy = await import('./errors.ts');
    const error = copy.apiErrorFor({ status: 404, code: 404, message: 'x', headers });
    expect(error).not.toBeInstanceOf(errors.NotFoundError);
    expect(errors.NotFoundError.isInstance(error)).toBe(true);
    expect(errors.PlantApiError.isInstance(error)).toBe(true);
    expect(errors.PlantClientError.isInstance(error)).toBe(true);
    expect(errors.ConflictError.isInstance(error)).toBe(false);
    expect(errors.PlantTimeoutError.isInstance(error)).toBe(false);
  });

  it.each([
    ['an ordinary Error', new Error('x')],
    ['a TypeError', new TypeError('fetch failed')],
    ['an Error named like one of ours', Object.assign(new Error('x'), { name: 'NotFoundError', status: 404 })],
    ['a brand that is not true', { [Symbol.for('@org/plant-client/PlantApiError')]: 'yes' }],
    ['a string brand key', { '@org/plant-client/PlantApiError': true }],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'PlantApiError'],
  ])('is false for %s', (_, value) => {
    for (const Class of allClasses) expect(Class.isInstance(value), Class.name).toBe(false);
  });
});
