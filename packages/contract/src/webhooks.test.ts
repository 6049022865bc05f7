import { describe, expect, it } from 'vitest';
import {
  CreatedWebhookEndpoint,
  DELIVERIES_LIMIT_MAX,
  ListWebhookDeliveriesQuery,
  NewWebhookEndpoint,
  RecoverWebhookDeliveries,
  WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
  WebhookDeliveryParams,
  WebhookEndpointChanges,
} from './webhooks.ts';

type Parsed = { success: boolean; error?: { issues: { path: (string | number)[]; message: string }[] } };
/** Each issue as the API words it: the field, then the schema's message. */
const issuesOf = (result: Parsed) => result.error?.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);

const RATE_LIMIT_REFUSED = 'rateLimit must be a whole number from 1 to 1000';

describe('webhook request bodies', () => {
  it.each([
    [NewWebhookEndpoint, 'a list', [' must be a JSON object']],
    [NewWebhookEndpoint, {}, ['url is required']],
    [NewWebhookEndpoint, { url: 5 }, ['url must be a string']],
    [NewWebhookEndpoint, undefined, [' is required']],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com/a b' },
      ['url must not contain whitespace or control characters'],
    ],
    [NewWebhookEndpoint, { url: 'hooks.example.com/plants' }, ['url must be an absolute URL']],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com', description: 'Inventory\nsync' },
      ['description must not contain control characters'],
    ],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', description: 5 }, ['description must be a string']],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com', eventTypes: [] },
      ['eventTypes must list at least one event type'],
    ],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com', eventTypes: ['plantUpdated'] },
      ['eventTypes.0 must be one of newPlant, plantDeleted'],
    ],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com', eventTypes: 'newPlant' },
      ['eventTypes must be an array of event types'],
    ],
    [
      NewWebhookEndpoint,
      { url: 'https://hooks.example.com', eventTypes: ['newPlant', 'newPlant'] },
      ['eventTypes must not list an event type twice'],
    ],
    [
      WebhookEndpointChanges,
      {},
      [' must have at least one of url, description, enabled, eventTypes, payloadFormat and rateLimit'],
    ],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: 0 }, [RATE_LIMIT_REFUSED]],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: 1.5 }, [RATE_LIMIT_REFUSED]],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: 1001 }, [RATE_LIMIT_REFUSED]],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: '5' }, [RATE_LIMIT_REFUSED]],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: null }, [RATE_LIMIT_REFUSED]],
    [WebhookEndpointChanges, { rateLimit: 0 }, [RATE_LIMIT_REFUSED]],
    [WebhookEndpointChanges, { rateLimit: 2.5 }, [RATE_LIMIT_REFUSED]],
    [WebhookEndpointChanges, { rateLimit: 1001 }, [RATE_LIMIT_REFUSED]],
    [WebhookEndpointChanges, { payloadFormat: 'json' }, ['payloadFormat must be plain or standard']],
    [WebhookEndpointChanges, { eventTypes: [] }, ['eventTypes must list at least one event type']],
    [WebhookEndpointChanges, { enabled: 'yes' }, ['enabled must be true or false']],
    [RecoverWebhookDeliveries, {}, ['since is required']],
    [RecoverWebhookDeliveries, { since: 5 }, ['since must be a string']],
    [RecoverWebhookDeliveries, { since: 'yesterday' }, ['since must be an RFC 3339 date-time']],
  ])('%#: words each refusal after the field', (schema, body, issues) => {
    expect(issuesOf(schema.safeParse(body))).toEqual(issues);
  });

  it.each([
    [WebhookEndpointChanges, { url: 'https://hooks.example.com/b' }],
    [WebhookEndpointChanges, { description: null }],
    [WebhookEndpointChanges, { enabled: false }],
    [WebhookEndpointChanges, { rateLimit: 1000 }],
    [WebhookEndpointChanges, { rateLimit: null }],
    [NewWebhookEndpoint, { url: 'https://hooks.example.com', rateLimit: 1 }],
    [RecoverWebhookDeliveries, { since: '2026-11-24T10:00:00+01:00' }],
  ])('%#: accepts a body with one change, or a time with an offset', (schema, body) => {
    expect(schema.safeParse(body).success).toBe(true);
  });
});

describe('webhook answers', () => {
  const endpoint = {
    id: 'ep_1',
    url: 'https://hooks.example.com/plants',
    eventTypes: ['newPlant'],
    payloadFormat: 'plain',
    enabled: true,
    createdAt: '2026-11-24T10:00:00.000Z',
    secret: `whsec_${'A'.repeat(43)}=`,
  };

  it('describes a created endpoint with its secret', () => {
    expect(CreatedWebhookEndpoint.safeParse(endpoint).success).toBe(true);
  });

  it('takes times with an offset, as RFC 3339 allows', () => {
    const createdAt = '2026-11-24T11:00:00.000+01:00';
    expect(CreatedWebhookEndpoint.parse({ ...endpoint, createdAt }).createdAt).toBe(createdAt);
  });

  it.each([
    [{ secret: 'whsec_short' }, ['secret must be whsec_ followed by base64']],
    [{ createdAt: 'today' }, ['createdAt must be an RFC 3339 date-time']],
  ])('refuses %o with the field named', (change, issues) => {
    expect(issuesOf(CreatedWebhookEndpoint.safeParse({ ...endpoint, ...change }))).toEqual(issues);
  });

  it('keeps a rotated-out secret signing for a day by default', () => {
    expect(WEBHOOK_ROTATION_GRACE_DEFAULT_MS).toBe(24 * 60 * 60 * 1000);
  });
});

describe('webhook path and query parameters', () => {
  it('refuses empty identifiers, and identifiers given twice', () => {
    expect(issuesOf(WebhookDeliveryParams.safeParse({ id: '', deliveryId: '' }))).toEqual([
      'id must not be empty',
      'deliveryId must not be empty',
    ]);
    expect(issuesOf(WebhookDeliveryParams.safeParse({ id: ['a', 'b'], deliveryId: 'd' }))).toEqual([
      'id must be given once',
    ]);
  });

  it.each([
    ['1', 1],
    [String(DELIVERIES_LIMIT_MAX), DELIVERIES_LIMIT_MAX],
  ])('accepts limit=%s', (limit, value) => {
    expect(ListWebhookDeliveriesQuery.parse({ limit })).toEqual({ limit: value });
  });

  it.each(['0', String(DELIVERIES_LIMIT_MAX + 1), ' 5', '5 ', 'x'])('refuses limit=%j naming its range', (limit) => {
    expect(issuesOf(ListWebhookDeliveriesQuery.safeParse({ limit }))).toEqual([
      `limit must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`,
    ]);
  });
});
