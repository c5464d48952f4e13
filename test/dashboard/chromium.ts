import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startForTheProcess } from '../support/process-fixture.ts';

/**
 * Debian's headless shell (package chromium-headless-shell, Chromium's former headless mode as a program of its own)
 * when installed, else the full /usr/bin/chromium in its headless mode. Same Blink, same version; the shell spends
 * about half the CPU on the dashboard's browser files (docs/testing.md, "Duration").
 */
export const CHROMIUM_PATH = existsSync('/usr/bin/chromium-headless-shell') ? '/usr/bin/chromium-headless-shell' : '/usr/bin/chromium';

/**
 * Headless Chromium for the dashboard's browser tests (CHROMIUM_PATH, driven by playwright-core): one
 * browser per test process, shared by the files that run one after another in it (`isolate: false`; a launch costs
 * about a second of CPU), and a fresh context of its own (cookies, storage, downloads) with one page per file.
 */
export interface Chromium {
  context: BrowserContext;
  page: Page;
  /** Closes the file's context; the browser waits a moment for the process's next file. */
  close(): Promise<void>;
}

/**
 * How long the browser outlives its last context. The browser files run one after another (the sequencer lists them
 * together), so the next one opens its context within this; once none does, an idle browser would only burn CPU.
 */
const IDLE_CLOSE_MS = 2_000;

interface Shared { browser: Promise<Browser>; contexts: number; idle?: NodeJS.Timeout }
const KEY = Symbol.for('mnemo.test.sharedChromium');
const store = globalThis as Record<symbol, Shared | undefined>;

/** The events whose listeners the launch may add (playwright's `exit`): the process's, not the file's. */
const PROCESS_EVENTS = ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The process's browser. No signal handlers: vitest ends a worker with SIGTERM, and Chromium exits by itself once the
 * pipe it is driven through closes; playwright's `exit` handler kills it when the process exits otherwise.
 */
function processBrowser(): Shared {
  const existing = store[KEY];
  if (existing) return existing;
  const shared: Shared = {
    contexts: 0,
    browser: startForTheProcess(PROCESS_EVENTS, () => chromium.launch({
      executablePath: CHROMIUM_PATH, headless: true, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-extensions'],
    })),
  };
  store[KEY] = shared;
  shared.browser.then((browser) => browser.on('disconnected', () => { if (store[KEY] === shared) store[KEY] = undefined; }),
    () => { if (store[KEY] === shared) store[KEY] = undefined; });
  return shared;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<Chromium> {
  const shared = processBrowser();
  clearTimeout(shared.idle);
  shared.contexts++;
  const context = await (await shared.browser).newContext({ viewport, acceptDownloads: true });
  return {
    context,
    page: await context.newPage(),
    async close() {
      await context.close();
      if (--shared.contexts > 0) return;
      shared.idle = setTimeout(() => {
        if (store[KEY] === shared) store[KEY] = undefined;
        void shared.browser.then((browser) => browser.close());
      }, IDLE_CLOSE_MS).unref();
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
