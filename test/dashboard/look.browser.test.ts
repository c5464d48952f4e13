import axe from 'axe-core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { launchChromium, signInBrowser, type Chromium } from './chromium.ts';
import { screenshot } from './screenshots.ts';

/**
 * The dashboard as a product, in headless Chromium against the real server on loopback: every page at phone and
 * desktop widths without horizontal overflow, axe-core with no serious or critical violation, no CSP violation,
 * the 404 page, the favicon, keyboard use, the overview and analytics. One browser and one page for the file. SQLite
 * only (vitest.config.ts): the store does not change the markup; the actions on these pages run in Chromium on both
 * stores in browser.test.ts and manage-browser.test.ts.
 */
let t: TestApp;
let base: string;
let chromium: Chromium;
let browser: BrowserContext;
let page: Page;
const keys: Record<string, string> = {};
const ids: Record<string, string> = {};
/** Console errors of the pages (a script or style the CSP refused shows here). */
const consoleErrors: string[] = [];

const api = async (path: string, key: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) as Json : {} };
};

beforeAll(async () => {
  t = await createTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keys.newcomer = await t.freshTenant({ user: 'newcomer' });
  keys.alice = await t.freshTenant({ user: 'alice' });
  keys.bot = await t.key({ user: 'bot', scopes: ['mcp:access'] });
  // Content that strains a layout: a long unbroken token, a long URL, many tags.
  for (const [title, content, tags] of [
    ['Deploy checklist', 'Run the database migrations before you deploy the API servers.', ['ops', 'deploy']],
    ['Runbook link', `See https://wiki.example.com/${'very-long-path-segment-'.repeat(8)}end for the steps.`, ['ops', 'wiki', 'links', 'runbook', 'oncall']],
    ['Token format', `Keys look like mnemo_live_${'x'.repeat(120)} and are shown once.`, ['security']],
  ] as const) {
    const made = await api('/api/v1/memories', keys.alice, { method: 'POST', body: JSON.stringify({ title, content, tags }), headers: { 'x-api-key': keys.alice } });
    expect(made.status).toBe(201);
    ids.memory ??= made.body.data.id as string;
  }
  await t.container.secrets.create({ tenantId: t.tenant, mode: 'live' }, { userId: 'alice', region: null },
    { name: 'prod.database-url', value: 'postgres://app:secret@db/prod', tags: ['prod'], expiresInMs: null });
  expect((await api('/v1/security/mcp/resources', keys.alice, { method: 'POST', body: JSON.stringify({ name: 'Prod', uri: 'svc://secrets/prod/*', approvers: ['alice'] }) })).status).toBe(201);
  expect((await api('/v1/security/mcp/approve', keys.bot, { method: 'POST', body: JSON.stringify({ resource: 'svc://secrets/prod/db', reason: 'Nightly backup', ttl: 1800 }) })).status).toBe(201);
  await api('/api/v1/memories/search', keys.alice, { method: 'POST', body: JSON.stringify({ query: 'deploy' }), headers: { 'x-api-key': keys.alice } });
  await api('/api/v1/memories/mem_nope', keys.alice, { headers: { 'x-api-key': keys.alice } });
  await t.container.requestMetrics.flush();

  chromium = await launchChromium({ width: 1280, height: 800 });
  ({ context: browser, page } = chromium);
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${page.url()}: ${m.text()}`); });
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await t?.close();
});

/**
 * The page's width beyond the viewport (0: nothing to scroll sideways). What reacts to a resize a few frames later
 * (Chart.js redraws its canvases) may first be too wide: the page has 3 seconds to fit.
 */
async function overflow(): Promise<number> {
  // Runs in the page (this project's types have no DOM library).
  const excess = () => {
    const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
    return w.document.documentElement.scrollWidth - w.innerWidth;
  };
  const fits = () => {
    const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
    return w.document.documentElement.scrollWidth <= w.innerWidth;
  };
  if (await page.waitForFunction(fits, undefined, { timeout: 3000, polling: 'raf' }).then(() => true, () => false)) return 0;
  return page.evaluate(excess);
}

/**
 * axe-core's serious and critical violations of WCAG 2.1 A and AA on the page (its best-practice rules are not run:
 * they cost time and judge structure, not access). Injected through the debugger protocol, which the CSP does not govern.
 */
async function axeViolations(): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run((globalThis as unknown as { document: axe.ElementContext }).document, {
    resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  }));
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

describe('the dashboard as a product, in Chromium', () => {
  it('says on the sign-in page how to get a key, and lands a new install on an overview with its first steps', async () => {
    await page.goto(`${base}/dashboard`);
    expect(page.url()).toContain('/dashboard/sign-in');
    expect(await page.textContent('#get-a-key')).toContain('npx mnemo keys create');
    await page.fill('input[name=api_key]', keys.newcomer!);
    await page.click('#sign-in');
    await page.waitForURL(`${base}/dashboard`);
    expect(await page.textContent('h1')).toBe('Overview');
    expect(await page.textContent('#stat-memories .figure')).toBe('0');
    expect(await page.textContent('#first-steps')).toContain('claude mcp add --transport http mnemo');
    expect(await page.textContent('#health')).toMatch(/sqlite\s+answering/);
    await screenshot(page, 'overview-new');
  });

  it('shows a seeded tenant its figures, what waits for it and the latest changes', async () => {
    await signInBrowser(browser, base, keys.alice!);
    await page.goto(`${base}/dashboard`);
    expect(await page.textContent('#stat-memories .figure')).toBe('3');
    expect(await page.textContent('#stat-searches .figure')).toBe('1');
    expect(Number(await page.textContent('#stat-errors .figure'))).toBeGreaterThanOrEqual(1);
    expect(await page.textContent('#stat-approvals .figure')).toBe('1');
    expect(await page.locator('#first-steps').count()).toBe(0);
    expect(await page.locator('#activity tbody tr').count()).toBe(3);
    await screenshot(page, 'overview');
  });

  /** What is wrong with each page at both widths (the audit log at 1280 too), and axe's findings where asked. */
  async function lookProblems(pages: [path: string, axe: boolean][]): Promise<string[]> {
    const problems: string[] = [];
    for (const [path, checkAxe] of pages) {
      await page.setViewportSize({ width: 1920, height: 900 });
      await page.goto(`${base}${path}`);
      for (const width of path === '/dashboard/audit' ? [1920, 1280, 375] : [1920, 375]) {
        await page.setViewportSize({ width, height: 900 });
        const over = await overflow();
        if (over > 0) problems.push(`${path} at ${width} px: ${over} px too wide`);
      }
      if (checkAxe) for (const v of await axeViolations()) problems.push(`${path}: ${v}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return problems;
  }

  it('keeps every page within the screen at 375 and 1920 px (the audit log at 1280 too) with no serious or critical axe violation', async () => {
    // Each page at both widths; axe once per kind of page (a list, a search's answer, a record, a form, a report).
    expect(await lookProblems([
      ['/dashboard', true], ['/dashboard/approvals', true], ['/dashboard/reviews', true], ['/dashboard/memories', false],
      ['/dashboard/memories?q=database+deploy&search=hybrid', true], ['/dashboard/memories?q=zzz&threshold=0.99', false],
      [`/dashboard/memories/${ids.memory}`, true], [`/dashboard/memories/${ids.memory}/edit`, false], [`/dashboard/memories/${ids.memory}/history`, true],
      ['/dashboard/analytics', true], ['/dashboard/webhooks', true], ['/dashboard/secrets', true], ['/dashboard/audit', true], ['/dashboard/nowhere', true],
    ])).toEqual([]);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(`${base}/dashboard/memories`);
    await screenshot(page, 'memories-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    // The one error expected: the 404 page's own status, which Chromium logs.
    expect(consoleErrors.filter((e) => !/\/dashboard\/nowhere: Failed to load resource: .* 404/.test(e))).toEqual([]);
  }, 120_000);

  it('keeps the managing forms within the screen at 375 and 1920 px with no serious or critical axe violation', async () => {
    expect(await lookProblems([
      ['/dashboard/memories/new', true], ['/dashboard/api-keys', true], ['/dashboard/secrets/new', true], ['/dashboard/secrets/prod.database-url/edit', true],
      ['/dashboard/mcp-resources', true], [`/dashboard/mcp-resources/edit?uri=${encodeURIComponent('svc://secrets/prod/*')}`, false],
    ])).toEqual([]);
    expect(consoleErrors.filter((e) => !/\/dashboard\/nowhere: Failed to load resource: .* 404/.test(e))).toEqual([]);
  }, 60_000);

  it('answers a dead link with a 404 page that has the navigation, and serves the favicon', async () => {
    const res = await page.goto(`${base}/dashboard/no-such-page`);
    expect(res!.status()).toBe(404);
    expect(res!.headers()['content-security-policy']).toMatch(/script-src 'self';/);
    expect(await page.textContent('h1')).toBe('Page not found');
    await screenshot(page, 'not-found');
    await page.click('nav a:text("Memories")');
    await page.waitForURL('**/dashboard/memories');
    const href = await page.getAttribute('link[rel=icon]', 'href');
    const icon = await page.request.get(`${base}${href}`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toBe('image/svg+xml');
  });

  it('searches from the keyboard alone, with a visible focus, and explains the answer', async () => {
    await page.goto(`${base}/dashboard/memories`);
    await page.focus('input[name=q]');
    const outline = await page.evaluate(() => {
      const w = globalThis as unknown as { getComputedStyle(e: unknown): { outlineStyle: string }; document: { activeElement: unknown } };
      return w.getComputedStyle(w.document.activeElement).outlineStyle;
    });
    expect(outline).not.toBe('none');
    await page.keyboard.type('database migrations');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/memories?q=database+migrations&search=hybrid*');
    expect(await page.textContent('#search-rule')).toContain('Hybrid search');
    expect(await page.locator('#results .explain').first().textContent()).toMatch(/semantic 0\.7 × [\d.]+\s+\+ keyword 0\.3 × [\d.]+/);
    await screenshot(page, 'search-explained');
  });

  it('shows analytics as tables a person reads', async () => {
    await page.goto(`${base}/dashboard/analytics?timeframe=1h`);
    expect(await page.textContent('#top-queries')).toContain('deploy');
    expect(await page.textContent('#errors-by-route')).toContain('GET /api/v1/memories/:id');
    expect(await page.textContent('#latency')).toMatch(/p99\s*[\d.]+ ms/);
    expect(await page.textContent('#example-prices')).toContain('MNEMO_COST_');
    await page.selectOption('select[name=timeframe]', '7d');
    await page.click('form.filters button');
    await page.waitForURL('**/dashboard/analytics?timeframe=7d');
    await screenshot(page, 'analytics-tables');
  });
});
