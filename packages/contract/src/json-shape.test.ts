import { describe, expect, it } from 'vitest';
import { jsonContentTypeProblem, jsonShapeProblem, MAX_JSON_DEPTH } from './json-shape.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('jsonShapeProblem', () => {
  it.each([
    '{"id":1,"name":"Fern","tag":"a"}',
    '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
    '{"name":"has \\"quotes\\", commas, {braces} and [brackets]","id":1}',
    '{"k":"\\\\"}',
    '[1,"a",{"x":1},{"x":2}]',
    '"just a string"',
    nested(MAX_JSON_DEPTH),
    ' { "id" : 1 , "name" : "spaced" } ',
  ])('accepts %s', (text) => {
    expect(jsonShapeProblem(text)).toBeUndefined();
  });

  it.each([
    ['{"id":1,"id":2}', /key "id" twice/],
    ['{"id":1,"name":"a","\\u0069d":2}', /key "id" twice/],
    ['{"outer":{"x":1,"y":2,"x":3}}', /key "x" twice/],
    ['[{"a":1,"a":1}]', /key "a" twice/],
    [nested(MAX_JSON_DEPTH + 1), /nested deeper than 32 levels/],
    [`{"id":1,"name":"x","extra":${nested(5000)}}`, /nested deeper/],
  ])('refuses %s', (text, problem) => {
    expect(jsonShapeProblem(text)).toMatch(problem);
  });

  it('scopes keys to their own object', () => {
    expect(jsonShapeProblem('{"a":{"b":1},"b":{"a":1}}')).toBeUndefined();
  });
});

describe('jsonContentTypeProblem', () => {
  it('accepts JSON and +json media types, with no charset or UTF-8', () => {
    for (const header of [
      'application/json',
      'Application/JSON',
      'application/json; charset=utf-8',
      'application/json; charset="UTF-8"',
      'application/merge-patch+json',
    ]) {
      expect(jsonContentTypeProblem(header)).toBeUndefined();
    }
  });

  it('refuses no media type, another one, or another charset', () => {
    expect(jsonContentTypeProblem(undefined)).toBe('Content-Type must be application/json (got none).');
    expect(jsonContentTypeProblem('text/plain')).toBe('Content-Type must be application/json (got "text/plain").');
    expect(jsonContentTypeProblem('application/json; charset=latin1')).toBe('JSON bodies must be encoded as UTF-8.');
  });
});
