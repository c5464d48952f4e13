import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { captureLogs, describeLogLines, WARN_LEVEL } from '../support/log-capture.ts';
import { createTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { call, callError, gatedSecret, httpClient, readResource, respond, rest, type Json } from './mcp-support.ts';

/**
 * The MCP server over Streamable HTTP at /mcp, driven by the SDK's own client against the real server on loopback
 * (SQLite, and PGlite in the `postgres` project). One app for the file on a manual clock (approvals expire by it);
 * each test works in a tenant of its own. Users: alice approves, bot is the AI tool.
 */
let t: TestApp;
let base: string;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
const DASHBOARD = 'https://mnemo.example.com/dashboard';
const open: Client[] = [];
const logs = captureLogs();

beforeAll(async () => {
  t = await createTestApp({ env: { MNEMO_DASHBOARD_URL: DASHBOARD }, overrides: { clock }, server: logs.server });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address() as { port: number };
  base = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await t.close();
});

async function world(options: { botScopes?: Permission[] } = {}) {
  const tenant = uniqueTenant('mcp');
  const key = (user: string, scopes?: Permission[], tier: 'free' | 'enterprise' = 'enterprise') => t.key({ tenant, user, tier, ...(scopes ? { scopes } : {}) });
  const aliceKey = await key('alice');
  const botKey = await key('bot', options.botScopes ?? ['memories:read', 'memories:write', 'mcp:access']);
  const bot = await httpClient(base, botKey);
  open.push(bot);
  return { tenant, key, aliceKey, botKey, bot };
}

describe('MCP over Streamable HTTP: tools', () => {
  it('lists the tools, each with a description and a JSON schema of its arguments', async () => {
    const { bot } = await world();
    const { tools } = await bot.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(
      ['memory_create', 'memory_delete', 'memory_forget', 'memory_get', 'memory_history', 'memory_ingest', 'memory_ingest_status', 'memory_list', 'memory_search', 'memory_supersede', 'memory_update', 'topic_list']);
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
    }
    const create = tools.find((x) => x.name === 'memory_create')!;
    expect(create.inputSchema.required).toEqual(['content']);
    expect(Object.keys(create.inputSchema.properties!)).toEqual(expect.arrayContaining(['content', 'title', 'tags', 'metadata', 'workspace']));
    const search = tools.find((x) => x.name === 'memory_search')!;
    expect((search.inputSchema.properties!.mode as Json).enum).toEqual(['hybrid', 'semantic', 'keyword']);
  });

  it('creates, gets, updates, lists, searches and deletes a memory, and lists topics, as G1 sees them', async () => {
    const { bot, botKey } = await world();
    const created = (await call(bot, 'memory_create', {
      title: 'Deploy runbook', content: 'Deploys run from the ops/runbook.md checklist every Tuesday', tags: ['ops', 'deploy'],
      metadata: { team: 'platform' }, memory_type: 'workflow',
    })).memory;
    expect(created).toMatchObject({ title: 'Deploy runbook', memory_type: 'workflow', tags: ['ops', 'deploy'], metadata: { team: 'platform' } });
    // The same memory through G1 on the same server.
    const viaG1 = await rest(base, botKey, 'GET', `/api/v1/memories/${created.id}`);
    expect(viaG1.body.data).toMatchObject({ id: created.id, title: 'Deploy runbook', content: created.content });
    await call(bot, 'memory_create', { content: 'Lunch is at noon on Fridays', tags: ['social'] });

    const got = (await call(bot, 'memory_get', { id: created.id.slice(0, 8) })).memory;
    expect(got).toMatchObject({ id: created.id, access_count: 2 });

    const updated = (await call(bot, 'memory_update', { id: created.id, tags: ['ops'], content: 'Deploys follow ops/runbook.md' })).memory;
    expect(updated).toMatchObject({ id: created.id, tags: ['ops'], content: 'Deploys follow ops/runbook.md', title: 'Deploy runbook' });

    const listed = await call(bot, 'memory_list', { limit: 1 });
    expect(listed).toMatchObject({ total: 2, limit: 1, offset: 0, has_more: true });
    expect(listed.memories).toHaveLength(1);
    expect((await call(bot, 'memory_list', { tags: ['social'] })).memories.map((m: Json) => m.content)).toEqual(['Lunch is at noon on Fridays']);

    const hybrid = await call(bot, 'memory_search', { query: 'runbook deploys' });
    expect(hybrid).toMatchObject({ mode: 'hybrid', method: 'weighted_sum(calibrated_similarity, keyword_coverage)' });
    expect(hybrid.results[0]).toMatchObject({ id: created.id });
    expect(hybrid.results[0].keyword_score).toBeGreaterThan(0);
    // Filters apply: the memory's tag and metadata select it, others exclude it.
    const filtered = await call(bot, 'memory_search', { query: 'runbook deploys', filters: { tags_any: ['social'] } });
    expect(filtered.results.map((r: Json) => r.id)).not.toContain(created.id);
    const byMeta = await call(bot, 'memory_search', { query: 'deploys', mode: 'keyword', filters: { metadata: { team: 'platform' } } });
    expect(byMeta.results.map((r: Json) => r.id)).toEqual([created.id]);
    const semantic = await call(bot, 'memory_search', { query: 'Deploys follow ops/runbook.md', mode: 'semantic', threshold: 0.5 });
    expect(semantic.results[0]).toMatchObject({ id: created.id });

    const topic = await rest(base, botKey, 'POST', '/api/v1/topics', { name: 'Operations' });
    expect(topic.status).toBe(201);
    const topics = await call(bot, 'topic_list');
    expect(topics).toMatchObject({ total: 1, topics: [{ id: topic.body.data.id, name: 'Operations', memory_count: 0 }] });
    expect((await call(bot, 'topic_list', { hierarchy: true })).topics).toEqual([expect.objectContaining({ name: 'Operations', children: [] })]);

    expect(await call(bot, 'memory_delete', { id: created.id })).toMatchObject({ deleted: true, id: created.id });
    expect(await callError(bot, 'memory_get', { id: created.id })).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('acts in the workspace of X-Workspace-ID, or of the workspace argument', async () => {
    const { botKey, bot } = await world();
    const inHeader = await httpClient(base, botKey, { 'x-workspace-id': 'notes' });
    open.push(inHeader);
    const m = (await call(inHeader, 'memory_create', { content: 'Only in notes' })).memory;
    expect((await call(bot, 'memory_list')).total).toBe(0);
    expect((await call(bot, 'memory_list', { workspace: 'notes' })).memories.map((x: Json) => x.id)).toEqual([m.id]);
    expect(await callError(bot, 'memory_get', { id: m.id })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await callError(bot, 'memory_list', { workspace: 'bad/name' })).toMatchObject({
      code: 'VALIDATION_ERROR', details: { fields: [{ field: 'workspace', reason: 'invalid_format' }] },
    });
  });
});

describe('MCP over Streamable HTTP: errors come back as tool errors', () => {
  it('refuses bad arguments, with the reason, and the session goes on', async () => {
    const { bot } = await world();
    expect((await callError(bot, 'memory_create', {})).text).toMatch(/content/);
    expect((await callError(bot, 'memory_search', { query: 'x', limit: 0 })).text).toMatch(/limit/);
    // The core's rules: a title over 255 characters, an unknown topic, an empty update.
    expect(await callError(bot, 'memory_create', { content: 'x', title: 'T'.repeat(256) })).toMatchObject({
      code: 'VALIDATION_ERROR', details: { fields: [expect.objectContaining({ field: 'title' })] },
    });
    expect(await callError(bot, 'memory_create', { content: 'x', topic_id: '00000000-0000-4000-8000-000000000000' })).toMatchObject({
      code: 'VALIDATION_ERROR', details: { fields: [expect.objectContaining({ field: 'topic_id', reason: 'not_found' })] },
    });
    const m = (await call(bot, 'memory_create', { content: 'still here' })).memory;
    expect(await callError(bot, 'memory_update', { id: m.id })).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await callError(bot, 'memory_search', { query: 'x', filters: { created_from: 'yesterday' } })).toMatchObject({
      code: 'VALIDATION_ERROR', details: { fields: [expect.objectContaining({ field: 'filters.created_from' })] },
    });
    expect(await callError(bot, 'memory_get', { id: 'abc' })).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await call(bot, 'memory_get', { id: m.id })).memory.content).toBe('still here');
  });

  it('answers a missing memory as not found, and another tenant\'s memory exactly the same', async () => {
    const { bot } = await world();
    const other = await world();
    const theirs = (await call(other.bot, 'memory_create', { content: 'Private to the other tenant: launch codes' })).memory;
    const missing = await callError(bot, 'memory_get', { id: '00000000-0000-4000-8000-000000000000' });
    expect(missing).toEqual({ code: 'NOT_FOUND', message: 'Memory not found', details: { resource: 'memory' } });
    expect(await callError(bot, 'memory_get', { id: theirs.id })).toEqual(missing);
    expect(await callError(bot, 'memory_update', { id: theirs.id, title: 'mine now' })).toEqual(missing);
    expect(await callError(bot, 'memory_delete', { id: theirs.id })).toEqual(missing);
    expect((await call(bot, 'memory_search', { query: 'launch codes' })).results).toEqual([]);
    expect((await call(bot, 'memory_list')).total).toBe(0);
    expect((await call(other.bot, 'memory_get', { id: theirs.id })).memory.content).toMatch(/launch codes/);
  });

  it('enforces the key\'s scopes as the REST surfaces do', async () => {
    const { key } = await world();
    const reader = await httpClient(base, await key('reader', ['memories:read']));
    const writer = await httpClient(base, await key('writer', ['memories:write']));
    open.push(reader, writer);
    expect(await callError(reader, 'memory_create', { content: 'x' })).toMatchObject({
      code: 'PERMISSION_DENIED', details: { requiredScope: 'memories:write' },
    });
    expect(await callError(writer, 'memory_list')).toMatchObject({ code: 'PERMISSION_DENIED', details: { requiredScope: 'memories:read' } });
    expect(await callError(writer, 'topic_list')).toMatchObject({ code: 'PERMISSION_DENIED' });
    await call(writer, 'memory_create', { content: 'writers write' });
    expect((await call(reader, 'memory_list')).total).toBe(1);
    await expect(reader.readResource({ uri: 'svc://custom/config/flags' })).rejects.toThrow(/PERMISSION_DENIED/);
  });

  it('refuses a missing or invalid key with 401 before any MCP processing', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer mnemo_live_notakey' }, { authorization: 'Basic abc' }];
    for (const headers of attempts) {
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(init) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'UNAUTHORIZED' } } });
    }
    await expect(httpClient(base, 'mnemo_live_notakey')).rejects.toThrow();
  });

  it('answers a method /mcp does not serve with 405, Allow and a JSON-RPC error', async () => {
    const res = await fetch(`${base}/mcp`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST, DELETE');
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'METHOD_NOT_ALLOWED' } } });
  });

  it('refuses a browser Origin other than loopback or the dashboard\'s host with 403 before the key, and lets requests without Origin through', async () => {
    const { botKey } = await world();
    const list = (origin?: string) => fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${botKey}`,
        ...(origin === undefined ? {} : { origin }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    for (const origin of ['https://evil.example.net', 'http://mnemo.example.com.evil.net', 'null']) {
      const res = await list(origin);
      expect(res.status, origin).toBe(403);
      expect(await res.json(), origin).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'PERMISSION_DENIED', details: { reason: 'origin_not_allowed' } } } });
    }
    // Before the key: a bad key from a foreign page is refused for its origin, not probed.
    const probe = await fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example.net', authorization: 'Bearer mnemo_live_notakey' }, body: '{}' });
    expect(probe.status).toBe(403);
    for (const origin of [undefined, base, 'http://localhost:5173', 'https://mnemo.example.com']) {
      expect((await list(origin)).status, origin ?? 'no Origin').toBe(200);
    }
  });

  it('counts every MCP request against the key\'s gateway limit, and answers 429 with Retry-After when it is spent', async () => {
    const { key } = await world();
    const freeKey = await key('free-bot', ['memories:read'], 'free');
    const client = await httpClient(base, freeKey);
    open.push(client);
    // Spend the free tier's 60 a minute down to the last few requests (directly: cheap on every store); a call or two
    // (the client may list the tools before its first call) takes them.
    const principal = await t.container.apiKeys.authenticate(freeKey);
    for (let d = await t.container.limits.gateway(principal); d!.remaining > 3;) d = await t.container.limits.gateway(principal);
    let refused: unknown;
    let calls = 0;
    while (refused === undefined && calls < 5) {
      calls += 1;
      await client.callTool({ name: 'memory_list', arguments: {} }).catch((err: unknown) => { refused = err; });
    }
    expect(calls).toBeGreaterThan(1);
    expect(String(refused)).toMatch(/RATE_LIMITED/);
    const res = await fetch(`${base}/mcp`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${freeKey}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ error: { data: { code: 'RATE_LIMITED' } } });
  });
});

describe('MCP over Streamable HTTP: bodies it cannot serve', () => {
  const post = (key: string, body: string, contentType = 'application/json') => fetch(`${base}/mcp`, {
    method: 'POST', body,
    headers: { 'content-type': contentType, accept: 'application/json, text/event-stream', authorization: `Bearer ${key}` },
  });

  it('answers a body nested 8,000 deep with 400 and a JSON-RPC invalid request (not a 500), bad JSON with a parse error, other bad bodies 4xx, and logs nothing above info', async () => {
    const { botKey } = await world();
    const from = logs.lines.length;
    const deepMetadata = `${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}`;
    for (const body of [`${'['.repeat(8000)}${']'.repeat(8000)}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_create","arguments":{"content":"x","metadata":${deepMetadata}}}}`]) {
      const res = await post(botKey, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/nests deeper than/), data: { code: 'VALIDATION_ERROR', details: { reason: 'too_deep' } } },
      });
    }
    const malformed = await post(botKey, '{"jsonrpc":"2.0",');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, data: { code: 'MALFORMED_JSON' } } });
    expect((await post(botKey, '{}', 'text/plain')).status).toBe(415);
    expect((await post(botKey, 'a=1', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect((await post(botKey, JSON.stringify({ a: 'x'.repeat(t.container.config.bodyLimitBytes) }))).status).toBe(413);
    // Valid JSON that is no JSON-RPC message: the SDK refuses it, and says so at info (it logged a warning with a stack).
    expect((await post(botKey, '{"a":1}')).status).toBe(400);
    expect((await post(botKey, '[]')).status).toBe(400);
    expect(describeLogLines(logs.atLeast(WARN_LEVEL, from))).toBe('');
  });

  it('serves the deepest legitimate body: a batch of tools/call whose metadata nests the 16 levels stored metadata may', async () => {
    const { botKey } = await world();
    let metadata: Json = { leaf: true };
    for (let level = 1; level < 16; level++) metadata = { n: metadata };
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'memory_create', arguments: { content: `deep ${id}`, metadata } } });
    const res = await post(botKey, JSON.stringify([call(1), call(2)]));
    expect(res.status).toBe(200);
    const messages = (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Json);
    expect(messages.map((m) => m.id).sort()).toEqual([1, 2]);
    for (const m of messages) expect(m.result.structuredContent.memory.metadata).toEqual(metadata);
  });
});

describe('MCP over Streamable HTTP: approval-gated resources', () => {
  it('asks on the first read, reuses the pending request, and reads the value once a person approves, until expiresAt', async () => {
    const { aliceKey, bot, key } = await world();
    await gatedSecret(base, aliceKey, { name: 'prod.db', value: 'postgres://s3cret', uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const templates = (await bot.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate);
    expect(templates).toEqual(['svc://secrets/{environment}/{name}', 'svc://api-keys/{id}', 'svc://custom/{type}/{id}']);

    const expiresAt = new Date(clock.now().getTime() + 3600_000).toISOString();
    const first = await readResource(bot, 'svc://secrets/prod/db', 'rotating the pool');
    expect(first.text).not.toContain('s3cret');
    expect(first.access).toMatchObject({
      access: 'pending', status: 'pending', resource: 'svc://secrets/prod/db', operation: 'read', requestedBy: 'bot', requested: true,
      approvalId: expect.stringMatching(/^appr_/), expiresAt,
    });
    const approvalId = first.access.approvalId as string;
    expect(first.access.approvalUrl).toBe(`${DASHBOARD}/approvals/${approvalId}`);
    expect(JSON.parse(first.text)).toMatchObject({ access: 'pending', approvalId, approvalUrl: first.access.approvalUrl });
    // The person sees the request, with the reason the read gave.
    const seen = await rest(base, aliceKey, 'GET', `/v1/security/mcp/approvals/${approvalId}`);
    expect(seen.body).toMatchObject({ status: 'pending', reason: 'rotating the pool', requestedBy: 'bot' });

    clock.advance(1000);
    const again = await readResource(bot, 'svc://secrets/prod/db');
    expect(again.access).toMatchObject({ access: 'pending', approvalId, requested: false });
    expect((await rest(base, aliceKey, 'GET', '/v1/security/mcp/approvals?status=pending')).body.data).toHaveLength(1);

    await respond(base, aliceKey, approvalId, 'approve');
    const granted = await readResource(bot, 'svc://secrets/prod/db');
    expect(granted.text).toBe('postgres://s3cret');
    expect(granted.mimeType).toBe('text/plain');
    expect(granted.access).toMatchObject({ access: 'granted', approvalId, registeredUri: 'svc://secrets/prod/*', accessCount: 1 });
    // Exactly that operation and requester: another MCP client of the tenant gets a request of its own.
    const carol = await httpClient(base, await key('carol', ['mcp:access']));
    open.push(carol);
    const carols = await readResource(carol, 'svc://secrets/prod/db');
    expect(carols.access).toMatchObject({ access: 'pending', requestedBy: 'carol' });
    expect(carols.access.approvalId).not.toBe(approvalId);
    // An approval for one URI opens nothing else under the same registration.
    expect((await readResource(bot, 'svc://secrets/prod/other')).access.access).not.toBe('granted');

    // Past expiresAt the approval is over: the read says so and asks anew.
    clock.advance(3600_000);
    const over = await readResource(bot, 'svc://secrets/prod/db');
    expect(over.text).not.toContain('s3cret');
    expect(over.access).toMatchObject({ access: 'expired', approvalId, status: 'approved', next: { status: 'pending' } });
    const next = over.access.next.approvalId as string;
    expect(next).not.toBe(approvalId);
    expect((await readResource(bot, 'svc://secrets/prod/db')).access).toMatchObject({ access: 'pending', approvalId: next });
    await respond(base, aliceKey, next, 'approve');
    expect((await readResource(bot, 'svc://secrets/prod/db')).text).toBe('postgres://s3cret');
  });

  it('reads a denied request as denied until its expiresAt, and an unanswered one past it as expired', async () => {
    const { aliceKey, bot, botKey } = await world();
    await gatedSecret(base, aliceKey, { name: 'prod.api', value: 'sk-live-1', uri: 'svc://secrets/prod/api', approvers: ['alice'] });
    const asked = (await readResource(bot, 'svc://secrets/prod/api')).access.approvalId as string;
    await respond(base, aliceKey, asked, 'deny', 'not during the freeze');
    for (let i = 0; i < 2; i++) {
      const denied = await readResource(bot, 'svc://secrets/prod/api');
      expect(denied.text).not.toContain('sk-live');
      expect(denied.access).toMatchObject({ access: 'denied', approvalId: asked, status: 'denied', respondedBy: 'alice', responseReason: 'not during the freeze' });
    }
    // A G11 token-less read is refused as before: the MCP path adds no way around the approval.
    const g11Read = await rest(base, botKey, 'GET', `/v1/security/mcp/resources/${encodeURIComponent('svc://secrets/prod/api')}`);
    expect(g11Read.status).toBe(403);
    expect(g11Read.body.error.details).toMatchObject({ reason: 'approval_required' });

    await gatedSecret(base, aliceKey, { name: 'prod.cache', value: 'redis://c', uri: 'svc://secrets/prod/cache', approvers: ['alice'] });
    const unanswered = (await readResource(bot, 'svc://secrets/prod/cache')).access.approvalId as string;
    clock.advance(3600_000);
    const expired = await readResource(bot, 'svc://secrets/prod/cache');
    expect(expired.access).toMatchObject({ access: 'expired', approvalId: unanswered, status: 'expired', next: { status: 'pending' } });
    // A person can no longer answer the old request.
    const late = await rest(base, aliceKey, 'POST', `/v1/security/mcp/approvals/${unanswered}/respond`, { action: 'approve' });
    expect(late.status).toBe(409);
  });

  it('uses the requester\'s approval of a wildcard asked through G11, but never one for another operation', async () => {
    const { aliceKey, bot, botKey } = await world();
    const reg = await rest(base, aliceKey, 'POST', '/v1/security/mcp/resources', {
      uri: 'svc://secrets/stage/*', name: 'Staging', approvers: ['alice'], permissions: ['read', 'write'],
    });
    expect(reg.status).toBe(201);
    await rest(base, aliceKey, 'POST', '/v1/security/secrets', { name: 'stage.db', value: 'stage-pw' });
    const write = await rest(base, botKey, 'POST', '/v1/security/mcp/approve', { resource: 'svc://secrets/stage/*', operation: 'write', reason: 'migrate' });
    expect(write.status).toBe(201);
    await respond(base, aliceKey, write.body.approvalId as string, 'approve');
    // An approved write opens no read: the read asks for its own approval.
    const asked = await readResource(bot, 'svc://secrets/stage/db');
    expect(asked.access).toMatchObject({ access: 'pending', operation: 'read', resource: 'svc://secrets/stage/db' });
    await respond(base, aliceKey, asked.access.approvalId as string, 'deny');
    const wide = await rest(base, botKey, 'POST', '/v1/security/mcp/approve', { resource: 'svc://secrets/stage/*', reason: 'read all of staging' });
    await respond(base, aliceKey, wide.body.approvalId as string, 'approve');
    const read = await readResource(bot, 'svc://secrets/stage/db');
    expect(read.text).toBe('stage-pw');
    expect(read.access).toMatchObject({ access: 'granted', approvalId: wide.body.approvalId });
  });

  it('reads a registration without approval at once, lists the registered URIs, and refuses what nothing governs', async () => {
    const { aliceKey, bot } = await world();
    const custom = await rest(base, aliceKey, 'POST', '/v1/security/mcp/resources', {
      uri: 'svc://custom/config/flags', name: 'Feature flags', value: '{"beta":true}', requiresApproval: false,
    });
    expect(custom.status).toBe(201);
    const read = await readResource(bot, 'svc://custom/config/flags');
    expect(read.text).toBe('{"beta":true}');
    expect(read.access).toMatchObject({ access: 'granted', approvalId: null });
    await gatedSecret(base, aliceKey, { name: 'prod.db', value: 'v', uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const listed = (await bot.listResources()).resources;
    expect(listed.map((r) => r.uri)).toEqual(['svc://custom/config/flags']);
    await expect(bot.readResource({ uri: 'svc://secrets/dev/db' })).rejects.toThrow(/NOT_FOUND: No MCP resource governs/);
  });

  it('records every read in the MCP audit: refused, pending and granted, with the approval involved', async () => {
    const { aliceKey, bot } = await world();
    await gatedSecret(base, aliceKey, { name: 'prod.db', value: 'v', uri: 'svc://secrets/prod/db', approvers: ['alice'] });
    const approvalId = (await readResource(bot, 'svc://secrets/prod/db')).access.approvalId as string;
    await respond(base, aliceKey, approvalId, 'approve');
    await readResource(bot, 'svc://secrets/prod/db');
    await bot.readResource({ uri: 'svc://secrets/nothing/here' }).catch(() => undefined);
    const audit = await rest(base, aliceKey, 'GET', '/v1/security/mcp/audit?actor=bot');
    expect(audit.status).toBe(200);
    const rows = (audit.body.logs as Json[]).map((r) => ({ resource: r.resource, operation: r.operation, success: r.success, approvalId: r.approvalId, reason: r.metadata.reason }));
    expect(rows).toEqual([
      { resource: 'svc://secrets/nothing/here', operation: 'read', success: false, approvalId: null, reason: undefined },
      { resource: 'svc://secrets/prod/db', operation: 'read', success: true, approvalId, reason: undefined },
      { resource: 'svc://secrets/prod/db', operation: 'read', success: false, approvalId, reason: 'approval_pending' },
      { resource: 'svc://secrets/prod/db', operation: 'request', success: true, approvalId, reason: undefined },
    ]);
    const full = await rest(base, aliceKey, 'GET', '/v1/security/audit-logs?action=mcp.read&actor=bot');
    expect(full.body.data[0].metadata).toMatchObject({ transport: 'mcp-http' });
  });
});
