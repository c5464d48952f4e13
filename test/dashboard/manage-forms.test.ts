import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHeader, parseRecord } from '../../src/core/memories/memory-export.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { signIn } from './session.ts';

/**
 * The managing forms (docs/dashboard.md, "Managing") posted through app.inject, on both stores (the `postgres` project
 * runs this file too), each result read back through the REST API; manage-browser.test.ts drives the same forms in
 * Chromium on SQLite.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const memoryOf = async (key: string, id: string): Promise<{ status: number; data: Json }> => {
  const res = await g1(t.app, key).get(id);
  return { status: res.statusCode, data: res.statusCode === 200 ? json(res).data as Json : {} };
};
const idIn = (location: string | undefined): string => /\/dashboard\/memories\/([0-9a-f-]{36})$/.exec(location ?? '')![1]!;

describe('managing memories', () => {
  it('creates with metadata, refuses bad JSON with the parser\'s words, edits, and writes the memory that supersedes another', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const made = await c.post('/dashboard/memories/new', { title: 'Office', content: 'The office is in Leeds.', tags: 'place, hq', metadata: '{"floor": 3}' });
    expect(made.statusCode).toBe(303);
    const id = idIn(made.headers.location);
    expect((await memoryOf(key, id)).data).toMatchObject({ title: 'Office', tags: ['place', 'hq'], metadata: { floor: 3 } });

    const bad = await c.post(`/dashboard/memories/${id}`, { title: 'Office', content: 'The office is in Leeds.', metadata: '{"floor": 3,}' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/id="refused"[^>]*>metadata must be a JSON object: metadata is not valid JSON/);
    expect(bad.body).toContain('{&quot;floor&quot;: 3,}');
    const array = await c.post('/dashboard/memories/new', { title: 'x', content: 'y', metadata: '[1]' });
    expect(array.statusCode).toBe(400);
    expect(array.body).toContain('must be a JSON object such as');

    expect((await c.post(`/dashboard/memories/${id}`, { title: 'Office', content: 'The office is in Leeds, 3rd floor.', tags: 'place', metadata: '{"floor": 4}' })).statusCode).toBe(303);
    const edited = await memoryOf(key, id);
    expect(edited.data).toMatchObject({ content: 'The office is in Leeds, 3rd floor.', tags: ['place'], metadata: { floor: 4 }, version: 2 });
    expect((await c.get(`/dashboard/memories/${id}/edit`)).body).toContain(`href="/dashboard/memories/${id}/history"`);

    const form = await c.get(`/dashboard/memories/new?supersedes=${id}`);
    expect(form.body).toContain(`name="supersedes" value="${id}"`);
    const replacing = await c.post('/dashboard/memories/new', { supersedes: id, title: 'Office', content: 'The office moved to York.', metadata: '{}' });
    const successor = idIn(replacing.headers.location);
    expect((await memoryOf(key, id)).data.superseded_by).toBe(successor);
  });

  it('forgets one memory after a preview of its versions, and a selection after its preview; exports a selection', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push(json(await g1(t.app, key).create({ title: `Note ${n}`, content: `Note number ${n}.`, metadata: { n } })).data.id as string);
    await g1(t.app, key).update(ids[0]!, { content: 'Note number one.' });

    const preview = await c.get(`/dashboard/memories/${ids[0]}/forget`);
    expect(preview.body).toMatch(/class="versions">1 earlier version</);
    expect((await c.post(`/dashboard/memories/${ids[0]}/delete`)).statusCode).toBe(303);
    expect((await memoryOf(key, ids[0]!)).status).toBe(404);

    const exported = await t.app.inject({
      method: 'POST', url: '/dashboard/memories/selection', headers: { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${c.csrf}&action=export&id=${ids[1]}&id=${ids[2]}`,
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-disposition']).toMatch(/^attachment; filename="mnemo-export-.*\.jsonl"$/);
    const lines = exported.body.trim().split('\n');
    expect(parseHeader(lines[0]!).mnemo_export).toBe(1);
    const records = lines.slice(1).map(parseRecord);
    expect(records.map((r) => (r.kind === 'memory' ? r.memory.id : null)).sort()).toEqual([ids[1], ids[2]].sort());
    expect(records.every((r) => r.kind === 'memory' && r.vectors.length === 1)).toBe(true);

    const selected = { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' };
    const asked = await t.app.inject({ method: 'POST', url: '/dashboard/memories/selection', headers: selected, payload: `_csrf=${c.csrf}&action=forget&id=${ids[1]}&id=${ids[2]}` });
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('Forget 2 memories?');
    expect((await memoryOf(key, ids[1]!)).status).toBe(200);
    const done = await t.app.inject({ method: 'POST', url: '/dashboard/memories/selection/forget', headers: selected, payload: `_csrf=${c.csrf}&id=${ids[1]}&id=${ids[2]}` });
    expect(done.headers.location).toBe('/dashboard/memories?forgotten=2');
    expect((await memoryOf(key, ids[1]!)).status).toBe(404);
    expect((await memoryOf(key, ids[2]!)).status).toBe(404);
  });

  it('refuses a form without the CSRF token, and a key without memories:write sees the scope it lacks', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const noToken = await c.post('/dashboard/memories/new', { title: 'x', content: 'forged' }, false);
    expect(noToken.statusCode).toBe(403);
    expect(json(await g1(t.app, key).list()).data).toHaveLength(0);
    const reader = await signIn(t.app, await t.key({ user: 'reader', scopes: ['memories:read'] }));
    const refused = await reader.post('/dashboard/memories/new', { title: 'x', content: 'y' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('memories:write');
  });
});

describe('managing API keys', () => {
  it('creates a key within the signed-in key\'s grant (shown once), refuses more, rotates with a grace period and revokes', async () => {
    const admin = await t.freshTenant({ user: 'admin', tier: 'pro', scopes: ['apikeys:manage', 'memories:read', 'memories:write'] });
    const c = await signIn(t.app, admin);
    const made = await t.app.inject({
      method: 'POST', url: '/dashboard/api-keys', headers: { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${c.csrf}&name=ci&tier=free&scopes=memories:read`,
    });
    expect(made.statusCode).toBe(200);
    const key = /id="new-key">([^<]+)</.exec(made.body)![1]!;
    expect((await g1(t.app, key).list()).statusCode).toBe(200);
    expect((await g1(t.app, key).create({ title: 'x', content: 'y' })).statusCode).toBe(403);

    const more = await c.post('/dashboard/api-keys', { name: 'too much', tier: 'free', scopes: 'secrets:read' });
    expect(more.statusCode).toBe(403);
    expect(more.body).toContain('This API key cannot grant scopes it does not hold: secrets:read');
    const higher = await c.post('/dashboard/api-keys', { name: 'higher', tier: 'enterprise', scopes: 'memories:read' });
    expect(higher.statusCode).toBe(403);
    expect(higher.body).toContain('cannot grant the higher tier enterprise');

    const listed = json(await t.app.inject({ method: 'GET', url: '/v1/security/api-keys', headers: bearer(admin) }));
    const ci = (listed.data as Json[]).find((k) => k.name === 'ci')!;
    const rotated = await c.post(`/dashboard/api-keys/${ci.id as string}/rotate`, { grace_seconds: '0' });
    const next = /id="new-key">([^<]+)</.exec(rotated.body)![1]!;
    expect((await g1(t.app, key).list()).statusCode).toBe(401);
    expect((await g1(t.app, next).list()).statusCode).toBe(200);

    const nextId = /<dt>Id<\/dt><dd><code>([^<]+)</.exec(rotated.body)![1]!;
    expect((await c.post(`/dashboard/api-keys/${nextId}/revoke`)).headers.location).toBe(`/dashboard/api-keys?revoked=${nextId}`);
    expect((await g1(t.app, next).list()).statusCode).toBe(401);
    const audit = json(await t.app.inject({ method: 'GET', url: '/v1/security/audit-logs?limit=50', headers: bearer(await t.key({ user: 'auditor', scopes: ['audit:read'] })) }));
    expect((audit.data as Json[]).map((e) => e.action)).toEqual(expect.arrayContaining(['apikey.create', 'apikey.rotate', 'apikey.revoke']));
  });

  it('refuses the page to a key without apikeys:manage, naming the scope', async () => {
    const c = await signIn(t.app, await t.freshTenant({ user: 'bob', scopes: ['memories:read'] }));
    const res = await c.get('/dashboard/api-keys');
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('apikeys:manage');
  });
});

describe('managing secrets', () => {
  it('creates a secret with tags and an expiry, writes a new version, refuses a bad expiry with its rule, and deletes it', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const secret = (name: string) => t.app.inject({ method: 'GET', url: `/v1/security/secrets/${name}`, headers: bearer(key) });
    const made = await c.post('/dashboard/secrets/new', { name: 'ci.token', value: 'tok-1', tags: 'ci, deploy', expires_in: '30d' });
    expect(made.headers.location).toBe('/dashboard/secrets/ci.token/edit?done=created&version=1');
    const first = json(await secret('ci.token'));
    expect(first).toMatchObject({ value: 'tok-1', version: 1, tags: ['ci', 'deploy'] });
    expect(Date.parse(first.expiresAt as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    // The edit page shows the current tags and expiry, read without the value: a `secret.list` audit row as G11's
    // metadata read, no `secret.read` and no `secret.accessed` event.
    const audit = async (action: string) => (json(await t.app.inject({ method: 'GET', url: `/v1/security/audit-logs?action=${action}`, headers: bearer(key) })).data as Json[])
      .map((r) => `${r.resource} ${r.outcome}`);
    const eventsBefore = await t.container.storage.events.latestSeq();
    const edit = await c.get('/dashboard/secrets/ci.token/edit');
    expect(edit.statusCode).toBe(200);
    expect(edit.body).toMatch(/<dd id="current-tags">ci, deploy<\/dd>/);
    expect(edit.body).toContain(`<time datetime="${first.expiresAt as string}">`);
    expect(edit.body).toContain('name="tags" value="ci, deploy"');
    expect(edit.body).not.toContain('tok-1');
    expect(await audit('secret.list')).toContain('secret:ci.token success');
    expect(await audit('secret.read')).toEqual(['secret:ci.token success']);
    expect(await t.container.storage.events.latestSeq()).toBe(eventsBefore);
    expect((await c.get('/dashboard/secrets/no.such/edit')).statusCode).toBe(404);

    const bad = await c.post('/dashboard/secrets/ci.token/version', { value: 'tok-2', expires_in: 'soon' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('expires_in must be a whole number followed by s, m, h, d or w');
    expect((await c.post('/dashboard/secrets/ci.token/version', { value: 'tok-2', tags: 'ci', expires_in: 'never' })).statusCode).toBe(303);
    expect(json(await secret('ci.token'))).toMatchObject({ value: 'tok-2', version: 2, tags: ['ci'], expiresAt: null });
    const taken = await c.post('/dashboard/secrets/new', { name: 'ci.token', value: 'x' });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('already exists');

    const reader = await signIn(t.app, await t.key({ user: 'bob', scopes: ['secrets:read', 'secrets:write'] }));
    const refused = await reader.post('/dashboard/secrets/ci.token/delete');
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('secrets:delete');
    expect((await c.post('/dashboard/secrets/ci.token/delete')).headers.location).toBe('/dashboard/secrets');
    expect((await secret('ci.token')).statusCode).toBe(404);
  });
});

describe('managing MCP resources', () => {
  it('registers a resource with approvers and auto-approve conditions, and shows the service\'s refusal', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const bare = await c.post('/dashboard/mcp-resources', { uri: 'svc://secrets/ci/*', name: 'CI secrets', permissions: 'read', requires_approval: '1', approvers: '' });
    expect(bare.statusCode).toBe(400);
    expect(bare.body).toContain('approvers must name at least one user id');
    const made = await t.app.inject({
      method: 'POST', url: '/dashboard/mcp-resources', headers: { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([['_csrf', c.csrf], ['uri', 'svc://secrets/ci/*'], ['name', 'CI secrets'], ['permissions', 'read'],
        ['requires_approval', '1'], ['approvers', 'alice, carol'], ['auto_approve', '1'], ['time_window', '09:00-17:00 Europe/London'], ['requesters', 'ci-bot']]).toString(),
    });
    expect(made.statusCode, /id="refused"[^<]*/.exec(made.body)?.[0]).toBe(303);
    expect(made.headers.location).toBe(`/dashboard/mcp-resources?registered=${encodeURIComponent('svc://secrets/ci/*')}`);
    const listed = json(await t.app.inject({ method: 'GET', url: '/v1/security/mcp/resources', headers: bearer(key) }));
    expect(listed.resources).toEqual([expect.objectContaining({
      uri: 'svc://secrets/ci/*', approvers: ['alice', 'carol'], autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London', requester: ['ci-bot'] } },
    })]);
    const reader = await signIn(t.app, await t.key({ user: 'bob', scopes: ['mcp:access'] }));
    const refused = await reader.post('/dashboard/mcp-resources', { uri: 'svc://secrets/x', name: 'x', approvers: 'bob' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('secrets:write');
  });

  it('edits approvers and auto-approve, shows the service\'s refusal, and deletes after confirming', async () => {
    const key = await t.freshTenant({ user: 'alice' });
    const c = await signIn(t.app, key);
    const uri = 'svc://secrets/ops/*';
    const listed = async () => json(await t.app.inject({ method: 'GET', url: '/v1/security/mcp/resources', headers: bearer(key) })).resources;
    expect((await t.app.inject({ method: 'POST', url: '/v1/security/mcp/resources', headers: bearer(key), payload: { uri, name: 'Ops', approvers: ['alice'] } })).statusCode).toBe(201);
    const list = await c.get('/dashboard/mcp-resources');
    const editUrl = `/dashboard/mcp-resources/edit?uri=${encodeURIComponent(uri)}`;
    expect(list.body).toContain(`href="${editUrl.replaceAll('&', '&amp;')}"`);
    const form = await c.get(editUrl);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="approvers" value="alice"');

    const refused = await c.post('/dashboard/mcp-resources/edit', { uri, name: 'Ops', permissions: 'read', requires_approval: '1', approvers: '' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/id="refused"[^>]*>[^<]*approvers must name at least one user id/);
    const saved = await t.app.inject({
      method: 'POST', url: '/dashboard/mcp-resources/edit', headers: { cookie: c.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams([['_csrf', c.csrf], ['uri', uri], ['name', 'Ops'], ['permissions', 'read'], ['requires_approval', '1'],
        ['approvers', 'bob, carol'], ['auto_approve', '1'], ['time_window', '22:00-06:00 Asia/Tokyo'], ['requesters', 'ci-bot']]).toString(),
    });
    expect(saved.statusCode, /id="refused"[^<]*/.exec(saved.body)?.[0]).toBe(303);
    expect((await c.get(saved.headers.location as string)).body).toContain('id="saved"');
    expect((await listed())).toEqual([expect.objectContaining({
      uri, approvers: ['bob', 'carol'], autoApprove: { enabled: true, conditions: { timeWindow: '22:00-06:00 Asia/Tokyo', requester: ['ci-bot'] } },
    })]);

    expect((await c.post('/dashboard/mcp-resources/delete', { uri })).statusCode).toBe(400);
    const reader = await signIn(t.app, await t.key({ user: 'bob', scopes: ['mcp:access'] }));
    const noScope = await reader.post('/dashboard/mcp-resources/delete', { uri, confirm: '1' });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.body).toContain('secrets:write');
    const gone = await c.post('/dashboard/mcp-resources/delete', { uri, confirm: '1' });
    expect(gone.headers.location).toBe(`/dashboard/mcp-resources?deleted=${encodeURIComponent(uri)}`);
    expect((await listed())).toEqual([]);
    expect((await c.post('/dashboard/mcp-resources/delete', { uri, confirm: '1' })).body).toContain(`No MCP resource is registered at ${uri}`);
  });
});
