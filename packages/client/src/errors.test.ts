import { describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  apiErrorFor,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PlantApiError,
  PlantClientError,
  PlantConnectionError,
  PlantTimeoutError,
  RateLimitError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
} from './errors.ts';

const headers = new Headers({ 'x-request-id': 'req-7' });
const answer = (status: number) => apiErrorFor({ status, code: status, message: `status ${status}`, headers });

const statusClasses = [
  [400, BadRequestError],
  [401, AuthenticationError],
  [403, PermissionDeniedError],
  [404, NotFoundError],
  [409, ConflictError],
  [413, PayloadTooLargeError],
  [415, UnsupportedMediaTypeError],
  [429, RateLimitError],
  [500, InternalServerError],
  [502, InternalServerError],
  [503, ServiceUnavailableError],
  [504, InternalServerError],
] as const;

const allClasses = [
  PlantClientError,
  PlantApiError,
  PlantConnectionError,
  PlantTimeoutError,
  ...new Set(statusClasses.map(([, Class]) => Class)),
];

describe('apiErrorFor', () => {
  it.each(statusClasses)('answers %s with %o', (status, Class) => {
    const error = answer(status);
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(PlantApiError);
    expect(error).toMatchObject({ name: Class.name, status, code: status, message: `status ${status}` });
    expect(error.requestId).toBe('req-7');
  });

  it.each([405, 408, 418, 431])('answers %s, which has no class of its own, with a plain PlantApiError', (status) => {
    const error = answer(status);
    expect(error.constructor).toBe(PlantApiError);
    expect(error).toMatchObject({ name: 'PlantApiError', status });
  });

  it('makes a 503 an InternalServerError too', () => {
    expect(InternalServerError.isInstance(answer(503))).toBe(true);
    expect(ServiceUnavailableError.isInstance(answer(500))).toBe(false);
  });
});

describe('isInstance', () => {
  it.each(statusClasses)('recognises a %s error as its class and its ancestors only', (status, Class) => {
    const error = answer(status);
    const ancestors = new Set<unknown>([Class, PlantApiError, PlantClientError]);
    if (Class === ServiceUnavailableError) ancestors.add(InternalServerError);
    for (const Other of allClasses) expect(Other.isInstance(error), Other.name).toBe(ancestors.has(Other));
  });

  it.each([
    [new PlantConnectionError('x'), PlantConnectionError],
    [new PlantTimeoutError('x'), PlantTimeoutError],
    [new PlantClientError('x'), PlantClientError],
  ])('recognises %o as its class and PlantClientError only', (error, Class) => {
    for (const Other of allClasses) {
      expect(Other.isInstance(error), Other.name).toBe(Other === Class || Other === PlantClientError);
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
    expect(error).not.toBeInstanceOf(NotFoundError);
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(ConflictError.isInstance(error)).toBe(false);
    expect(PlantTimeoutError.isInstance(error)).toBe(false);
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
