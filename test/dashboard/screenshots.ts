import { join } from 'node:path';
import type { Page } from 'playwright-core';

/**
 * Screenshots for docs/dashboard.md, taken by the browser tests only under `npm run screenshots`
 * (MNEMO_UPDATE_SCREENSHOTS=1): an ordinary test run writes nothing and spends no time on them.
 */
const UPDATE = process.env.MNEMO_UPDATE_SCREENSHOTS === '1';
const DIR = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  if (UPDATE) await page.screenshot({ path: join(DIR, `${name}.png`) });
}
