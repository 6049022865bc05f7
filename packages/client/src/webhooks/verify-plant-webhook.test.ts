import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { PlantClientError } from '../errors.ts';
import { PlantWebhookVerificationError, verifyPlantWebhook, verifyPlantWebhookEvent } from './index.ts';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const now = () => Math.floor(Date.now() / 1000);

/** Headers as the service signs a delivery (Standard Webhooks v1), written here independently. */
const sign = (body: string, { id = 'msg_0123456789abcdef0123456789abcdef', timestamp = now(), key = secret } = {}) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': `v1,${createHmac('sha256', Buffer.from(key.slice(6), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64')}`,
});

const failure = (run: () => unknown): PlantWebhookVerificationError => {
  try {
    run();
  } catch (error) {
    expect(PlantWebhookVerificationError.isInstance(error)).toBe(true);
    expect(PlantClientError.isInstance(error)).toBe(true);
    return error as PlantWebhookVerificationError;
  }
  throw new Error('expected verification to fail');
};

describe('verifyPlantWebhook', () => {
  it('returns the plant with an exact bigint id', () => {
    const body = '{"id":9223372036854775807,"name":"Max","tag":"edge"}';
    expect(verifyPlantWebhook(secret, body, sign(body))).toStrictEqual({
      id: 9223372036854775807n,
      name: 'Max',
      tag: 'edge',
    });
    const small = '{"id":1,"name":"Fern"}';
    expect(verifyPlantWebhook(secret, Buffer.from(small), sign(small))).toStrictEqual({ id: 1n, name: 'Fern' });
  });

  it('accepts Headers, Node header objects in any case, and several signatures of which one matches', () => {
    const body = '{"id":2,"name":"Ivy"}';
    const headers = sign(body);
    expect(verifyPlantWebhook(secret, body, new Headers(headers))).toMatchObject({ id: 2n });
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyPlantWebhook(secret, body, upper)).toMatchObject({ id: 2n });
    const rotated = { ...headers, 'webhook-signature': `v1,${'A'.repeat(43)}= ${headers['webhook-signature']}` };
    expect(verifyPlantWebhook(secret, body, rotated)).toMatchObject({ id: 2n });
  });

  it('accepts a list of secrets while rotating: any signature under any of them', () => {
    const body = '{"id":4,"name":"Moss"}';
    const previous = `whsec_${randomBytes(32).toString('base64')}`;
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    const byPrevious = sign(body, { key: previous });
    const bySecret = sign(body);
    // The service during the grace: both signatures, new first.
    const both = {
      ...bySecret,
      'webhook-signature': `${bySecret['webhook-signature']} ${byPrevious['webhook-signature']}`,
    };
    for (const headers of [byPrevious, bySecret, both]) {
      expect(verifyPlantWebhook([secret, previous], body, headers)).toStrictEqual({ id: 4n, name: 'Moss' });
    }
    expect(verifyPlantWebhook([previous], body, both)).toStrictEqual({ id: 4n, name: 'Moss' });
    expect(failure(() => verifyPlantWebhook([other, previous], body, bySecret))).toMatchObject({
      reason: 'signature',
      message: 'No webhook-signature matches the body under any of these secrets.',
    });
    expect(failure(() => verifyPlantWebhook([], body, bySecret))).toMatchObject({ reason: 'secret' });
    expect(failure(() => verifyPlantWebhook([secret, 'not-a-secret!'], body, bySecret))).toMatchObject({
      reason: 'secret',
    });
  });

  it('agrees with standardwebhooks signing', () => {
    const body = '{"id":3,"name":"Aloe"}';
    const signature = new Webhook(secret).sign('msg_x', new Date(), body);
    const headers = { 'webhook-id': 'msg_x', 'webhook-timestamp': String(now()), 'webhook-signature': signature };
    expect(verifyPlantWebhook(secret, body, headers)).toStrictEqual({ id: 3n, name: 'Aloe' });
  });

  it.each([
    ['a tampered body', (body: string) => [`${body} `, sign(body)] as const],
    [
      'another secret',
      (body: string) => [body, sign(body, { key: `whsec_${randomBytes(32).toString('base64')}` })] as const,
    ],
    ['another webhook-id', (body: string) => [body, { ...sign(body), 'webhook-id': 'msg_other' }] as const],
  ])('refuses %s as a bad signature', (_label, make) => {
    const [body, headers] = make('{"id":4,"name":"Cactus"}');
    const error = failure(() => verifyPlantWebhook(secret, body, headers));
    expect(error.reason).toBe('signature');
    expect(error.message).toBe('No webhook-signature matches the body under this secret.');
  });

  it.each([
    ['six minutes old', -360],
    ['six minutes ahead', 360],
  ])('refuses a timestamp %s', (_label, offset) => {
    const body = '{"id":5,"name":"Late"}';
    const error = failure(() => verifyPlantWebhook(secret, body, sign(body, { timestamp: now() + offset })));
    expect(error.reason).toBe('timestamp');
    expect(error.message).toMatch(/more than 5 minutes off/);
  });

  it('accepts a timestamp four minutes off', () => {
    const body = '{"id":6,"name":"Fine"}';
    expect(verifyPlantWebhook(secret, body, sign(body, { timestamp: now() - 240 }))).toMatchObject({ id: 6n });
  });

  it('refuses missing headers, a malformed timestamp, a bad secret and a signed body that is no plant', () => {
    const body = '{"id":7,"name":"Seven"}';
    const { 'webhook-signature': _dropped, ...unsigned } = sign(body);
    expect(failure(() => verifyPlantWebhook(secret, body, unsigned)).reason).toBe('headers');
    expect(failure(() => verifyPlantWebhook(secret, body, { ...sign(body), 'webhook-timestamp': '1e9' })).reason).toBe(
      'headers',
    );
    expect(failure(() => verifyPlantWebhook('whsec_***', body, sign(body))).reason).toBe('secret');
    const notPlant = '{"id":"7","name":"Seven"}';
    expect(failure(() => verifyPlantWebhook(secret, notPlant, sign(notPlant))).reason).toBe('body');
    const notJson = 'plant 7';
    expect(failure(() => verifyPlantWebhook(secret, notJson, sign(notJson))).reason).toBe('body');
  });

  it('says what failed, keeping the underlying error as the cause', () => {
    const body = '{"id":8,"name":"Eight"}';
    const { 'webhook-signature': _dropped, ...unsigned } = sign(body);
    const cases: [() => unknown, string, boolean][] = [
      [() => verifyPlantWebhook([], body, sign(body)), 'At least one webhook secret is required.', false],
      [
        () => verifyPlantWebhook('whsec_***', body, sign(body)),
        'The webhook secret must be whsec_ followed by base64.',
        true,
      ],
      [
        () => verifyPlantWebhook(secret, body, { ...sign(body), 'webhook-timestamp': 'soon' }),
        'The webhook-timestamp header must be Unix seconds.',
        false,
      ],
      [
        () => verifyPlantWebhook(secret, body, unsigned),
        'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
        true,
      ],
      [() => verifyPlantWebhook(secret, 'plant 8', sign('plant 8')), 'The webhook body is not JSON.', true],
      [() => verifyPlantWebhook(secret, '{"id":8}', sign('{"id":8}')), 'The webhook body is not a NewPlant.', true],
    ];
    for (const [run, message, hasCause] of cases) {
      const error = failure(run);
      expect(error.name).toBe('PlantWebhookVerificationError');
      expect(error.message).toBe(message);
      expect(error.cause !== undefined).toBe(hasCause);
    }
  });

  it('reads header lists as Node gives repeated headers, and ignores other and undefined headers', () => {
    const body = '{"id":9,"name":"Nine"}';
    const signed = sign(body);
    const [first, ...rest] = [`v1,${'A'.repeat(43)}=`, signed['webhook-signature']];
    const headers = {
      ...signed,
      'webhook-signature': [first as string, ...rest],
      'content-type': 'application/json',
      'x-unset': undefined,
    };
    expect(verifyPlantWebhook(secret, body, headers)).toMatchObject({ id: 9n });
  });

  it('decodes a byte body as UTF-8, replacing what is not, so that the signature decides', () => {
    const bytes = new Uint8Array([...Buffer.from('{"id":10,"name":"'), 0xff, ...Buffer.from('"}')]);
    const text = new TextDecoder().decode(bytes);
    expect(verifyPlantWebhook(secret, bytes, sign(text))).toStrictEqual({ id: 10n, name: '\uFFFD' });
  });

  it('recognises only its own errors by isInstance', () => {
    expect(PlantWebhookVerificationError.isInstance(new Error('x'))).toBe(false);
    expect(PlantWebhookVerificationError.isInstance(null)).toBe(false);
    expect(PlantWebhookVerificationError.isInstance(undefined)).toBe(false);
    expect(PlantWebhookVerificationError.isInstance({})).toBe(false);
    expect(PlantWebhookVerificationError.isInstance('PlantWebhookVerificationError')).toBe(false);
  });

  it('recognises by isInstance an error from another copy of the package', () => {
    const foreign = {
      name: 'PlantWebhookVerificationError',
      [Symbol.for('@org/plant-client/PlantWebhookVerificationError')]: true,
    };
    expect(PlantWebhookVerificationError.isInstance(foreign)).toBe(true);
    expect(PlantWebhookVerificationError.isInstance({ [Symbol.for('')]: true })).toBe(false);
  });

  it('refuses a delivery whose signature header is given as undefined, as missing', () => {
    const body = '{"id":9,"name":"Nine"}';
    const headers = { ...sign(body), 'webhook-signature': undefined };
    expect(failure(() => verifyPlantWebhook(secret, body, headers))).toMatchObject({
      reason: 'headers',
      message: 'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
    });
  });
});

describe('verifyPlantWebhookEvent', () => {
  /** As the service sends it: signed, and its type in the webhook-event-type header. */
  const sent = (body: string, type: string) => ({ ...sign(body), 'webhook-event-type': type });

  // Each event in the plain body (ids exact to int64) and in the structured one, typed by the header.
  it.each([
    [
      'a creation, plain body',
      '{"id":9223372036854775807,"name":"Max","tag":"edge"}',
      { type: 'newPlant', plant: { id: 9223372036854775807n, name: 'Max', tag: 'edge' } },
    ],
    [
      'a deletion, plain body',
      '{"id":9223372036854775807,"plant":{"id":9223372036854775807,"name":"Max"}}',
      { type: 'plantDeleted', id: 9223372036854775807n, plant: { id: 9223372036854775807n, name: 'Max' } },
    ],
    [
      'a creation, structured body',
      '{"type":"newPlant","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":1,"name":"Fern"}}',
      { type: 'newPlant', plant: { id: 1n, name: 'Fern' } },
    ],
    [
      'a deletion, structured body',
      '{"type":"plantDeleted","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":1,"plant":{"id":1,"name":"Fern"}}}',
      { type: 'plantDeleted', id: 1n, plant: { id: 1n, name: 'Fern' } },
    ],
  ])('types %s', (_what, body, event) => {
    expect(verifyPlantWebhookEvent(secret, body, sent(body, event.type))).toStrictEqual(event);
  });

  it('reads a structured body without the header by its type, and a plain one as a newPlant (services before the header)', () => {
    const structured =
      '{"type":"plantDeleted","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":1,"plant":{"id":1,"name":"Fern"}}}';
    expect(verifyPlantWebhookEvent(secret, structured, sign(structured)).type).toBe('plantDeleted');
    const plain = '{"id":1,"name":"Fern"}';
    expect(verifyPlantWebhookEvent(secret, plain, sign(plain))).toStrictEqual({
      type: 'newPlant',
      plant: { id: 1n, name: 'Fern' },
    });
    // The type is never guessed from the body: a deletion's plain body without the header is refused.
    const deletion = '{"id":1,"plant":{"id":1,"name":"Fern"}}';
    expect(failure(() => verifyPlantWebhookEvent(secret, deletion, sign(deletion))).message).toBe(
      'The webhook body is not a newPlant event.',
    );
  });

  it('refuses an unknown type, a header that contradicts the body, and a body that is not its type', () => {
    const plain = '{"id":1,"name":"Fern"}';
    const unknown = failure(() => verifyPlantWebhookEvent(secret, plain, sent(plain, 'plantUpdated')));
    expect([unknown.reason, unknown.message]).toStrictEqual([
      'body',
      'The webhook event type "plantUpdated" is unknown.',
    ]);
    const structured = '{"type":"newPlant","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":1,"name":"Fern"}}';
    const contradicted = failure(() => verifyPlantWebhookEvent(secret, structured, sent(structured, 'plantDeleted')));
    expect([contradicted.reason, contradicted.message]).toStrictEqual([
      'body',
      'The webhook-event-type header says "plantDeleted", but the body is a newPlant event.',
    ]);
    expect(failure(() => verifyPlantWebhookEvent(secret, plain, sent(plain, 'plantDeleted'))).message).toBe(
      'The webhook body is not a plantDeleted event.',
    );
  });

  it('refuses a signed body that is no event, and a deletion passed to verifyPlantWebhook', () => {
    const other = '{"type":"plantDeleted","timestamp":"2026-01-01T00:00:00.000Z","data":{"id":1}}';
    expect(failure(() => verifyPlantWebhookEvent(secret, other, sign(other))).reason).toBe('body');
    const deleted = '{"id":1,"plant":{"id":1,"name":"Fern"}}';
    expect(failure(() => verifyPlantWebhook(secret, deleted, sent(deleted, 'plantDeleted'))).reason).toBe('body');
  });

  it('refuses a bad signature as verifyPlantWebhook does', () => {
    const body = '{"id":1,"name":"Fern"}';
    expect(failure(() => verifyPlantWebhookEvent(secret, `${body} `, sign(body))).reason).toBe('signature');
  });
});
