import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Headless Chromium for the dashboard's browser tests (Debian's /usr/bin/chromium, driven by playwright-core): one
 * browser and one page per file, in a fresh profile directory (playwright passes it as --user-data-dir).
 */
export interface Chromium {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'mnemo-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, viewport, acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-extensions'],
  });
  return {
    context,
    page: context.pages()[0] ?? await context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

const cookieIn = (res: Response, name: string): string => {
  const found = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!found) throw new Error(`no ${name} cookie in the answer (${res.status})`);
  return found.slice(name.length + 1).split(';')[0]!;
};

/**
 * Signs the browser in with `key` without loading a page: the sign-in form's double submit over HTTP, then the session
 * cookie handed to the browser, replacing any session it held. Signing in through the page itself is tested once, in
 * browser.test.ts; the other tests only need to be signed in.
 */
export async function signInBrowser(context: BrowserContext, base: string, key: string): Promise<void> {
  const form = await fetch(`${base}/dashboard/sign-in`);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const res = await fetch(`${base}/dashboard/sign-in`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie: `mnemo_dashboard_signin=${cookieIn(form, 'mnemo_dashboard_signin')}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, api_key: key }).toString(),
  });
  if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  await context.clearCookies();
  await context.addCookies([{ name: 'mnemo_dashboard', value: cookieIn(res, 'mnemo_dashboard'), domain: new URL(base).hostname, path: '/dashboard', httpOnly: true, sameSite: 'Strict' }]);
}
