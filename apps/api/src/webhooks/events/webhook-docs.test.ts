import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { runInNewContext } from 'node:vm';
import * as webhooks from '@org/plant-client/webhooks';
import { WEBHOOK_ENDPOINT_CHANGE_FIELDS } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { callApi, registerEndpoint, startWebhookService } from '#test/webhook-service';

/**
 * What the README and docs/webhooks.md say of webhooks, held to the service: their examples run
 * against it, and what they list comes from the contract.
 */

const defer = deferCleanups();
const PAGES = ['README.md', 'docs/webhooks.md'] as const;
const read = (page: string) => readFileSync(new URL(`../../../../../${page}`, import.meta.url), 'utf8');

/** The page's fenced code blocks in `language`. */
const codeBlocks = (page: string, language: string): string[] =>
  [...read(page).matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(([, code]) => code ?? '');

/**
 * Runs a page's TypeScript verify example on one delivery, as a receiver would: the import from
 * @org/plant-client/webhooks, PLANT_WEBHOOK_SECRET, `rawBody` and `headers`; answers the value of
 * the constant it declares.
 */
const runVerifyExample = (page: string, secret: string, rawBody: string, headers: object): unknown => {
  const example = codeBlocks(page, 'ts').find((code) => code.includes("from '@org/plant-client/webhooks'"));
  if (example === undefined) throw new Error(`${page} has no verify example`);
  const script = stripTypeScriptTypes(example).replace(
    /^import \{([^}]+)\} from '@org\/plant-client\/webhooks';$/m,
    'const {$1} = webhooks;',
  );
  const result = /^const (\w+) =/m.exec(script)?.[1];
  return runInNewContext(`${script}\n${result};`, {
    webhooks,
    process: { env: { PLANT_WEBHOOK_SECRET: secret } },
    rawBody,
    headers,
  });
};

describe('the webhook docs', () => {
  it.each(PAGES)("%s's PATCH /webhooks row names every field the contract lets a PATCH change", (page) => {
    const row = read(page)
      .split('\n')
      .find((line) => /^\| `PATCH \/webhooks\//.test(line));
    for (const field of WEBHOOK_ENDPOINT_CHANGE_FIELDS) expect(row, `${page}: ${field}`).toContain(`\`${field}\``);
  });

  it("docs/webhooks.md's subscribe example answers as the service does, every field in its order", async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const subscribe = codeBlocks('docs/webhooks.md', 'sh').find((code) =>
      code.includes('-X POST http://127.0.0.1:3000/webhooks '),
    );
    const body = /-d '([^']*)'/.exec(subscribe ?? '')?.[1];
    const answer = await callApi(service.base, '/webhooks', { method: 'POST', body: body ?? '' });
    expect(answer.status).toBe(201);
    const documented = [...(/^# 201 (\{[\s\S]*\})$/m.exec(subscribe ?? '')?.[1] ?? '').matchAll(/"(\w+)":/g)].map(
      ([, key]) => key,
    );
    expect(documented).toStrictEqual(Object.keys((await answer.json()) as object));
  });

  it.each(PAGES)("%s's verify example reads both events in both formats as the service sends them", async (page) => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const delivered = [];
    for (const payloadFormat of ['plain', 'standard']) {
      const receiver = await deferredReceiver(defer);
      const { secret } = await registerEndpoint(service.base, receiver.url, {
        eventTypes: ['newPlant', 'plantDeleted'],
        payloadFormat,
      });
      delivered.push({ receiver, secret });
    }
    const id = 9007199254740993n;
    expect((await postPlant(service.base, TEST_TOKEN, { id, name: 'Fern', tag: 'shade' })).status).toBe(200);
    // Deliveries to one endpoint may overtake each other: the deletion goes once the creation is in.
    for (const { receiver } of delivered) await receiver.waitFor(1);
    expect((await callApi(service.base, `/plants/${id}`, { method: 'DELETE' })).status).toBe(204);

    const plant = { id, name: 'Fern', tag: 'shade' };
    for (const { receiver, secret } of delivered) {
      const events = (await receiver.waitFor(2)).map(({ body, headers }) =>
        runVerifyExample(page, secret, body, headers),
      );
      expect(events).toStrictEqual([
        { type: 'newPlant', plant },
        { type: 'plantDeleted', id, plant },
      ]);
    }
  });
});
