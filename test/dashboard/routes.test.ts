import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { captureLogs, describeLogLines, WARN_LEVEL } from '../support/log-capture.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';
import { g11Mcp } from '../g11/mcp-client.ts';
import { cookieOf, csrfIn, signIn } from './session.ts';

/** The dashboard's routes through app.inject: sign-in and cookies, CSRF, scopes, escaping, approvals, secrets, webhooks. */
let t: TestApp;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
const logs = captureLogs();
beforeAll(async () => {
  t = await createTestApp({ overrides: { clock }, server: logs.server });
});
afterAll(async () => {
  await t.close();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('dashboard sign-in, session cookie and sign-out', () => {
  it("counts each sign-in against the key's gateway limit (the free tier's 60 a minute), so sessions cannot be minted without bound", async () => {
    const key = await t.freshTenant({ tier: 'free' });
    const page = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
    const headers = { ...FORM, cookie: `mnemo_dashboard_signin=${cookieOf(page, 'mnemo_dashboard_signin')!.value}` };
    const attempt = () => t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers, payload: form({ _csrf: csrfIn(page.body), api_key: key }) });
    for (let i = 0; i < 60; i++) expect((await attempt()).statusCode).toBe(303);
    const refused = await attempt();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(cookieOf(refused, 'mnemo_dashboard')).toBeUndefined();
  });

  it('signs in with a key into an HttpOnly, SameSite=Strict session cookie that does not hold the key, and signs out', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const page = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    const pre = cookieOf(page, 'mnemo_dashboard_signin')!;
    const headers = { ...FORM, cookie: `mnemo_dashboard_signin=${pre.value}` };

    const wrong = await t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers, payload: form({ _csrf: csrfIn(page.body), api_key: 'mnemo_live_nope' }) });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('was not accepted');
    const noToken = await t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers, payload: form({ api_key: key }) });
    expect(noToken.statusCode).toBe(403);
    expect(cookieOf(noToken, 'mnemo_dashboard')).toBeUndefined();

    const ok = await t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers, payload: form({ _csrf: csrfIn(page.body), api_key: key, next: '/dashboard/memories' }) });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/dashboard/memories');
    const session = cookieOf(ok, 'mnemo_dashboard')!;
    expect(session.header).toMatch(/HttpOnly/);
    expect(session.header).toMatch(/SameSite=Strict/);
    expect(session.header).toMatch(/Path=\/dashboard/);
    expect(session.header).not.toMatch(/Secure/);
    expect(session.value).not.toContain(key.slice(11, 30));
    expect(session.value.length).toBeGreaterThanOrEqual(43);

    const cookie = `mnemo_dashboard=${session.value}`;
    const memories = await t.app.inject({ method: 'GET', url: '/dashboard/memories', headers: { cookie } });
    expect(memories.statusCode).toBe(200);
    expect(memories.body).toContain('alice');
    // Sign-out needs the token too; then the cookie opens nothing.
    expect((await t.app.inject({ method: 'POST', url: '/dashboard/sign-out', headers: { ...FORM, cookie }, payload: '' })).statusCode).toBe(403);
    const out = await t.app.inject({ method: 'POST', url: '/dashboard/sign-out', headers: { ...FORM, cookie }, payload: form({ _csrf: csrfIn(memories.body) }) });
    expect(out.statusCode).toBe(303);
    expect(cookieOf(out, 'mnemo_dashboard')!.header).toMatch(/Expires=Thu, 01 Jan 1970/);
    const after = await t.app.inject({ method: 'GET', url: '/dashboard/memories', headers: { cookie } });
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe('/dashboard/sign-in?next=%2Fdashboard%2Fmemories');
  });

  it('never redirects sign-in elsewhere than the dashboard', async () => {
    const key = await t.freshTenant();
    const page = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
    const headers = { ...FORM, cookie: `mnemo_dashboard_signin=${cookieOf(page, 'mnemo_dashboard_signin')!.value}` };
    const res = await t.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers, payload: form({ _csrf: csrfIn(page.body), api_key: key, next: '//evil.example/x' }) });
    expect(res.headers.location).toBe('/dashboard');
  });

  it('marks the cookie Secure behind a trusted TLS proxy (MNEMO_TRUST_PROXY=on, X-Forwarded-Proto: https)', async () => {
    const proxied = await createTestApp({ env: { MNEMO_TRUST_PROXY: 'on' } });
    try {
      const key = await proxied.key();
      const https = { 'x-forwarded-proto': 'https' };
      const page = await proxied.app.inject({ method: 'GET', url: '/dashboard/sign-in', headers: https });
      const pre = cookieOf(page, 'mnemo_dashboard_signin')!;
      expect(pre.header).toMatch(/Secure/);
      const res = await proxied.app.inject({
        method: 'POST', url: '/dashboard/sign-in', headers: { ...https, ...FORM, cookie: `mnemo_dashboard_signin=${pre.value}` },
        payload: form({ _csrf: csrfIn(page.body), api_key: key }),
      });
      expect(cookieOf(res, 'mnemo_dashboard')!.header).toMatch(/Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('ends the session when its key is revoked', async () => {
    const key = await t.freshTenant();
    const c = await signIn(t.app, key);
    const record = (await t.container.apiKeys.list(t.tenant))[0]!;
    await t.container.apiKeys.revoke(record.id);
    const res = await c.get('/dashboard/memories');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/dashboard/sign-in?ended=key');
  });
});

describe('dashboard answers that are redirects', () => {
  it('sends a page asked without a session to sign-in (303), and redirects after a form, logging nothing above info', async () => {
    const from = logs.lines.length;
    for (const url of ['/dashboard/approvals/x', '/dashboard/memories?q=x', '/dashboard/secrets']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location, url).toBe(`/dashboard/sign-in?next=${encodeURIComponent(url)}`);
    }
    // The forms whose handlers answer with a redirect: a memory saved and deleted, a sign-out.
    const key = await t.freshTenant();
    const created = json(await g1(t.app, key).create({ title: 'Draft', content: 'to be edited' })).data;
    const c = await signIn(t.app, key);
    const saved = await c.post(`/dashboard/memories/${created.id}`, { content: 'edited' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe(`/dashboard/memories/${created.id}`);
    expect((await c.post(`/dashboard/memories/${created.id}/delete`)).headers.location).toBe(`/dashboard/memories?deleted=${created.id}`);
    expect((await c.post('/dashboard/sign-out')).headers.location).toBe('/dashboard/sign-in?ended=out');
    await new Promise((r) => setImmediate(r));
    expect(describeLogLines(logs.atLeast(WARN_LEVEL, from))).toBe('');
  });
});

describe('dashboard CSRF, scopes and escaping', () => {
  it('refuses a POST without the session\'s token (403) and leaves the memory alone', async () => {
    const key = await t.freshTenant();
    const created = json(await g1(t.app, key).create({ content: 'keep me', title: 'Keep' })).data;
    const c = await signIn(t.app, key);
    for (const token of [false, 'forged-token'] as const) {
      const res = await c.post(`/dashboard/memories/${created.id as string}/delete`, {}, token);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('security token');
    }
    expect((await g1(t.app, key).get(created.id as string)).statusCode).toBe(200);
    // Without any session, a POST is refused too.
    const bare = await t.app.inject({ method: 'POST', url: `/dashboard/memories/${created.id as string}/delete`, headers: FORM, payload: form({ _csrf: c.csrf }) });
    expect(bare.statusCode).toBe(403);
    const deleted = await c.post(`/dashboard/memories/${created.id as string}/delete`);
    expect(deleted.statusCode).toBe(303);
    expect((await g1(t.app, key).get(created.id as string)).statusCode).toBe(404);
  });

  it('shows a clear 403 page (no stack trace) to a key without the page\'s scope', async () => {
    const c = await signIn(t.app, await t.freshTenant({ scopes: ['memories:read'] }));
    for (const [url, scope] of [['/dashboard/secrets', 'secrets:read'], ['/dashboard/audit', 'audit:read'], ['/dashboard/approvals', 'mcp:access']] as const) {
      const res = await c.get(url);
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.body).toContain(`lacks the ${scope} scope`);
      expect(res.body).not.toMatch(/\n\s+at /);
    }
    const edit = await c.post('/dashboard/memories/00000000-0000-0000-0000-000000000000', { content: 'x' });
    expect(edit.statusCode).toBe(403);
    expect(edit.body).toContain('memories:write');
  });

  it('renders user content as text: a memory holding <script> cannot run', async () => {
    const key = await t.freshTenant();
    const evil = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const created = json(await g1(t.app, key).create({ title: `Title ${evil}`, content: `payload ${evil} deploy`, tags: ['<b>tag</b>'] })).data;
    const c = await signIn(t.app, key);
    for (const url of ['/dashboard/memories', `/dashboard/memories/${created.id as string}`, `/dashboard/memories/${created.id as string}/edit`,
      '/dashboard/memories?q=payload%20deploy&search=hybrid']) {
      const res = await c.get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).not.toContain('<script>alert');
      expect(res.body, url).not.toContain('<img src=x');
      expect(res.body, url).not.toContain('<b>tag</b>');
      expect(res.body, url).toContain('&lt;script&gt;');
    }
    expect((await c.get('/dashboard/memories?q=payload%20deploy&search=hybrid')).body).toContain('<mark>payload</mark>');
  });

  it('keeps to the key\'s tenant and to the chosen workspace', async () => {
    const key = await t.freshTenant();
    await g1(t.app, key).create({ content: 'in default', title: 'Default one' });
    await g1(t.app, key, { 'x-workspace-id': 'other' }).create({ content: 'in other', title: 'Other one' });
    const stranger = json(await g1(t.app, await t.freshTenant()).create({ content: 'not yours', title: 'Stranger' })).data;
    const c = await signIn(t.app, key);
    const home = (await c.get('/dashboard/memories')).body;
    expect(home).toContain('Default one');
    expect(home).not.toContain('Other one');
    const other = (await c.get('/dashboard/memories?workspace=other')).body;
    expect(other).toContain('Other one');
    expect(other).not.toContain('Default one');
    // The switch sticks to the session.
    expect((await c.get('/dashboard/memories')).body).toContain('Other one');
    expect((await c.get(`/dashboard/memories/${stranger.id as string}`)).statusCode).toBe(404);
    expect((await c.get('/dashboard/memories?workspace=bad%20name')).statusCode).toBe(400);
  });
});

describe('dashboard approvals, secrets, audit and webhooks', () => {
  it('lets a listed approver approve (the token, shown once, opens the resource) and shows others why they cannot', async () => {
    const aliceKey = await t.freshTenant({ user: 'alice' });
    const bot = g11Mcp(t.app, await t.key({ user: 'bot' }));
    const alice = g11Mcp(t.app, aliceKey);
    await t.container.secrets.create({ tenantId: t.tenant, mode: 'live' }, { userId: 'alice', region: null }, { name: 'prod.db', value: 's3cr3t-value', tags: ['db'], expiresInMs: null });
    expect((await alice.register({ name: 'Prod', uri: 'svc://secrets/prod/*', approvers: ['alice'] })).statusCode).toBe(201);
    const asked = json(await bot.approve({ resource: 'svc://secrets/prod/db', reason: 'nightly <backup>', ttl: 600 }));
    const id = asked.approvalId as string ?? asked.id as string;
    expect(typeof id).toBe('string');
    expect(asked.approvalUrl).toMatch(new RegExp(`/dashboard/approvals/${id}$`));

    const c = await signIn(t.app, aliceKey);
    const inbox = (await c.get('/dashboard/approvals')).body;
    expect(inbox).toContain(id);
    expect(inbox).toContain('nightly &lt;backup&gt;');
    const detail = (await c.get(`/dashboard/approvals/${id}`)).body;
    expect(detail).toContain('id="approve"');
    expect(detail).toContain('data-expires="2026-06-01T12:10:00.000Z"');

    // Bob is no approver: read only, and why.
    const bob = await signIn(t.app, await t.key({ user: 'bob' }));
    const bobView = (await bob.get(`/dashboard/approvals/${id}`)).body;
    expect(bobView).not.toContain('id="approve"');
    expect(bobView).toContain('You (bob) are not a listed approver of svc://secrets/prod/*');
    expect((await bob.post(`/dashboard/approvals/${id}`, { action: 'approve' })).statusCode).toBe(403);

    const answered = await c.post(`/dashboard/approvals/${id}`, { action: 'approve', reason: 'ok for tonight' });
    expect(answered.statusCode).toBe(200);
    // An MCP client needs no token: the page says so before it shows the token for direct HTTP callers.
    expect(answered.body).toContain('Nothing to hand over to an MCP client.');
    expect(answered.body).toContain('bot may now');
    expect(answered.body).not.toContain('Hand this to');
    const token = /id="access-token">([^<]+)</.exec(answered.body)![1]!;
    const read = await bot.read('svc://secrets/prod/db', token);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.body).toContain('s3cr3t-value');
    // Answered once: the page is read only now, and the token is not shown again.
    const again = (await c.get(`/dashboard/approvals/${id}`)).body;
    expect(again).toContain('already approved by alice');
    expect(again).not.toContain(token);
    const audit = json(await alice.audit('limit=10')).logs as { operation: string; actor: string; approvalId: string; success: boolean }[];
    expect(audit).toContainEqual(expect.objectContaining({ operation: 'respond', actor: 'alice', approvalId: id, success: true }));

    // An expired request reads as expired, and cannot be answered.
    const late = json(await bot.approve({ resource: 'svc://secrets/prod/db', reason: 'later', ttl: 60 }));
    const lateId = late.approvalId as string ?? late.id as string;
    clock.advance(61_000);
    const expired = (await c.get(`/dashboard/approvals/${lateId}`)).body;
    expect(expired).toContain('status-expired');
    expect(expired).toContain('can no longer be answered');
    expect((await c.post(`/dashboard/approvals/${lateId}`, { action: 'approve' })).statusCode).toBe(409);
  });

  it('shows secrets without values until an audited reveal, and the audit chain as verified', async () => {
    const key = await t.freshTenant({ user: 'ops' });
    await t.container.secrets.create({ tenantId: t.tenant, mode: 'live' }, { userId: 'ops', region: null }, { name: 'api.token', value: 'tok-<b>9</b>', tags: ['ci'], expiresInMs: null });
    const c = await signIn(t.app, key);
    const list = (await c.get('/dashboard/secrets')).body;
    expect(list).toContain('api.token');
    expect(list).not.toContain('tok-');
    expect((await c.post('/dashboard/secrets/api.token/reveal', {}, false)).statusCode).toBe(403);
    const revealed = await c.post('/dashboard/secrets/api.token/reveal');
    expect(revealed.statusCode).toBe(200);
    expect(revealed.body).toContain('tok-&lt;b&gt;9&lt;/b&gt;');
    expect(revealed.headers['cache-control']).toBe('no-store');
    const audit = (await c.get('/dashboard/audit?action=secret.read')).body;
    expect(audit).toContain('secret:api.token');
    expect(audit).toContain('dashboard');
    expect(audit).toContain('chain verified');
  });

  it('lists webhooks and deliveries, and redelivers a finished one', async () => {
    const key = await t.freshTenant();
    const made = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` }, payload: { url: 'https://hooks.example.com/x', events: ['memory.created'] } });
    expect(made.statusCode, made.body).toBe(201);
    const hookId = (json(made).data?.id ?? json(made).id ?? json(made).webhook_id) as string;
    expect((await g1(t.app, key).create({ title: 'Fan', content: 'fan me out' })).statusCode).toBe(201);
    const c = await signIn(t.app, key);
    expect((await c.get('/dashboard/webhooks')).body).toContain(hookId);
    const detail = (await c.get(`/dashboard/webhooks/g9/${hookId}`)).body;
    const deliveryId = /<td><code>([^<]+)<\/code>/.exec(detail)?.[1] ?? (() => { throw new Error(detail); })();
    expect(detail).toContain('memory.created');
    expect(detail).toContain('status-pending');
    // Still pending: nothing to redeliver.
    expect((await c.post(`/dashboard/webhooks/g9/${hookId}/deliveries/${deliveryId}/redeliver`)).statusCode).toBe(409);
    const [claim] = await t.container.storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 30_000);
    await t.container.storage.webhooks.complete(claim!.delivery.id, { ok: false, at: clock.now(), status: 500, error: 'HTTP 500', retryAt: null, failWebhook: false });
    const failed = (await c.get(`/dashboard/webhooks/g9/${hookId}`)).body;
    expect(failed).toContain('status-failed');
    expect(failed).toContain('HTTP 500');
    expect((await c.post(`/dashboard/webhooks/g9/${hookId}/deliveries/${deliveryId}/redeliver`, {}, false)).statusCode).toBe(403);
    const requeued = await c.post(`/dashboard/webhooks/g9/${hookId}/deliveries/${deliveryId}/redeliver`);
    expect(requeued.statusCode).toBe(303);
    expect((await c.get(requeued.headers.location as string)).body).toContain('status-pending');
    expect((await c.get(`/dashboard/webhooks/g10/${hookId}`)).statusCode).toBe(404);
    expect((await c.get(`/dashboard/webhooks/g9/${hookId}?workspace=elsewhere`)).statusCode).toBe(404);
  });

  it('renders analytics with the G7 figures in the chart data', async () => {
    const key = await t.freshTenant();
    expect((await g1(t.app, key).create({ title: 'Count', content: 'count me' })).statusCode).toBe(201);
    await g1(t.app, key).search({ query: 'count' });
    await t.container.requestMetrics.flush();
    const c = await signIn(t.app, key);
    const res = await c.get('/dashboard/analytics?timeframe=1h');
    expect(res.statusCode).toBe(200);
    const data = JSON.parse(/<script type="application\/json" id="analytics-data">(.*?)<\/script>/s.exec(res.body)![1]!);
    expect(data.labels).toHaveLength(60);
    const requests = data.charts[0].series[0].values as number[];
    expect(requests.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2);
    expect(res.body).toContain('<dt>LLM tokens</dt><dd>0 (0 model calls)</dd>');
    expect(res.body).toContain('/dashboard/assets/chart.umd.min.js');
    const asset = await t.app.inject({ method: 'GET', url: '/dashboard/assets/chart.umd.min.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.body).toContain('Chart');
  });

  it('answers an unknown dashboard page with an HTML 404 that links every section', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/dashboard/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('Page not found');
    for (const path of ['/dashboard"', '/dashboard/memories"', '/dashboard/webhooks"', '/dashboard/audit"']) expect(res.body).toContain(`href="${path}`);
  });
});

describe('dashboard memory validity and history (memory that stays true)', () => {
  it('shows a memory\'s validity, supersedes it through its form, and hides it from the list and search unless asked', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const api = g1(t.app, key);
    const old = json(await api.create({ title: 'Office', content: 'The office is in Leeds', tags: ['office'] })).data;
    clock.advance(60_000);
    const current = json(await api.create({ title: 'Office <new>', content: 'The office moved to York' })).data;
    const c = await signIn(t.app, key);
    const before = (await c.get(`/dashboard/memories/${old.id as string}`)).body;
    expect(before).toContain('data-validity="valid"');
    expect(before).toContain('id="supersede-form"');
    expect(before).toContain(`id="history-link" href="/dashboard/memories/${old.id as string}/history"`);

    expect((await c.post(`/dashboard/memories/${old.id as string}/supersede`, { by: current.id as string }, false)).statusCode).toBe(403);
    expect((await c.post(`/dashboard/memories/${old.id as string}/supersede`, { by: ' ' })).statusCode).toBe(400);
    // The successor must be valid from after it: the other way round is refused, with the reason.
    const backwards = await c.post(`/dashboard/memories/${current.id as string}/supersede`, { by: old.id as string });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.body).toContain('valid from after');
    const done = await c.post(`/dashboard/memories/${old.id as string}/supersede`, { by: (current.id as string).slice(0, 8) });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`/dashboard/memories/${old.id as string}`);

    const after = (await c.get(`/dashboard/memories/${old.id as string}`)).body;
    expect(after).toContain('data-validity="superseded"');
    expect(after).toContain(`<a id="superseded-by" href="/dashboard/memories/${current.id as string}">Office &lt;new&gt;</a>`);
    expect(after).not.toContain('id="supersede-form"');
    const link = `href="/dashboard/memories/${old.id as string}"`;
    expect((await c.get('/dashboard/memories')).body).not.toContain(link);
    const all = (await c.get('/dashboard/memories?expired=1')).body;
    expect(all).toContain(link);
    expect(all).toContain('data-validity="superseded"');
    expect(all).toMatch(/id="include-expired" checked/);
    expect((await c.get('/dashboard/memories?q=office%20Leeds&search=hybrid')).body).not.toContain(link);
    const found = (await c.get('/dashboard/memories?q=office%20Leeds&search=hybrid&expired=1')).body;
    expect(found).toContain(link);
    expect(found).toContain('validity-superseded');

    // A read-only key sees the validity, not the form, and cannot post it.
    const reader = await signIn(t.app, await t.key({ user: 'reader', scopes: ['memories:read'] }));
    expect((await reader.get(`/dashboard/memories/${current.id as string}`)).body).not.toContain('id="supersede-form"');
    expect((await reader.post(`/dashboard/memories/${current.id as string}/supersede`, { by: old.id as string })).statusCode).toBe(403);
  });

  it('shows the history: versions newest first with what each update changed, paged, the chain both ways, and a deleted memory\'s tombstone', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const api = g1(t.app, key);
    const v1 = json(await api.create({ title: 'Office', content: 'The office is in <Leeds>', tags: ['office'] })).data;
    const id = v1.id as string;
    clock.advance(60_000);
    expect((await api.update(id, { content: 'The office is in Leeds, 2nd floor' })).statusCode).toBe(200);
    expect((await api.update(id, { tags: ['office', 'hq'] })).statusCode).toBe(200);
    for (let n = 0; n < 10; n++) expect((await api.update(id, { title: `Office ${n}` })).statusCode).toBe(200);
    clock.advance(60_000);
    const next = json(await api.create({ title: 'Office moved', content: 'The office is in York' })).data;
    const c = await signIn(t.app, key);
    expect((await c.post(`/dashboard/memories/${id}/supersede`, { by: next.id as string })).statusCode).toBe(303);

    const res = await c.get(`/dashboard/memories/${id}/history`);
    expect(res.statusCode).toBe(200);
    const rows = (body: string) => [...body.matchAll(/<tr data-version="(\d+)"/g)].map((m) => Number(m[1]));
    // 13 versions: the current one and 12 kept, 10 a page.
    expect(rows(res.body)).toEqual([13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    expect(res.body).toContain('(current)');
    expect(res.body).toContain('<strong>title</strong>: Office 8 → Office 9');
    expect(res.body).toContain('data-validity="superseded"');
    expect(res.body).toMatch(/id="chain-superseded-by"><li><a href="\/dashboard\/memories\/[0-9a-f-]+">Office moved<\/a>/);
    expect(res.body).toContain('id="chain-supersedes">Nothing');
    expect(res.body).toContain(`id="older" href="/dashboard/memories/${id}/history?offset=10"`);

    const older = (await c.get(`/dashboard/memories/${id}/history?offset=10`)).body;
    expect(rows(older)).toEqual([2, 1]);
    // The first row of a later page is judged against the version above it (on the page before).
    const row = (body: string, v: number) => new RegExp(`<tr data-version="${v}">[\\s\\S]*?</tr>`).exec(body)![0];
    expect(row(older, 2)).toContain('<strong>tags</strong>: office → office, hq');
    expect(row(older, 2)).not.toContain('<strong>content</strong>');
    expect(row(older, 1)).toContain('<strong>content</strong>');
    expect(row(older, 1)).toContain('The office is in &lt;Leeds&gt;');
    expect(older).toContain(`id="newer" href="/dashboard/memories/${id}/history"`);
    expect(older).not.toContain('id="older"');

    const forward = (await c.get(`/dashboard/memories/${next.id as string}/history`)).body;
    expect(forward).toContain(`id="chain-supersedes"><li><a href="/dashboard/memories/${id}">Office 9</a>`);
    expect(forward).toContain('id="chain-superseded-by">Nothing');

    expect((await c.get(`/dashboard/memories/${id}/history?offset=-1`)).statusCode).toBe(400);
    expect((await c.get('/dashboard/memories/00000000-0000-4000-8000-000000000000/history')).statusCode).toBe(404);
    expect((await api.delete(next.id as string)).statusCode).toBe(200);
    const gone = await c.get(`/dashboard/memories/${next.id as string}/history`);
    expect(gone.statusCode).toBe(200);
    expect(gone.body).toContain('id="tombstone"');
    expect(gone.body).toContain('by alice (user_request)');
    expect(gone.body).not.toContain('York');
  });
});
