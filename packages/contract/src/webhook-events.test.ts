import { describe, expect, it } from 'vitest';
import { stringifyExactJson } from './exact-json.ts';
import { PAYLOAD_FORMAT_JSON, WEBHOOK_EVENT_DATA_JSON, webhookEventJson } from './json-text.ts';
import { plantJson, type StoredPlant } from './stored-plant.ts';
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

  const plants: [string, StoredPlant][] = [
    ['beyond 2^53', plant],
    ['at the int64 bounds', { id: -(2n ** 63n), name: 'Min' }],
    ['at the int64 maximum', { id: 2n ** 63n - 1n, name: 'Max', tag: 'x' }],
    ['small', { id: 0n, name: 'Zero' }],
    ['with characters JSON escapes', { id: 7n, name: 'Say "hi" \\ 🌿 é \u2028', tag: '"' }],
  ];
  it.each(plants)(
    'writes every type in every format as text equal to the JSON of its object, a plant %s',
    (_, stored) => {
      for (const type of WEBHOOK_EVENT_TYPES) {
        const data = WEBHOOK_EVENT_DATA_JSON[type](plantJson(stored), stored.id);
        expect(data).toBe(stringifyExactJson(WEBHOOK_EVENTS[type].dataOf(stored)));
        for (const format of Object.keys(PAYLOAD_FORMAT_JSON) as (keyof typeof PAYLOAD_FORMAT_JSON)[]) {
          expect([type, format, webhookEventJson(type, format, data, at)]).toStrictEqual([
            type,
            format,
            stringifyExactJson(webhookEventBody(type, format, stored, at)),
          ]);
        }
      }
    },
  );

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
