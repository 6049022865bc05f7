import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { classifyChanges } from './classify.ts';

const DOCUMENT = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
type Document = typeof DOCUMENT;

const changed = (change: (document: Document) => void) => {
  const after = structuredClone(DOCUMENT);
  change(after);
  return classifyChanges(DOCUMENT, after);
};

describe('classifyChanges, stricter than api-smart-diff where clients read', () => {
  it('finds nothing between a document and itself', () => {
    expect(classifyChanges(DOCUMENT, structuredClone(DOCUMENT))).toStrictEqual([]);
  });

  it('calls a new enum value of a response breaking: clients switch over the known ones', () => {
    const changes = changed((document) =>
      document.components.schemas.WebhookDelivery.properties.status.enum.push('paused'),
    );
    expect(changes.map(({ kind }) => kind)).toStrictEqual(['breaking']);
  });

  it('calls another type of a response field breaking', () => {
    const changes = changed((document) => {
      document.components.schemas.Plant.properties.tag.type = 'integer';
    });
    expect(changes.filter(({ kind }) => kind === 'breaking').map(({ pointer }) => pointer)).toContain(
      '#/paths/~1plants/post/responses/200/content/application~1json/schema/properties/tag/type',
    );
  });

  it('calls a header the service starts sending with a webhook compatible, and one it stops sending breaking', () => {
    const header = { name: 'webhook-extra', in: 'header', required: true, schema: { type: 'string' } };
    const added = changed((document) => {
      document.webhooks.newPlant.post.parameters.push(header);
    });
    expect(added.map(({ kind, pointer }) => [kind, pointer])).toStrictEqual([
      ['compatible', `#/webhooks/newPlant/post/parameters/${DOCUMENT.webhooks.newPlant.post.parameters.length}`],
    ]);
    const removed = changed((document) => {
      document.webhooks.newPlant.post.parameters.shift();
    });
    expect(removed.map(({ kind }) => kind)).toContain('breaking');
  });

  it("reads a webhook's body as something the service sends: a field removed from it is breaking", () => {
    const changes = changed((document) => {
      delete document.components.schemas.NewPlant.properties.tag;
    });
    expect(changes).toContainEqual({
      kind: 'breaking',
      pointer: '#/webhooks/newPlant/post/requestBody/content/application~1json/schema/properties/tag',
      description: '[Removed] property `tag` in the webhook body (application/json)',
    });
    // In the request body of POST /plants, where clients send it, the same removal is compatible.
    expect(changes).toContainEqual(
      expect.objectContaining({
        kind: 'compatible',
        pointer: '#/paths/~1plants/post/requestBody/content/application~1json/schema/properties/tag',
      }),
    );
  });

  it('calls a widened response limit breaking: clients that validate answers refuse the longer values', () => {
    const changes = changed((document) => {
      document.components.schemas.PlantWithId.properties.name.maxLength = 300;
    });
    expect(changes.map(({ kind }) => kind)).toContain('breaking');
  });

  it('calls the change from UTF-16 code units to code points breaking: answers may now carry longer strings', () => {
    const before = structuredClone(DOCUMENT);
    delete before.info['x-length-unit'];
    const [change] = classifyChanges(before, DOCUMENT);
    expect(change).toMatchObject({ kind: 'breaking', pointer: '#/info/x-length-unit' });
    expect(change?.description).toContain('UTF-16 code units, now code points');
  });

  it('calls descriptions, examples and tags documentation only, even where api-smart-diff cannot classify them', () => {
    const changes = changed((document) => {
      document.tags[0].description = 'Plants';
      document.components.schemas.Plant.examples = [{ name: 'Fern' }];
      document.paths['/plants'].post.responses['200'].content['application/json'].example = { name: 'Fern' };
      document.webhooks.newPlant.post.summary = 'A plant was stored';
    });
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.filter(({ kind }) => kind !== 'documentation')).toStrictEqual([]);
  });

  it('tells a field called description from the keyword: removing it from an answer is breaking', () => {
    const changes = changed((document) => {
      delete document.components.schemas.WebhookEndpoint.properties.description;
    });
    expect(changes.map(({ kind }) => kind)).toContain('breaking');
    expect(changes.filter(({ kind }) => kind === 'documentation')).toStrictEqual([]);
  });
});
