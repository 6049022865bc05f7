import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHROMIUM, hasChromium, launchChromium } from '#test/chromium';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';

const SCREENSHOT = join(import.meta.dirname, '../../.artifacts/docs.png');
const STEP_TIMEOUT_MS = 10_000;

const itWithChromium = hasChromium ? it : it.skip;
if (!hasChromium) {
  console.warn(`Skipping the /docs browser test: no Chromium at ${CHROMIUM} (install it: apt-get install chromium).`);
}

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('GET /docs in a browser', () => {
  itWithChromium(
    'lets a reader authenticate, send POST /plants from the page and see 200',
    async () => {
      const server: TestServer = await startTestServer();
      cleanups.push(() => server.cleanup());
      const browser = await launchChromium((cleanup) => cleanups.push(cleanup), {
        timeoutMs: STEP_TIMEOUT_MS,
        viewport: { width: 1280, height: 900 },
      });

      const page = await browser.newPage();
      const foreignRequests: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(`${server.url}/`)) foreignRequests.push(request.url());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });

      await page.goto(`${server.url}/docs`);
      const operation = page.locator('#operations-plants-createPlant');
      await operation.waitFor();

      await page.locator('.scheme-container button.authorize').click();
      await page.locator('#auth-bearer-value').fill(TEST_TOKEN);
      await page.getByRole('button', { name: 'Apply credentials' }).click();
      await page.locator('.modal-ux button.btn-done').click();

      await operation.locator('.opblock-summary').click();
      await operation.locator('textarea.body-param__text').fill('{"id": 4242, "name": "Swagger fern", "tag": "docs"}');
      await operation.locator('button.execute').click();

      const status = operation.locator('.live-responses-table tr.response .response-col_status');
      await expect.poll(() => status.textContent(), { timeout: STEP_TIMEOUT_MS }).toMatch(/^\s*200/);
      await expect.poll(() => operation.locator('.live-responses-table').textContent()).toContain('Swagger fern');
      expect(await server.store.get(4242n)).toMatchObject({ id: 4242n, name: 'Swagger fern', tag: 'docs' });

      mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
      // The curl line (with the Authorization header), the request URL and the live 200 in one view.
      await operation.locator('.curl-command').evaluate((element) => element.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: SCREENSHOT });

      // The newPlant webhook (OpenAPI 3.1 `webhooks`) is documented beside the paths.
      const webhooks = page.locator('.webhooks');
      await webhooks.scrollIntoViewIfNeeded();
      expect(await webhooks.textContent()).toMatch(/newPlant/);
      await page.screenshot({ path: join(SCREENSHOT, '..', 'docs-webhooks.png') });

      expect(foreignRequests, 'the page must load everything from the API itself').toEqual([]);
      expect(problems, 'no script errors or Content-Security-Policy violations').toEqual([]);
    },
    30_000,
  );
});
