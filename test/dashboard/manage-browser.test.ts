import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHeader, parseRecord } from '../../src/core/memories/memory-export.ts';
import { runMnemoInProcess } from '../support/cli.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { launchChromium, signInBrowser, type Chromium } from './chromium.ts';
import { screenshot } from './screenshots.ts';

/**
 * The managing pages driven in headless Chromium (one browser for the file) against the server on loopback: each
 * action is done as a person would (fill the form, submit) and its result read back through the REST API. On both
 * stores (the `postgres` project runs this file too); the same pages' look (width, axe) is look.browser.test.ts's.
 */
let t: TestApp;
let base: string;
let chromium: Chromium;
let browser: BrowserContext;
let page: Page;
let alice = '';
let hookServer: Server;
let hookUrl = '';
const hookHits: number[] = [];

const rest = async (path: string, key: string, init: RequestInit = {}): Promise<{ status: number; body: Json }> => {
  const res = await fetch(`${base}${path}`, { ...init, headers: { 'x-api-key': key, authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  return { status: res.status, body: res.status === 204 ? {} : await res.json() as Json };
};
const memory = (id: string) => rest(`/api/v1/memories/${id}`, alice);
const signInAs = (key: string) => signInBrowser(browser, base, key);

beforeAll(async () => {
  // The webhook's receiver: answers 500, so a delivery with one attempt fails.
  hookServer = createServer((req, res) => { hookHits.push(Date.now()); req.resume(); res.writeHead(500).end('down'); });
  await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
  t = await createTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' } });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  alice = await t.key({ user: 'alice', tier: 'pro' });
  chromium = await launchChromium({ width: 1100, height: 680 });
  ({ context: browser, page } = chromium);
  await signInAs(alice);
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await t?.close();
  await new Promise((resolve) => hookServer?.close(resolve));
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

  it('exports the ticked memories, which `mnemo import` loads into another store whole, and then forgets them', async () => {
    const made: Json[] = [];
    for (const n of [1, 2]) {
      made.push((await rest('/api/v1/memories', alice, { method: 'POST', body: JSON.stringify({
        title: `Bulk ${n}`, content: `Bulk note ${n}.`, tags: ['bulk', `n${n}`], metadata: { batch: n, source: { kind: 'dashboard' } },
      }) })).body.data as Json);
    }
    const ids = made.map((m) => m.id as string);
    await page.goto(`${base}/dashboard/memories`);
    for (const id of ids) await page.check(`input[name=id][value="${id}"]`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-selected')]);
    const file = (await download.path())!;
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(parseHeader(lines[0]!).filter.workspace).toBe('default');
    expect(lines.slice(1).map((l) => { const r = parseRecord(l); return r.kind === 'memory' ? r.memory.id : ''; }).sort()).toEqual([...ids].sort());

    // `mnemo import` (in this process) loads the file into a new SQLite data directory; read back with `mnemo export`.
    const target = mkdtempSync(join(tmpdir(), 'mnemo-import-'));
    try {
      const env = { MNEMO_DATA_DIR: target, MNEMO_EMBEDDINGS: 'hashing', MNEMO_EMBEDDINGS_DIMENSIONS: '256' };
      const imported = await runMnemoInProcess(env, 'import', file, '--no-progress');
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain('imported: 2 memories (0 embedded');
      const back = await runMnemoInProcess(env, 'export', '--no-progress');
      expect(back.code, back.stderr).toBe(0);
      const arrived = back.stdout.trim().split('\n').slice(1).map(parseRecord).flatMap((r) => (r.kind === 'memory' ? [r.memory] : []));
      expect(arrived.map((m) => ({ id: m.id, workspace: m.scope.workspace, title: m.title, content: m.content, tags: m.tags, metadata: m.metadata }))
        .sort((x, y) => x.title.localeCompare(y.title))).toEqual(made.map((m) => ({
        id: m.id, workspace: 'default', title: m.title, content: m.content, tags: m.tags, metadata: m.metadata,
      })));
    } finally {
      rmSync(target, { recursive: true, force: true });
    }

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
    const made = (await rest('/v1/security/secrets/ci.token', alice)).body;
    expect(made).toMatchObject({ value: 'tok-1', tags: ['ci', 'deploy'] });
    // The edit page shows what the secret holds now, without its value.
    expect(await page.textContent('#current-tags')).toBe('ci, deploy');
    expect(await page.getAttribute('#current-expiry time', 'datetime')).toBe(made.expiresAt);
    expect(await page.inputValue('input[name=tags]')).toBe('ci, deploy');
    expect(await page.textContent('main')).not.toContain('tok-1');

    await page.fill('textarea[name=value]', 'tok-2');
    await page.fill('input[name=expires_in]', 'never');
    await page.click('#save-version');
    expect(await page.textContent('#saved')).toContain('version 2');
    expect((await rest('/v1/security/secrets/ci.token', alice)).body).toMatchObject({ value: 'tok-2', version: 2, expiresAt: null });
    expect(await page.textContent('#current-expiry')).toBe('never');

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

  it('edits its approvers and auto-approve, then deletes it with its approvals after the confirmation', async () => {
    const uri = 'svc://secrets/ci/*';
    await page.click(`#mcp-resources tr[data-uri="${uri}"] a.manage-mcp-resource`);
    await page.waitForSelector('#edit-form');
    expect(await page.inputValue('#edit-form input[name=approvers]')).toBe('alice, carol');
    await page.fill('#edit-form input[name=approvers]', 'alice, dave');
    await page.uncheck('#edit-form input[name=auto_approve]');
    await page.fill('#edit-form input[name=time_window]', '');
    await page.click('#save-resource');
    await page.waitForSelector('#saved');
    const resource = async () => (await rest('/v1/security/mcp/resources', alice)).body.resources as Json[];
    expect(await resource()).toEqual([expect.objectContaining({ uri, approvers: ['alice', 'dave'], autoApprove: { enabled: false, conditions: {} } })]);

    // A client asks for a path under it: an approval waits for alice or dave.
    const bot = await t.key({ user: 'bot', scopes: ['mcp:access'] });
    const asked = await rest('/v1/security/mcp/approve', bot, { method: 'POST', body: JSON.stringify({ resource: 'svc://secrets/ci/token', reason: 'Release build', ttl: 600 }) });
    expect(asked.status).toBe(201);
    const approvalId = asked.body.approvalId as string;
    expect((await rest(`/v1/security/mcp/approvals/${approvalId}`, alice)).status).toBe(200);

    // Delete asks for the confirmation first: the browser keeps the form until the box is ticked.
    await page.click('#delete-resource');
    expect(await page.locator('#delete-form input[name=confirm]:invalid').count()).toBe(1);
    await page.check('#delete-form input[name=confirm]');
    await page.click('#delete-resource');
    await page.waitForSelector('#deleted');
    expect(await page.textContent('#deleted')).toContain(uri);
    expect(await resource()).toEqual([]);
    expect((await rest(`/v1/security/mcp/approvals/${approvalId}`, alice)).status).toBe(404);
    expect((await rest('/v1/security/mcp/approvals', alice)).body.data).toEqual([]);
  });
});

describe('managing webhooks in Chromium', () => {
  it('creates a webhook, redelivers its failed delivery and pauses it through the page; the API sees each step', async () => {
    const hookViaApi = async (id: string): Promise<Json> => {
      const { body } = await rest(`/api/v1/webhooks/${id}`, alice);
      return (body.data ?? body) as Json;
    };
    // The width of look.browser.test.ts's pages, for the screenshots of docs/dashboard.md.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${base}/dashboard/webhooks`);
    await page.click('#create-webhook summary');
    await page.selectOption('#webhook-kind', 'g9');
    await page.fill('input[name=url]', hookUrl);
    await page.fill('input[name=events]', 'memory.created');
    await page.fill('input[name=max_attempts]', '1');
    await screenshot(page, 'webhook-create');
    await page.click('#create');
    expect(await page.textContent('#webhook-secret')).toMatch(/^whsec_/);
    await page.click('#created-link');
    await page.waitForSelector('#deliveries');
    const id = /\/webhooks\/g9\/([^/?]+)/.exec(page.url())![1]!;
    expect(await hookViaApi(id)).toMatchObject({ url: hookUrl, active: true });

    // A memory created fans out one delivery; the receiver answers 500 and the only attempt fails.
    expect((await rest('/api/v1/memories', alice, { method: 'POST', body: JSON.stringify({ title: 'Fan out', content: 'to the hook' }) })).status).toBe(201);
    expect(await t.container.deliveries.tick()).toBe(1);
    await page.reload();
    expect(await page.getAttribute('#deliveries tbody tr', 'data-state')).toBe('failed');
    await page.click('#deliveries .redeliver');
    await page.waitForSelector('#requeued');
    expect(await page.getAttribute('#deliveries tbody tr', 'data-state')).toBe('pending');
    const hits = hookHits.length;
    expect(await t.container.deliveries.tick()).toBe(1);
    expect(hookHits.length).toBe(hits + 1);
    await screenshot(page, 'webhook-redelivered');

    await page.click('#webhook-status button.pause');
    await page.waitForSelector('#changed');
    expect((await hookViaApi(id)).active).toBe(false);
    await page.click('#webhook-status button.resume');
    await page.waitForSelector('#webhook-status .status-active');
    expect((await hookViaApi(id)).active).toBe(true);

    // Refused by the service: the API's own message, on the page, with what was typed kept.
    await page.goto(`${base}/dashboard/webhooks`);
    await page.click('#create-webhook summary');
    await page.fill('input[name=url]', 'https://hooks.example.com/x');
    await page.fill('input[name=events]', 'memory.exploded');
    await page.click('#create');
    expect(await page.textContent('#refused')).toContain('unknown event type "memory.exploded"');
    expect(await page.inputValue('input[name=events]')).toBe('memory.exploded');
    await page.setViewportSize({ width: 1100, height: 680 });
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
