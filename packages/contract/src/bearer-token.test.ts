import { describe, expect, it } from 'vitest';
import { readBearerToken } from './bearer-token.ts';

describe('readBearerToken', () => {
  it('reads the token of a Bearer header, whatever the scheme case and spacing', () => {
    for (const header of ['Bearer abc.DEF-123_~+/==', 'bearer abc.DEF-123_~+/==', '  BEARER   abc.DEF-123_~+/==  ']) {
      expect(readBearerToken(header)).toBe('abc.DEF-123_~+/==');
    }
  });

  it('answers 401 when no header or another scheme is sent', () => {
    const missing = { status: 401, message: 'Authentication is required: send Authorization: Bearer <token>.' };
    expect(readBearerToken(undefined)).toStrictEqual(missing);
    expect(readBearerToken('  ')).toStrictEqual(missing);
    expect(readBearerToken('Basic dXNlcjpwYXNz')).toStrictEqual({
      status: 401,
      message: 'Unsupported authorization scheme: use Bearer.',
    });
  });

  it('answers 400 when the header is not Bearer followed by one token', () => {
    for (const header of ['Bearer', 'Bearer a b', 'Bearer a=b', 'Bearer ä']) {
      expect(readBearerToken(header)).toStrictEqual({
        status: 400,
        message: 'The Authorization header must be Bearer followed by one token.',
      });
    }
  });
});
