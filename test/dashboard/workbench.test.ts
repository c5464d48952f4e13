import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { signIn } from './session.ts';

/**
 * The dashboard as a workbench through app.inject, on both stores (the `postgres` project runs this file too): the
 * overview's figures, search that explains itself, analytics' tables, webhook actions checked through the API, and
 * the shell (favicon, CSP, no inline script). test/dashboard/look.browser.test.ts drives the same pages in Chromium.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
/** The text of the element with this id (up to the first closing tag of its name: none of these nest), '' without one. */
const text = (body: string, id: string): string => {
  const open = new RegExp(`<(\\w+)[^>]*\\sid="${id}"[^>]*>`).exec(body);
  if (!open) return '';
  const from = open.index + open[0].length;
  const inner = body.slice(from, body.indexOf(`</${open[1]}>`, from));
  return inner.replace(/<[^>]+>/g, ' ').replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!).replace(/\s+/g, ' ').trim();
};
/** The overview's figure `id` (a number; NaN when the page has none). */
const figure = (body: string, id: string): number => {
  const at = body.indexOf(`id="${id}"`);
  return at < 0 ? NaN : Number(/<span class="figure">([^<]*)<\/span>/.exec(body.slice(at))?.[1]);
};

describe('overview', () => {
  it('shows a new install its first steps, zero counts and the health /health reports', async () => {
    const c = await signIn(t.app, await t.freshTenant({ user: 'alice' }));
    const res = await c.get('/dashboard');
    expect(res.statusCode).toBe(200);
    expect(figure(res.body, 'stat-memories')).toBe(0);
    expect(figure(res.body, 'stat-approvals')).toBe(0);
    expect(figure(res.body, 'stat-reviews')).toBe(0);
    expect(res.body).toContain('id="first-steps"');
    expect(res.body).toContain('npx mnemo keys create');
    expect(res.body).toContain('claude mcp add --transport http mnemo http://localhost:80/mcp');
    const health = json(await t.app.inject({ method: 'GET', url: '/health' }));
    const card = text(res.body, 'health');
    expect(card).toContain(health.storage.kind);
    expect(card).toContain(health.embeddings.model);
    expect(card).toContain('complete');
  });

  it("counts a seeded workspace's memories, today's searches and errors, waiting approvals and reviews, and lists the latest changes", async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const bot = await t.key({ user: 'bot', scopes: ['mcp:access', 'memories:write', 'memories:read'] });
    for (const title of ['Deploy checklist', 'Postgres tuning']) expect((await g1(t.app, key).create({ title, content: `${title} notes` })).statusCode).toBe(201);
    expect((await g1(t.app, key).search({ query: 'deploy' })).statusCode).toBe(200);
    expect((await g1(t.app, key).get('mem_nope')).statusCode).toBe(404);
    await t.app.inject({ method: 'POST', url: '/v1/security/mcp/resources', headers: bearer(key), payload: { name: 'Prod', uri: 'svc://secrets/prod/*', approvers: ['alice'] } });
    const asked = await t.app.inject({ method: 'POST', url: '/v1/security/mcp/approve', headers: bearer(bot), payload: { resource: 'svc://secrets/prod/db', reason: 'backup', ttl: 600 } });
    expect(asked.statusCode, asked.body).toBe(201);
    const ingest = await t.app.inject({ method: 'POST', url: '/api/v1/memories/ingest', headers: { 'x-api-key': bot },
      payload: { mode: 'raw', policy: 'review', messages: [{ role: 'user', content: 'The staging database restores on Sundays.' }] } });
    expect(ingest.statusCode, ingest.body).toBe(202);
    await t.container.ingestionWorker.drain();
    await t.container.requestMetrics.flush();

    const res = await (await signIn(t.app, key)).get('/dashboard');
    expect(figure(res.body, 'stat-memories')).toBe(2);
    expect(figure(res.body, 'stat-searches')).toBe(1);
    expect(figure(res.body, 'stat-errors')).toBeGreaterThanOrEqual(1);
    expect(figure(res.body, 'stat-approvals')).toBe(1);
    expect(figure(res.body, 'stat-reviews')).toBe(1);
    expect(res.body).not.toContain('id="first-steps"');
    expect(text(res.body, 'activity')).toMatch(/Postgres tuning.*Deploy checklist/);
    // Another tenant sees none of it.
    const other = await (await signIn(t.app, await t.freshTenant())).get('/dashboard');
    expect(figure(other.body, 'stat-memories')).toBe(0);
    expect(figure(other.body, 'stat-searches')).toBe(0);
  });

  it('is the landing page for a key without memories:read too, showing only what it may open', async () => {
    const c = await signIn(t.app, await t.freshTenant({ scopes: ['mcp:access'] }));
    const res = await c.get('/dashboard');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="stat-approvals"');
    expect(res.body).not.toContain('id="stat-memories"');
    expect(res.body).toContain('has no <code>memories:read</code> scope');
  });
});

describe('search that explains itself', () => {
  let c: Awaited<ReturnType<typeof signIn>>;
  beforeAll(async () => {
    const key = await t.freshTenant();
    for (const [title, content] of [
      ['Deploy checklist', 'Run the database migrations before you deploy the API servers.'],
      ['Postgres tuning', 'Raise shared_buffers to a quarter of memory on the database hosts.'],
      ['Team lunch', 'Thursday lunch is at the noodle place near the station.'],
    ]) expect((await g1(t.app, key).create({ title, content })).statusCode).toBe(201);
    c = await signIn(t.app, key);
  });

  it('shows the mode, the threshold in force and, for hybrid, the semantic and keyword parts of each score', async () => {
    const res = await c.get('/dashboard/memories?q=database+migrations&search=hybrid&threshold=0.3');
    expect(text(res.body, 'search-rule')).toContain('Hybrid search');
    expect(text(res.body, 'search-rule')).toContain('threshold 0.3');
    const parts = [...res.body.matchAll(/data-semantic="([\d.]+)" data-keyword="([\d.]+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
    const scores = [...res.body.matchAll(/<\/td><td>([\d.]+)<\/td>\s*<td class="highlights">/g)].map((m) => Number(m[1]));
    expect(parts.length).toBeGreaterThan(0);
    expect(parts.length).toBe(scores.length);
    // The parts add up to the score shown (each rounded to 3 places).
    parts.forEach(([s, k], i) => expect(Math.abs(s! + k! - scores[i]!)).toBeLessThanOrEqual(0.002));
    expect(res.body).toMatch(/<mark>(database|migrations)<\/mark>/i);
  });

  it('counts what each query matched, not the same number for every query', async () => {
    const counts = await Promise.all(['database migrations', 'noodle lunch', 'quantum chromodynamics'].map(async (q) =>
      text((await c.get(`/dashboard/memories?q=${encodeURIComponent(q)}&search=hybrid`)).body, 'search-summary')));
    expect(new Set(counts).size).toBe(3);
    expect(counts[2]).toMatch(/^0 memories/);
  });

  it('says when nothing reached the threshold and links the same search with a lower one', async () => {
    const res = await c.get('/dashboard/memories?q=noodles+near+the+station&search=semantic&threshold=0.99');
    expect(text(res.body, 'search-rule')).toContain('threshold 0.99');
    expect(text(res.body, 'no-results')).toContain('No memory reaches the threshold 0.99');
    const href = /id="lower-threshold" href="([^"]+)"/.exec(res.body)![1]!.replace(/&amp;/g, '&');
    expect(href).toContain('threshold=0.79');
    expect(href).toContain('search=semantic');
    const again = await c.get(href);
    expect(again.statusCode).toBe(200);
    expect(text(again.body, 'search-rule')).toContain('threshold 0.79');
  });

  it('refuses a threshold outside 0..1 with the reason', async () => {
    const res = await c.get('/dashboard/memories?q=x&threshold=2');
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('threshold must be a number from 0 to 1');
  });
});

describe('analytics a person reads', () => {
  it('shows top and zero-result queries, latency percentiles, errors by route and the cost with a note on example prices', async () => {
    const key = await t.freshTenant();
    expect((await g1(t.app, key).create({ title: 'Deploy', content: 'Deploy on Fridays with blue/green.' })).statusCode).toBe(201);
    for (const [query, threshold] of [['deploy', 0.2], ['deploy', 0.2], ['zzzqqq nothing', 0.99]] as const) await g1(t.app, key).search({ query, threshold });
    for (let i = 0; i < 2; i++) expect((await g1(t.app, key).get('mem_missing')).statusCode).toBe(404);
    await t.container.requestMetrics.flush();
    const res = await (await signIn(t.app, key)).get('/dashboard/analytics?timeframe=1h');
    expect(res.statusCode).toBe(200);
    const top = text(res.body, 'top-queries');
    expect(top).toMatch(/deploy 2/);
    expect(top).toMatch(/zzzqqq nothing 1 no results/);
    expect(text(res.body, 'zero-results')).toBe('1');
    expect(text(res.body, 'latency')).toMatch(/p95 [\d.]+ ms/);
    expect(text(res.body, 'errors-by-route')).toMatch(/GET \/api\/v1\/memories\/:id g1 2 2 0/);
    expect(text(res.body, 'cost')).toContain('Total');
    expect(res.body).toContain('id="example-prices"');
    expect(res.body).toMatch(/<option value="7d">Last 7 days<\/option>/);
  });

  it("lists the workspace's queries that found nothing, most frequent first with when last seen, and no other tenant's", async () => {
    const key = await t.freshTenant();
    const other = await t.freshTenant();
    expect((await g1(t.app, key).create({ title: 'Deploy', content: 'Deploy on Fridays with blue/green.' })).statusCode).toBe(201);
    for (const query of ['deploy', 'Purple  Elephant', 'purple elephant', 'zzzqqq nothing']) await g1(t.app, key).search({ query, threshold: 0.99 });
    await g1(t.app, key).search({ query: 'deploy', threshold: 0.1 }); // found something: not listed
    await g1(t.app, other).search({ query: 'other tenant only' }); // an empty store finds nothing
    const page = async (k: string) => (await (await signIn(t.app, k)).get('/dashboard/analytics?timeframe=1h')).body;

    const body = await page(key);
    const rows = [...body.slice(body.indexOf('id="zero-result-queries"')).matchAll(/<tr><td>([^<]*)<\/td><td class="num">(\d+)<\/td><td><time datetime="([^"]+)"/g)]
      .map((m) => [m[1], Number(m[2])]);
    expect(rows[0]).toEqual(['purple elephant', 2]);
    // The two ties come latest first, which two searches in one millisecond could swap.
    expect(rows.slice(1).sort()).toEqual([['deploy', 1], ['zzzqqq nothing', 1]]);
    expect(body).toMatch(/<table aria-labelledby="zero-result-queries-title">\s*<thead><tr><th scope="col">Query<\/th>/);
    expect(text(body, 'zero-result-queries')).not.toContain('other tenant only');
    expect(text(await page(other), 'zero-result-queries')).toMatch(/other tenant only 1 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  });
});

describe('webhooks through the dashboard, checked through the API', () => {
  it('creates a G9 webhook (secret shown once), pauses and resumes it; a refused one shows the API\'s message', async () => {
    const key = await t.freshTenant();
    const c = await signIn(t.app, key);
    const created = await c.post('/dashboard/webhooks', { kind: 'g9', url: 'https://hooks.example.com/in', events: 'memory.created, memory.deleted', max_attempts: '2' });
    expect(created.statusCode, created.body).toBe(200);
    expect(text(created.body, 'webhook-secret')).toMatch(/^whsec_/);
    const id = /href="\/dashboard\/webhooks\/g9\/([^"]+)" id="created-link"/.exec(created.body)![1]!;
    const viaApi = async (): Promise<Json> => { const b = json(await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${id}`, headers: bearer(key) })); return b.data ?? b; };
    expect(await viaApi()).toMatchObject({ url: 'https://hooks.example.com/in', events: ['memory.created', 'memory.deleted'], active: true, retry_policy: { max_attempts: 2 } });

    const paused = await c.post(`/dashboard/webhooks/g9/${id}/status`, { status: 'disabled' });
    expect(paused.headers.location).toBe(`/dashboard/webhooks/g9/${id}?changed=paused`);
    expect((await viaApi()).active).toBe(false);
    expect(text((await c.get(paused.headers.location!)).body, 'webhook-status')).toContain('disabled');
    await c.post(`/dashboard/webhooks/g9/${id}/status`, { status: 'active', back: 'list' });
    expect((await viaApi()).active).toBe(true);

    const refused = await c.post('/dashboard/webhooks', { kind: 'g9', url: 'http://127.0.0.1:9/x', events: 'memory.created' });
    expect(refused.statusCode).toBe(400);
    expect(text(refused.body, 'refused')).toMatch(/url .*(private|not allowed|public)/i);
    expect(refused.body).toContain('value="http://127.0.0.1:9/x"');
    const unknownEvent = await c.post('/dashboard/webhooks', { kind: 'g10', url: 'https://hooks.example.com/g10', events: 'memory.created' });
    expect(text(unknownEvent.body, 'refused')).toContain('unknown event type "memory.created"');
    expect((await c.post('/dashboard/webhooks', { kind: 'g9', url: 'https://hooks.example.com/x', events: 'memory.created' }, false)).statusCode).toBe(403);
  });

  it('creates a G11 webhook through its audited operation, and refuses a key without the scope', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const created = await c.post('/dashboard/webhooks', { kind: 'g11', url: 'https://hooks.example.com/sec', events: 'secret.created' });
    expect(created.statusCode, created.body).toBe(200);
    const id = /href="\/dashboard\/webhooks\/g11\/([^"]+)" id="created-link"/.exec(created.body)![1]!;
    const audit = json(await t.app.inject({ method: 'GET', url: '/v1/security/audit-logs?action=webhook.create', headers: bearer(key) }));
    const rows = (audit.data ?? audit.logs ?? audit.items) as Json[];
    expect(rows.some((r) => JSON.stringify(r).includes(id) && JSON.stringify(r).includes('dashboard'))).toBe(true);

    const reader = await signIn(t.app, await t.key({ user: 'reader', scopes: ['memories:read', 'secrets:read'] }));
    expect((await reader.get('/dashboard/webhooks')).body).not.toContain('id="create-webhook"');
    const denied = await reader.post('/dashboard/webhooks', { kind: 'g11', url: 'https://hooks.example.com/sec2', events: 'secret.created' });
    expect(denied.statusCode).toBe(403);
    expect(text(denied.body, 'refused')).toContain('lacks the secrets:write scope');
    expect((await reader.post(`/dashboard/webhooks/g11/${id}/status`, { status: 'disabled' })).statusCode).toBe(403);
  });
});

describe('the shell', () => {
  it('serves a favicon, a CSP without unsafe-inline for scripts, and pages without inline scripts or handlers', async () => {
    const icon = await t.app.inject({ method: 'GET', url: '/dashboard/assets/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    const c = await signIn(t.app, await t.freshTenant());
    for (const url of ['/dashboard', '/dashboard/memories?q=x', '/dashboard/analytics', '/dashboard/webhooks', '/dashboard/sign-in', '/dashboard/nowhere']) {
      const res = url.endsWith('sign-in') ? await t.app.inject({ method: 'GET', url }) : await c.get(url);
      const scriptSrc = /script-src ([^;]*)/.exec(res.headers['content-security-policy'] as string)![1]!;
      expect(scriptSrc, url).toBe("'self'");
      expect(res.body, url).toContain('<link rel="icon" href="/dashboard/assets/favicon.svg"');
      // Scripts only from files (a JSON island is data, never run); no on…= handler attributes.
      expect(res.body.match(/<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/g), url).toBeNull();
      expect(res.body.match(/<[^>]+\son[a-z]+=/gi), url).toBeNull();
    }
    const signInPage = await t.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
    expect(text(signInPage.body, 'get-a-key')).toContain('npx mnemo keys create');
  });
});
