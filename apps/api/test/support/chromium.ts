import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium: test tools cannot download a browser here. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/**
 * Headless Chromium on a fresh profile. The flags keep it off the network it would otherwise try
 * (component updates, background requests), which this machine refuses. `defer` receives what
 * closes the browser and removes the profile.
 */
export const launchChromium = async (
  defer: (cleanup: () => Promise<void> | void) => void,
  { timeoutMs, viewport }: { timeoutMs: number; viewport?: { width: number; height: number } },
): Promise<BrowserContext> => {
  const profile = mkdtempSync(join(tmpdir(), 'plant-chromium-'));
  defer(() => rmSync(profile, { recursive: true, force: true }));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: timeoutMs,
    ...(viewport !== undefined && { viewport }),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  defer(() => browser.close());
  browser.setDefaultTimeout(timeoutMs);
  return browser;
};
