import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which `.ci/run` installs; playwright-core drives it (it downloads no browser of its own). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where browser tests leave screenshots. */
export const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));

/** True when the browser tests can run; under CI=true a missing Chromium is an error, not a skip. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing; .ci/run installs it (apt-get install chromium)`);
  console.warn(`${CHROMIUM} is missing: the browser tests are skipped (apt-get install chromium to run them)`);
  return false;
}

/** `describe` that is reported as skipped when there is no Chromium. */
export const describeInBrowser = (name: string, body: () => void) => (chromiumAvailable() ? describe : describe.skip)(name, body);

/** Headless Chromium; playwright gives it a fresh, temporary profile of its own. */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return { browser, close: () => browser.close() };
}
