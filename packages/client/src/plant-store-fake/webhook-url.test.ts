import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from './webhook-url.ts';

const refused = (host: string, cause: string) => ({ refusal: `url must reach a public address: ${host} is ${cause}.` });

describe('checkWebhookUrl', () => {
  it('refuses the non-public addresses and loopback names the service refuses, with its sentences', () => {
    const cases: [url: string, host: string, cause: string][] = [
      ['https://0.1.2.3/', '0.1.2.3', 'an unspecified address'],
      ['https://10.20.30.40/', '10.20.30.40', 'a private address'],
      ['https://100.64.0.1/', '100.64.0.1', 'a carrier-grade NAT (shared) address'],
      ['https://100.127.255.255/', '100.127.255.255', 'a carrier-grade NAT (shared) address'],
      ['https://127.0.0.2/', '127.0.0.2', 'a loopback address'],
      ['https://169.254.1.1/', '169.254.1.1', 'a link-local address'],
      ['https://172.16.0.1/', '172.16.0.1', 'a private address'],
      ['https://172.31.255.255/', '172.31.255.255', 'a private address'],
      ['https://192.168.1.1/', '192.168.1.1', 'a private address'],
      ['https://[::1]/', '::1', 'a loopback address'],
      ['https://[::]/', '::', 'an unspecified address'],
      ['https://[fc00::1]/', 'fc00::1', 'a unique-local address'],
      ['https://[fd12::1]/', 'fd12::1', 'a unique-local address'],
      ['https://[fe80::1]/', 'fe80::1', 'a link-local address'],
      ['https://[febf::1]/', 'febf::1', 'a link-local address'],
      ['https://localhost/', 'localhost', 'a loopback name'],
      ['https://hooks.localhost/', 'hooks.localhost', 'a loopback name'],
    ];
    for (const [url, host, cause] of cases)
      expect(checkWebhookUrl(url, false), url).toStrictEqual(refused(host, cause));
  });

  it('accepts public addresses, those just outside each range too, and names that only look local', () => {
    for (const url of [
      'https://1.2.3.4/',
      'https://11.0.0.1/',
      'https://100.63.255.255/',
      'https://100.128.0.1/',
      'https://128.0.0.1/',
      'https://169.253.1.1/',
      'https://172.15.255.255/',
      'https://172.32.0.1/',
      'https://192.169.0.1/',
      'https://[2606:4700::1]/',
      // Public, with the unique-local and link-local prefixes further in.
      'https://[2606:4700::fc1]/',
      'https://[2606:4700::fe80]/',
      'https://localhost.example.com/',
      'https://mylocalhost/',
      'https://10.example.com/',
      'https://hooks.example.com/',
    ]) {
      expect(checkWebhookUrl(url, false), url).toStrictEqual({ url });
    }
  });

  it('takes any address when private targets are allowed', () => {
    expect(checkWebhookUrl('http://127.0.0.1:8080/hook', true)).toStrictEqual({ url: 'http://127.0.0.1:8080/hook' });
    expect(checkWebhookUrl('http://[::1]/hook', true)).toStrictEqual({ url: 'http://[::1]/hook' });
  });
});
