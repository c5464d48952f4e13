import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlm } from '../support/mock-llm-server.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { launchChromium, signInBrowser, type Chromium } from './chromium.ts';
import { screenshot } from './screenshots.ts';

/**
 * The dashboard end to end in real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) against
 * the real server listening on loopback: one browser and one page for the whole file, used in order like a person
 * would. On both stores (the `postgres` project runs this file too). `npm run screenshots` keeps the pages visited in
 * docs/screenshots/ (./screenshots.ts); a plain run writes none.
 */
let t: TestApp;
let base: string;
let chromium: Chromium;
let browser: BrowserContext;
let page: Page;
const keys: Record<string, string> = {};
let approvalId = '';
let llm: MockLlm;

const shot = (name: string) => screenshot(page, name);
const api = (path: string, key: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers } });

beforeAll(async () => {
  // A scripted chat model for the review flow's extract job: one fact, which replaces the lunch memory it is shown.
  llm = await startMockLlm({
    script: (req) => (req.jsonSchema?.name === 'extracted_facts'
      ? { json: { facts: [{ content: 'Thursday lunch moved to the canteen on the second floor.', sources: [0] }] } }
      : { json: { action: 'supersede', supersedes: [/- id: (\S+) .*third floor/.exec(req.prompt)?.[1] ?? 'none'], duplicate_of: null, reason: 'The floor changed.' } }),
  });
  t = await createTestApp({ env: { MNEMO_LLM_URL: llm.url, MNEMO_LLM_MODEL: 'mock-chat' } });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keys.alice = await t.key({ user: 'alice' });
  keys.bot = await t.key({ user: 'bot', scopes: ['mcp:access'] });
  keys.reader = await t.key({ user: 'reader', scopes: ['memories:read'] });
  // What the pages show: memories, a secret, an access path needing alice's approval and the bot's pending request,
  // a webhook, and some traffic for the charts.
  const seeded: string[] = [];
  for (const [title, content, tags] of [
    ['Deploy checklist', 'Run the database migrations before you deploy the API servers.', ['ops', 'deploy']],
    ['Postgres tuning', 'Raise shared_buffers to a quarter of memory on the database hosts.', ['db']],
    ['Team lunch', 'Thursday lunch is at the noodle place near the station.', ['social']],
  ] as const) {
    const res = await api('/api/v1/memories', keys.alice, { method: 'POST', body: JSON.stringify({ title, content, tags }), headers: { 'x-api-key': keys.alice } });
    expect(res.status).toBe(201);
    seeded.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  // A fact that changed: lunch moved (an update, kept as a version), then a new memory superseded it.
  expect((await api(`/api/v1/memories/${seeded[2]}`, keys.alice, { method: 'PUT', body: JSON.stringify({ tags: ['social', 'team'] }), headers: { 'x-api-key': keys.alice } })).status).toBe(200);
  const alice = await t.container.apiKeys.authenticate(keys.alice);
  await t.container.memories.create({ tenantId: alice.tenantId, mode: alice.mode, workspace: 'default' }, alice, {
    title: 'Team lunch', content: 'Thursday lunch moved to the canteen on the third floor.', tags: ['social'], supersedes: [seeded[2]!],
  });
  await t.container.secrets.create({ tenantId: t.tenant, mode: 'live' }, { userId: 'alice', region: null },
    { name: 'prod.database-url', value: 'postgres://app:hunter2@db/prod', tags: ['prod', 'db'], expiresInMs: null });
  expect((await api('/v1/security/mcp/resources', keys.alice, {
    method: 'POST', body: JSON.stringify({ name: 'Production secrets', uri: 'svc://secrets/prod/*', approvers: ['alice'] }),
  })).status).toBe(201);
  const asked = await api('/v1/security/mcp/approve', keys.bot, {
    method: 'POST', body: JSON.stringify({ resource: 'svc://secrets/prod/database-url', reason: 'Nightly backup job needs the database URL', ttl: 1800 }),
  });
  approvalId = ((await asked.json()) as { approvalId: string }).approvalId;
  expect((await api('/api/v1/webhooks', keys.alice, { method: 'POST', body: JSON.stringify({ url: 'https://hooks.example.com/mnemo', events: ['memory.created', 'memory.updated'] }) })).status).toBe(201);
  await api('/api/v1/memories', keys.alice, { method: 'POST', body: JSON.stringify({ title: 'Incident 42', content: 'The API returned 502s after the deploy.' }), headers: { 'x-api-key': keys.alice } });
  await api('/api/v1/memories/search', keys.alice, { method: 'POST', body: JSON.stringify({ query: 'deploy' }), headers: { 'x-api-key': keys.alice } });
  await api('/api/v1/memories/nope', keys.alice, { headers: { 'x-api-key': keys.alice } });
  await t.container.requestMetrics.flush();

  chromium = await launchChromium({ width: 1100, height: 680 });
  ({ context: browser, page } = chromium);
}, 120_000);

afterAll(async () => {
  await chromium?.close();
  await t?.close();
  await llm?.close();
});

describe('dashboard in Chromium', () => {
  it('signs in at the approvalUrl, approves, and the token issued opens the resource for the requester', async () => {
    await page.goto(`${base}/dashboard/approvals/${approvalId}`);
    expect(page.url()).toContain('/dashboard/sign-in?next=');
    await page.fill('input[name=api_key]', keys.alice!);
    await shot('sign-in');
    await page.click('#sign-in');
    await page.waitForURL(`**/dashboard/approvals/${approvalId}`);
    expect(await page.textContent('main')).toContain('Nightly backup job needs the database URL');
    expect(await page.textContent('.countdown')).toMatch(/expires in \d+m \d+s/);
    await shot('approval');
    await page.fill('textarea[name=reason]', 'For tonight only');
    await page.click('#approve');
    const token = (await page.textContent('#access-token'))!.trim();
    expect(await page.textContent('#mcp-hand-off')).toContain('needs no token');
    await shot('approval-approved');
    const read = await fetch(`${base}/v1/security/mcp/resources/${encodeURIComponent('svc://secrets/prod/database-url')}`,
      { headers: { authorization: `Bearer ${keys.bot}`, 'x-mcp-access-token': token } });
    expect(read.status).toBe(200);
    expect(await read.text()).toContain('postgres://app:hunter2@db/prod');
    await page.goto(`${base}/dashboard/approvals?status=all`);
    expect(await page.textContent('#approvals')).toContain('approved');
    await shot('approvals');
  });

  it('searches memories (hybrid, highlighted, each score explained), opens one, and offers a lower threshold when nothing matched', async () => {
    await page.goto(`${base}/dashboard/memories`);
    expect(await page.locator('#memories tbody tr').count()).toBe(4);
    await shot('memories');
    await page.fill('input[name=q]', 'database migrations');
    await page.selectOption('select[name=search]', 'hybrid');
    await page.click('#search button');
    await page.waitForSelector('#results');
    expect(await page.locator('#results mark').first().textContent()).toMatch(/database|migrations/i);
    // Explained: the mode, and each hybrid score's semantic and keyword parts.
    expect(await page.textContent('#search-rule')).toContain('Hybrid search');
    expect(await page.locator('#results .explain').first().textContent()).toMatch(/semantic 0\.7 × [\d.]+\s+\+ keyword 0\.3 × [\d.]+/);
    await page.click('#results tbody tr:first-child a');
    await page.waitForSelector('#content');
    expect(await page.textContent('#content')).toContain('Run the database migrations');
    await shot('memory');
    // Nothing reaches a high threshold: the page says so and offers the same search lower.
    await page.goto(`${base}/dashboard/memories?q=${encodeURIComponent('quarterly tax filing')}&threshold=0.95`);
    expect(await page.textContent('#no-results')).toContain('No memory reaches the threshold 0.95');
    await page.click('#lower-threshold');
    expect(await page.inputValue('input[name=threshold]')).toBe('0.75');
  });

  it('shows superseded memories when asked, and a memory\'s history with the chain', async () => {
    await page.goto(`${base}/dashboard/memories?expired=1`);
    const href = (await page.getAttribute('#memories tr:has([data-validity=superseded]) a', 'href'))!;
    await page.goto(`${base}${href}/history`);
    expect(await page.locator('#versions tbody tr').count()).toBe(2);
    expect(await page.textContent('#chain-superseded-by')).toContain('Team lunch');
    await shot('memory-history');
  });

  it('draws the analytics charts with Chart.js from the G7 figures', async () => {
    await page.goto(`${base}/dashboard/analytics?timeframe=1h`);
    await page.waitForFunction(() => {
      const w = globalThis as unknown as { Chart?: { getChart(id: string): unknown } };
      return w.Chart?.getChart('chart-requests') !== undefined;
    });
    const charts = await page.evaluate(() => {
      const w = globalThis as unknown as { Chart: { getChart(id: string): { data: { labels: string[]; datasets: { label: string; data: (number | null)[] }[] } } } };
      return ['chart-requests', 'chart-latency', 'chart-searches', 'chart-cost'].map((id) => {
        const c = w.Chart.getChart(id);
        return { id, labels: c.data.labels.length, datasets: c.data.datasets.map((d) => ({ label: d.label, data: d.data })) };
      });
    });
    expect(charts.map((c) => c.labels)).toEqual([60, 60, 60, 60]);
    const sum = (xs: (number | null)[]) => xs.reduce<number>((a, b) => a + (b ?? 0), 0);
    expect(sum(charts[0]!.datasets[0]!.data)).toBeGreaterThanOrEqual(6);
    expect(sum(charts[0]!.datasets[1]!.data)).toBeGreaterThanOrEqual(1);
    expect(charts[1]!.datasets.map((d) => d.label)).toEqual(['p50', 'p95', 'p99']);
    expect(charts[1]!.datasets[2]!.data.some((v) => v !== null && v > 0)).toBe(true);
    expect(sum(charts[2]!.datasets[0]!.data)).toBeGreaterThanOrEqual(1);
  });

  it('shows webhooks, secrets (revealed on request) and the verified audit log', async () => {
    await page.goto(`${base}/dashboard/webhooks`);
    await page.click('.webhooks tbody tr:first-child a');
    await page.waitForSelector('#deliveries');
    expect(await page.locator('#deliveries tbody tr').count()).toBeGreaterThanOrEqual(1);
    await page.goto(`${base}/dashboard/secrets`);
    expect(await page.textContent('#secrets')).not.toContain('hunter2');
    await shot('secrets');
    await page.click('#secrets .reveal');
    expect(await page.textContent('#secret-value')).toBe('postgres://app:hunter2@db/prod');
    await page.goto(`${base}/dashboard/audit`);
    expect(await page.textContent('#chain')).toContain('chain verified');
    expect(await page.textContent('#audit')).toContain('secret.read');
    await shot('audit');
  });

  it('refuses a POST without the CSRF token, and a page the key has no scope for; signs out', async () => {
    await page.goto(`${base}/dashboard/memories`);
    const href = (await page.getAttribute('#memories tbody tr:first-child a', 'href'))!;
    const status = await page.evaluate(async (url) => (await fetch(url, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '', credentials: 'same-origin',
    })).status, `${href}/delete`);
    expect(status).toBe(403);
    await page.goto(`${base}${href}`);
    expect(await page.locator('#content').count()).toBe(1);

    await page.click('#sign-out');
    await page.waitForURL('**/dashboard/sign-in?ended=out');
    await page.goto(`${base}/dashboard/secrets`);
    expect(page.url()).toContain('/dashboard/sign-in');
    await page.fill('input[name=api_key]', keys.reader!);
    await page.click('#sign-in');
    await page.waitForSelector('.refusal');
    expect(await page.textContent('.refusal')).toContain('lacks the secrets:read scope');
    await shot('scope-refused');
  });

  it('reviews ingestions: another key approves one proposal and rejects the other, and sees a supersession side by side', async () => {
    // Carol's key asks (review policy, through G1): a raw job (one proposal per turn) and an extract job from the scripted model.
    keys.carol = await t.key({ user: 'carol' });
    const carol = async (path: string, body?: unknown): Promise<{ status: number; data: Json }> => {
      const res = await api(path, keys.carol!, { headers: { 'x-api-key': keys.carol! }, ...(body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) }) });
      return { status: res.status, data: ((await res.json()) as Json).data as Json };
    };
    const raw = await carol('/api/v1/memories/ingest', { mode: 'raw', policy: 'review', messages: [
      { role: 'user', content: 'The staging database is restored every Sunday night.', timestamp: '2026-03-01T20:15:00Z' },
      { role: 'assistant', content: 'Sounds good, I will keep that in mind.', timestamp: '2026-03-01T20:15:05Z' },
    ] });
    const extracted = await carol('/api/v1/memories/ingest', { mode: 'extract', policy: 'review', messages: [
      { role: 'user', content: 'Heads up: Thursday lunch is on the second floor from now on.' },
    ] });
    expect([raw.status, extracted.status]).toEqual([202, 202]);
    await t.container.ingestionWorker.drain();

    // Alice opens the Reviews page.
    await signInBrowser(browser, base, keys.alice!);
    await page.goto(`${base}/dashboard/reviews`);
    expect(await page.locator('#reviews tbody tr[data-state=pending_review]').count()).toBe(2);
    await shot('reviews');
    await page.click(`#reviews a[href="/dashboard/reviews/${raw.data.id}"]`);
    await page.waitForSelector('#proposal-p1');
    expect(await page.textContent('#requested-by')).toContain('carol');
    expect(await page.textContent('#proposal-p1 .sources')).toMatch(/\[0\] user · 2026-03-01 20:15:00 UTC\s+The staging database is restored every Sunday night\./);
    await page.click('#proposal-p1 button.approve');
    await page.waitForURL('**/dashboard/reviews/*?decided=approve&proposal=p1');
    expect(await page.getAttribute('#proposal-p1', 'data-status')).toBe('applied');
    await page.click('#proposal-p2 button.reject');
    await page.waitForURL('**/dashboard/reviews/*?decided=reject&proposal=p2');
    expect(await page.textContent('#ingestion')).toContain('completed');

    // Exactly the approved proposal was written (read through G1).
    const job = (await carol(`/api/v1/memories/ingest/${raw.data.id}`)).data;
    expect([job.state, ...job.proposals.map((p: Json) => p.status)]).toEqual(['completed', 'applied', 'rejected']);
    const listed = (await carol('/api/v1/memories?limit=100')).data as unknown as { id: string; content: string }[];
    expect(listed.filter((m) => /staging database|keep that in mind/.test(m.content)).map((m) => m.id)).toEqual([job.proposals[0].memory_id]);

    // The extract job's supersession: the memory it replaces beside the proposed one, then approved with its button.
    await page.goto(`${base}/dashboard/reviews/${extracted.data.id}`);
    expect(await page.textContent('#proposal-p1 .side-by-side .pane:not(.proposed)')).toContain('Thursday lunch moved to the canteen on the third floor.');
    expect(await page.textContent('#proposal-p1 .side-by-side .pane.proposed')).toContain('Thursday lunch moved to the canteen on the second floor.');
    await shot('review-supersede');
    await page.click('#approve-all');
    await page.waitForURL('**/dashboard/reviews/*?decided=approve');
    expect(await page.getAttribute('#proposal-p1 .side-by-side .pane:not(.proposed) [data-validity]', 'data-validity')).toBe('superseded');
  });
});
