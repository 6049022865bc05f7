import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { newSecret, secretKey, signedHeaders } from './signature.ts';

const BODY = '{"type":"plant.created","data":{"id":1,"name":"Fern"}}';
const now = () => Math.floor(Date.now() / 1000);

/** standardwebhooks' own verification, as a receiver holding `secret` runs it. */
const verify = (secret: string, headers: Record<string, string>, body = BODY) =>
  new Webhook(secret).verify(body, headers);

describe('newSecret', () => {
  it('makes a whsec_ secret of 32 random bytes, new each time', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(secret).export()).toHaveLength(32);
    expect(newSecret()).not.toBe(secret);
  });
});

describe('secretKey', () => {
  it('decodes the base64 after whsec_, and a secret given without the prefix the same way', () => {
    const key = Buffer.from('0123456789abcdef0123456789abcdef');
    const base64 = key.toString('base64');
    expect(secretKey(`whsec_${base64}`).export()).toEqual(key);
    expect(secretKey(base64).export()).toEqual(key);
  });
});

describe('signedHeaders', () => {
  it('signs so that a Standard Webhooks receiver with the secret verifies the body', () => {
    const secret = newSecret();
    const timestamp = now();
    const headers = signedHeaders([secretKey(secret)], 'msg_1', timestamp, BODY);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe(String(timestamp));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verify(secret, headers)).toEqual(JSON.parse(BODY));
  });

  it('signs the id, the timestamp and the body: a change to any fails verification', () => {
    const secret = newSecret();
    const headers = signedHeaders([secretKey(secret)], 'msg_1', now(), BODY);
    expect(() => verify(secret, headers, BODY.replace('Fern', 'Fig'))).toThrow(WebhookVerificationError);
    expect(() => verify(secret, { ...headers, 'webhook-id': 'msg_2' })).toThrow(WebhookVerificationError);
    const timestamp = String(Number(headers['webhook-timestamp']) - 1);
    expect(() => verify(secret, { ...headers, 'webhook-timestamp': timestamp })).toThrow(WebhookVerificationError);
  });

  it('signs once per key while a secret rotates: a receiver with either secret verifies, another does not', () => {
    const [old, current] = [newSecret(), newSecret()];
    const headers = signedHeaders([secretKey(old), secretKey(current)], 'msg_1', now(), BODY);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(old, headers)).toEqual(JSON.parse(BODY));
    expect(verify(current, headers)).toEqual(JSON.parse(BODY));
    expect(() => verify(newSecret(), headers)).toThrow(WebhookVerificationError);
  });
});
