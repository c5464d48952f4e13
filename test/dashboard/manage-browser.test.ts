import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import axe from 'axe-core';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHeader, parseRecord } from '../../src/core/memories/memory-export.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

/**
 * The managing pages driven in headless Chromium (one browser for the file) against the server on loopback: each
 * action is done as a person would (fill the form, submit) and its result read back through the REST API. SQLite
 * only (vitest.config.ts, NOT_ON_POSTGRES): manage-forms.test.ts posts the same forms on both stores.
 */
let t: TestApp;
let base: string;
let browser: BrowserContext;
let page: Page;
let profile: string;
let alice = '';

const rest = async (path: string, key: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${base}${path}`, { ...init, headers: { 'x-api-key': key, authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  return { status: res.status, body: res.status === 204 ? {} : await res.json() as Json };
};
const memory = (id: string) => rest(`/api/v1/memories/${id}`, alice);

async function signInAs(key: string): Promise<void> {
  await browser.clearCookies();
  await page.goto(`${base}/dashboard/sign-in`);
  await page.fill('input[name=api_key]', key);
  await page.click('#sign-in');
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
}

beforeAll(async () => {
  t = await createTestApp();
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  alice = await t.key({ user: 'alice', tier: 'pro' });
  profile = mkdtempSync(join(tmpdir(), 'mnemo-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium', headless: true, viewport: { width: 1100, height: 680 }, acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = browser.pages()[0] ?? await browser.newPage();
  await signInAs(alice);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** Serious and critical WCAG 2.1 A/AA violations of axe-core on the page (as look.browser.test.ts checks the other pages). */
async function axeViolations(): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run((globalThis as unknown as { document: axe.ElementContext }).document, {
    resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  }));
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes[0]?.target.join(' ')}`);
}

describe('the managing pages', () => {
  it('fit a 375 px screen and pass axe', async () => {
    const problems: string[] = [];
    await page.setViewportSize({ width: 375, height: 800 });
    for (const path of ['/dashboard/memories/new', '/dashboard/api-keys', '/dashboard/secrets/new', '/dashboard/secrets/some.name/edit', '/dashboard/mcp-resources']) {
      await page.goto(`${base}${path}`);
      const over = await page.evaluate(() => {
        const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
        return w.document.documentElement.scrollWidth - w.innerWidth;
      });
      if (over > 0) problems.push(`${path}: ${over} px too wide`);
      for (const v of await axeViolations()) problems.push(`${path}: ${v}`);
    }
    await page.setViewportSize({ width: 1100, height: 680 });
    expect(problems).toEqual([]);
  });
});

describe('managing memories in Chromium', () => {
  let office = '';

  it('creates a memory with metadata, shows a bad JSON\'s refusal, edits it, and writes the one that supersedes it', async () => {
    await page.goto(`${base}/dashboard/memories`);
    await page.click('#new-memory');
    await page.fill('input[name=title]', 'Office');
    await page.fill('textarea[name=content]', 'The office is in Leeds.');
    await page.fill('input[name=tags]', 'place');
    await page.fill('textarea[name=metadata]', '{"floor": 3');
    await page.click('#create');
    expect(await page.textContent('#refused')).toContain('metadata is not valid JSON');
    expect(await page.inputValue('textarea[name=content]')).toBe('The office is in Leeds.');
    await page.fill('textarea[name=metadata]', '{"floor": 3}');
    await page.click('#create');
    await page.waitForSelector('#content');
    office = /\/memories\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    expect((await memory(office)).body.data).toMatchObject({ title: 'Office', tags: ['place'], metadata: { floor: 3 } });

    await page.click('#edit');
    expect(await page.getAttribute('#history-link', 'href')).toBe(`/dashboard/memories/${office}/history`);
    await page.fill('textarea[name=metadata]', '{"floor": 4, "wing": "east"}');
    await page.click('#save');
    await page.waitForSelector('#content');
    expect((await memory(office)).body.data).toMatchObject({ metadata: { floor: 4, wing: 'east' }, version: 2 });

    await page.click('#edit');
    await page.click('#replace');
    await page.fill('textarea[name=content]', 'The office moved to York.');
    await page.click('#create');
    await page.waitForSelector('#content');
    const successor = /\/memories\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    expect((await memory(office)).body.data.superseded_by).toBe(successor);
  });

  it('forgets a memory after showing what goes', async () => {
    await page.goto(`${base}/dashboard/memories/${office}/edit`);
    await page.click('#forget');
    expect(await page.textContent('#forget-preview')).toContain('1 earlier version');
    await page.click('#confirm-forget');
    await page.waitForURL('**/dashboard/memories?deleted=*');
    expect((await memory(office)).status).toBe(404);
  });

  it('exports and then forgets the ticked memories of the list', async () => {
    const ids: string[] = [];
    for (const n of [1, 2]) ids.push((await rest('/api/v1/memories', alice, { method: 'POST', body: JSON.stringify({ title: `Bulk ${n}`, content: `Bulk note ${n}.` }) })).body.data.id as string);
    await page.goto(`${base}/dashboard/memories`);
    for (const id of ids) await page.check(`input[name=id][value="${id}"]`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-selected')]);
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    expect(parseHeader(lines[0]!).filter.workspace).toBe('default');
    expect(lines.slice(1).map((l) => { const r = parseRecord(l); return r.kind === 'memory' ? r.memory.id : ''; }).sort()).toEqual([...ids].sort());

    await page.click('#forget-selected');
    expect(await page.locator('#forget-preview [data-memory]').count()).toBe(2);
    await page.click('#confirm-forget');
    expect(await page.textContent('#forgotten')).toContain('2 memories forgotten');
    for (const id of ids) expect((await memory(id)).status).toBe(404);
  });
});

describe('managing secrets in Chromium', () => {
  it('creates a secret with tags and an expiry, writes a new version and deletes it', async () => {
    await page.goto(`${base}/dashboard/secrets`);
    await page.click('#new-secret');
    await page.fill('input[name=name]', 'ci.token');
    await page.fill('textarea[name=value]', 'tok-1');
    await page.fill('input[name=tags]', 'ci, deploy');
    await page.fill('input[name=expires_in]', '7d');
    await page.click('#create-secret');
    expect(await page.textContent('#saved')).toContain('version 1');
    expect((await rest('/v1/security/secrets/ci.token', alice)).body).toMatchObject({ value: 'tok-1', tags: ['ci', 'deploy'] });

    await page.fill('textarea[name=value]', 'tok-2');
    await page.fill('input[name=expires_in]', 'never');
    await page.click('#save-version');
    expect(await page.textContent('#saved')).toContain('version 2');
    expect((await rest('/v1/security/secrets/ci.token', alice)).body).toMatchObject({ value: 'tok-2', version: 2, expiresAt: null });

    await page.click('#delete-secret');
    await page.waitForSelector('#secrets');
    expect((await rest('/v1/security/secrets/ci.token', alice)).status).toBe(404);
  });
});

describe('managing MCP resources in Chromium', () => {
  it('registers a resource with its approvers and auto-approve conditions', async () => {
    await page.goto(`${base}/dashboard/mcp-resources`);
    await page.fill('#register-form input[name=uri]', 'svc://secrets/ci/*');
    await page.fill('#register-form input[name=name]', 'CI secrets');
    await page.fill('#register-form input[name=approvers]', 'alice, carol');
    await page.check('#register-form input[name=auto_approve]');
    await page.fill('#register-form input[name=time_window]', '09:00-17:00 Europe/London');
    await page.click('#register');
    expect(await page.textContent('#registered')).toContain('svc://secrets/ci/*');
    const listed = await rest('/v1/security/mcp/resources', alice);
    expect(listed.body.resources).toEqual([expect.objectContaining({
      uri: 'svc://secrets/ci/*', approvers: ['alice', 'carol'], autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London' } },
    })]);
  });
});

describe('managing API keys in Chromium', () => {
  it('creates a key with chosen scopes and tier, shown once, rotates it with a grace period and revokes the new one', async () => {
    await page.goto(`${base}/dashboard/api-keys`);
    await page.fill('#create-key input[name=name]', 'reporting');
    await page.selectOption('#create-key select[name=tier]', 'free');
    for (const box of await page.locator('#create-key input[name=scopes]').all()) await box.uncheck();
    await page.check('#create-key input[value="memories:read"]');
    await page.click('#create');
    const key = (await page.textContent('#new-key'))!.trim();
    expect((await rest('/api/v1/memories', key)).status).toBe(200);
    expect((await rest('/api/v1/memories', key, { method: 'POST', body: JSON.stringify({ title: 'x', content: 'y' }) })).status).toBe(403);

    await page.click('#back');
    const row = page.locator('#api-keys tr', { hasText: 'reporting' });
    await row.locator('select[name=grace_seconds]').selectOption('0');
    await row.locator('button.rotate').click();
    const next = (await page.textContent('#new-key'))!.trim();
    expect((await rest('/api/v1/memories', key)).status).toBe(401);
    expect((await rest('/api/v1/memories', next)).status).toBe(200);

    await page.click('#back');
    await page.locator('#api-keys tr[data-state=active]', { hasText: 'reporting' }).locator('button.revoke').click();
    await page.waitForSelector('#revoked');
    expect((await rest('/api/v1/memories', next)).status).toBe(401);
  });

  it('shows the refusal when a key asks for a scope it lacks, and names the scope a key without apikeys:manage needs', async () => {
    await signInAs(await t.key({ user: 'keeper', tier: 'pro', scopes: ['apikeys:manage', 'memories:read'] }));
    await page.goto(`${base}/dashboard/api-keys`);
    await page.fill('#create-key input[name=name]', 'greedy');
    await page.check('#create-key input[value="secrets:read"]');
    await page.click('#create');
    expect(await page.textContent('#refused')).toContain('cannot grant scopes it does not hold: secrets:read');
    const listed = await rest('/v1/security/api-keys', alice);
    expect((listed.body.data as Json[]).some((k) => k.name === 'greedy')).toBe(false);

    await signInAs(await t.key({ user: 'reader', scopes: ['memories:read'] }));
    const res = await page.goto(`${base}/dashboard/api-keys`);
    expect(res!.status()).toBe(403);
    expect(await page.textContent('.refusal')).toContain('apikeys:manage');
  });
});
