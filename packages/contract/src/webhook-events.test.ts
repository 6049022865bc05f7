import { describe, expect, it } from 'vitest';
import { stringifyExactJson } from './exact-json.ts';
import {
  unknownEventType,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES_DEFAULT,
  WEBHOOK_EVENTS,
  WebhookEventType,
  webhookEventBody,
} from './webhook-events.ts';

const plant = { id: 9007199254740993n, name: 'Fern', tag: 'shade' };
const at = new Date('2026-11-27T05:00:00.000Z');

describe('the webhook event catalogue', () => {
  it('lists the types in order, newPlant alone by default', () => {
    expect(WEBHOOK_EVENT_TYPES).toStrictEqual(['newPlant', 'plantDeleted']);
    expect(WebhookEventType.options).toStrictEqual(WEBHOOK_EVENT_TYPES);
    expect(WEBHOOK_EVENT_TYPES_DEFAULT).toStrictEqual(['newPlant']);
  });

  it.each([
    ['newPlant', 'plain', '{"id":9007199254740993,"name":"Fern","tag":"shade"}'],
    ['plantDeleted', 'plain', '{"id":9007199254740993,"plant":{"id":9007199254740993,"name":"Fern","tag":"shade"}}'],
    [
      'newPlant',
      'standard',
      '{"type":"newPlant","timestamp":"2026-11-27T05:00:00.000Z","data":{"id":9007199254740993,"name":"Fern","tag":"shade"}}',
    ],
    [
      'plantDeleted',
      'standard',
      '{"type":"plantDeleted","timestamp":"2026-11-27T05:00:00.000Z","data":{"id":9007199254740993,"plant":{"id":9007199254740993,"name":"Fern","tag":"shade"}}}',
    ],
  ] as const)('makes the %s body in the %s format', (type, format, body) => {
    expect(stringifyExactJson(webhookEventBody(type, format, plant, at))).toBe(body);
  });

  it("makes each type's data valid by the type's own schema, which refuses the other types' data", () => {
    for (const type of WEBHOOK_EVENT_TYPES) {
      const data = WEBHOOK_EVENTS[type].dataOf(plant);
      for (const other of WEBHOOK_EVENT_TYPES) {
        expect([type, other, WEBHOOK_EVENTS[other].data.safeParse(data).success]).toStrictEqual([
          type,
          other,
          type === other,
        ]);
      }
    }
  });

  it('throws on a type that typecheck would have refused', () => {
    expect(() => unknownEventType('plantRenamed' as never)).toThrow('Unknown webhook event type "plantRenamed".');
  });
});
