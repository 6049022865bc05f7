import { describe, expect, it } from 'vitest';
import { normalizeWebhookUrl, webhookUrlSchemeProblem } from './webhook-url.ts';

describe('normalizeWebhookUrl', () => {
  it.each([
    ['https://Receiver.Example.COM:443/a/../hooks?x=1#frag', 'https://receiver.example.com/hooks?x=1'],
    ['https://receiver.example.com', 'https://receiver.example.com/'],
    ['https://receiver.example.com/p%61th/ü', 'https://receiver.example.com/p%61th/%C3%BC'],
    ['https://bücher.example/', 'https://xn--bcher-kva.example/'],
    ['https://[0:0::1]:8443/#', 'https://[::1]:8443/'],
    ['HTTP://0x7f.1/', 'http://127.0.0.1/'],
  ])('stores %s as %s', (input, stored) => {
    expect(normalizeWebhookUrl(input)).toStrictEqual({ url: stored });
  });

  it.each([
    ' https://receiver.example.com/',
    'https://receiver.example.com/ ',
    'https://receiver.example.com/\nX-Injected: 1',
    'https://receiver.example.com/a\tb',
    'https://receiver.example.com/\r',
    'https://receiver.example.com/\u0000',
    'https://receiver.example.com/\u007f',
    'https://receiver.example.com/\u00a0',
    'https://receiver.example.com/a b',
  ])('refuses %j before parsing', (input) => {
    expect(normalizeWebhookUrl(input)).toStrictEqual({
      refusal: 'url must not contain whitespace or control characters.',
    });
  });
});

describe('webhookUrlSchemeProblem', () => {
  it('takes https, and http only where private targets are allowed', () => {
    expect(webhookUrlSchemeProblem(new URL('https://receiver.example/'), false)).toBeUndefined();
    expect(webhookUrlSchemeProblem(new URL('http://receiver.example/'), false)).toBe('url must use https (got http).');
    expect(webhookUrlSchemeProblem(new URL('http://receiver.example/'), true)).toBeUndefined();
    expect(webhookUrlSchemeProblem(new URL('ftp://receiver.example/'), true)).toBe('url must use https (got ftp).');
  });

  it('refuses credentials in the URL', () => {
    for (const url of ['https://user@receiver.example/', 'https://:secret@receiver.example/']) {
      expect(webhookUrlSchemeProblem(new URL(url), true)).toBe('url must not contain a user name or password.');
    }
  });
});
