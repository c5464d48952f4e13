import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { KeyMode } from '../../src/core/scope.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { createTestApp, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { g11, ISO } from './client.ts';
import { g11Mcp, type McpClient } from './mcp-client.ts';

const DASHBOARD = 'https://mnemo.example.com/ops/dashboard';
const APPROVAL_ID = /^appr_[A-Za-z0-9]{24}$/;
const TOKEN = /^mcp_at_[A-Za-z0-9]{40}$/;
const ASK = { method: 'POST', path: '/v1/security/mcp/approve' };

/**
 * G11 MCP resources and approvals (/v1/security/mcp/…). One app for the file, on a manual clock and with
 * MNEMO_DASHBOARD_URL set; each test works in tenants of its own. Users: alice and bob approve, bot is the AI tool
 * (mcp:access only), carol is another MCP client of the tenant.
 */
let t: TestApp;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
beforeAll(async () => { t = await createTestApp({ env: { MNEMO_DASHBOARD_URL: `${DASHBOARD}/` }, overrides: { clock } }); });
afterAll(() => t.close());

async function world(options: { tenant?: string; mode?: KeyMode } = {}) {
  const tenant = options.tenant ?? uniqueTenant('mcp');
  const key = (user: string, scopes?: Permission[]) => t.key({ tenant, user, mode: options.mode ?? 'live', ...(scopes ? { scopes } : {}) });
  const aliceKey = await key('alice');
  return {
    tenant,
    aliceKey,
    alice: g11Mcp(t.app, aliceKey),
    bob: g11Mcp(t.app, await key('bob')),
    bot: g11Mcp(t.app, await key('bot', ['mcp:access'])),
    carol: g11Mcp(t.app, await key('carol', ['mcp:access'])),
    secrets: g11(t.app, aliceKey),
  };
}
type World = Awaited<ReturnType<typeof world>>;

/** Registers (as alice) and checks the 201. */
async function register(w: World, body: Json): Promise<Json> {
  const res = await w.alice.register({ name: `Access to ${body.uri as string}`, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return json(res);
}

/** bot asks, alice approves; returns the approval answer (with its accessToken). */
async function approved(w: World, request: Json): Promise<Json> {
  const asked = await w.bot.approve({ reason: 'deploying', ...request });
  expect(asked.statusCode, asked.body).toBe(201);
  const answer = await w.alice.respond(json(asked).approvalId, { action: 'approve', reason: 'ok' });
  expect(answer.statusCode, answer.body).toBe(200);
  return json(answer);
}

const denied = (res: { statusCode: number; body: string }, reason: string, extra: Json = {}) => {
  expect(res.statusCode, res.body).toBe(403);
  const error = JSON.parse(res.body).error;
  expect(error.code).toBe('PERMISSION_DENIED');
  expect(error.details).toMatchObject({ reason, ...extra });
  return error;
};

describe('G11 MCP: happy paths', () => {
  it('registers resources of every pattern and lists them without values, a page at a time', async () => {
    const w = await world();
    const created = await w.alice.register({
      uri: 'svc://secrets/prod/*', name: 'Production secrets', description: 'For the deploy agent', type: 'secret',
      permissions: ['read'], requiresApproval: true, approvers: ['alice', 'bob'],
      autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London', requester: ['bot'] } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(json(created)).toEqual({
      id: expect.stringMatching(/^mcr_[A-Za-z0-9]{24}$/), uri: 'svc://secrets/prod/*', name: 'Production secrets', description: 'For the deploy agent',
      type: 'secret', permissions: ['read'], requiresApproval: true, approvers: ['alice', 'bob'],
      autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London', requester: ['bot'] } },
      createdAt: '2026-06-01T12:00:00.000Z', createdBy: 'alice',
    });
    for (const body of [
      { uri: 'svc://secrets/*', approvers: ['alice'] },
      { uri: 'svc://secrets/staging/api-token', requiresApproval: false },
      { uri: 'svc://api-keys/*', approvers: ['alice'] },
      { uri: 'svc://api-keys/key_abc', requiresApproval: false, permissions: ['read', 'write'] },
      { uri: 'svc://custom/config/flags', approvers: ['bob'], value: '{"beta":true}' },
    ]) await register(w, body);
    const listed = await w.bot.list();
    expect(listed.statusCode, listed.body).toBe(200);
    const body = json(listed);
    expect(body.resources.map((r: Json) => [r.uri, r.type])).toEqual([
      ['svc://api-keys/*', 'api-key'], ['svc://api-keys/key_abc', 'api-key'], ['svc://custom/config/flags', 'custom'],
      ['svc://secrets/*', 'secret'], ['svc://secrets/prod/*', 'secret'], ['svc://secrets/staging/api-token', 'secret'],
    ]);
    expect(body.resources[4]).toEqual(json(created));
    for (const r of body.resources) for (const field of ['value', 'metadata', 'accessedAt', 'accessCount']) expect(r).not.toHaveProperty(field);
    expect(body.resources[2]).toMatchObject({ requiresApproval: true, approvers: ['bob'], autoApprove: { enabled: false, conditions: {} }, permissions: ['read'] });
    expect(body.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 6 });
    const first = json(await w.bot.list('limit=4'));
    expect(first.pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 6 });
    const second = json(await w.bot.list(`limit=4&cursor=${encodeURIComponent(first.pagination.cursor)}`));
    expect([...first.resources, ...second.resources].map((r: Json) => r.uri)).toEqual(body.resources.map((r: Json) => r.uri));
    expect(second.pagination.hasMore).toBe(false);
  });

  it('reads through a path that needs no approval: value, metadata, accessedAt and accessCount', async () => {
    const w = await world();
    await w.secrets.create({ name: 'staging.api-token', value: 'tok-123', tags: ['ci'] });
    const reg = await register(w, { uri: 'svc://secrets/staging/api-token', requiresApproval: false });
    clock.advance(1000);
    const read = await w.bot.read('svc://secrets/staging/api-token');
    expect(read.statusCode, read.body).toBe(200);
    expect(json(read)).toEqual({
      ...reg, value: 'tok-123', accessedAt: clock.now().toISOString(), accessCount: 1,
      metadata: {
        type: 'secret', registeredUri: 'svc://secrets/staging/api-token', environment: 'staging', secretName: 'staging.api-token', version: 1,
        tags: ['ci'], updatedAt: expect.stringMatching(ISO), expiresAt: null,
      },
    });
    clock.advance(5000);
    await w.secrets.update('staging.api-token', { value: 'tok-456' });
    expect(json(await w.carol.read('svc://secrets/staging/api-token'))).toMatchObject({
      value: 'tok-456', accessCount: 2, accessedAt: clock.now().toISOString(), metadata: { version: 2 },
    });
  });

  it('asks, approves and reads: 403 saying how to ask, pending with its approvalUrl, the token opens the read until expiresAt', async () => {
    const w = await world();
    await w.secrets.create({ name: 'prod.db-password', value: 'hunter2' });
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice', 'bob'] });

    const refused = denied(await w.bot.read('svc://secrets/prod/db-password'), 'approval_required');
    expect(refused).toEqual({
      code: 'PERMISSION_DENIED', message: expect.stringContaining('svc://secrets/prod/db-password'),
      details: {
        reason: 'approval_required', resource: 'svc://secrets/prod/db-password', operation: 'read',
        requestApproval: { ...ASK, body: { resource: 'svc://secrets/prod/db-password', operation: 'read', reason: expect.any(String) } },
      },
    });

    const requestedAt = clock.now();
    const asked = await w.bot.approve({ resource: 'svc://secrets/prod/db-password', operation: 'read', reason: 'rotate the pool', requestedBy: 'bot', ttl: 600 });
    expect(asked.statusCode, asked.body).toBe(201);
    const pending = json(asked);
    expect(pending).toEqual({
      approvalId: expect.stringMatching(APPROVAL_ID), status: 'pending', resource: 'svc://secrets/prod/db-password', operation: 'read',
      reason: 'rotate the pool', requestedBy: 'bot', requestedAt: requestedAt.toISOString(),
      expiresAt: new Date(requestedAt.getTime() + 600_000).toISOString(), approvalUrl: `${DASHBOARD}/approvals/${pending.approvalId}`,
      approvedBy: null, approvedAt: null, deniedBy: null, deniedAt: null, responseReason: null, autoApproved: false, accessToken: null,
    });
    const { accessToken: _none, ...summary } = pending;
    expect(json(await w.bot.approval(pending.approvalId))).toEqual(summary);
    // Still refused while pending.
    denied(await w.bot.read('svc://secrets/prod/db-password'), 'approval_required');

    clock.advance(60_000);
    const answered = await w.bob.respond(pending.approvalId, { action: 'approve', reason: 'go ahead', approvedBy: 'bob' });
    expect(answered.statusCode, answered.body).toBe(200);
    const approval = json(answered);
    expect(approval).toEqual({
      ...summary, status: 'approved', approvedBy: 'bob', approvedAt: clock.now().toISOString(), responseReason: 'go ahead',
      accessToken: expect.stringMatching(TOKEN),
    });
    // The token is in that answer only.
    expect(json(await w.alice.approval(pending.approvalId))).toEqual({ ...summary, status: 'approved', approvedBy: 'bob', approvedAt: approval.approvedAt, responseReason: 'go ahead' });

    const read = await w.bot.read('svc://secrets/prod/db-password', approval.accessToken);
    expect(read.statusCode, read.body).toBe(200);
    expect(json(read)).toMatchObject({ uri: 'svc://secrets/prod/db-password', value: 'hunter2', accessCount: 1, metadata: { registeredUri: 'svc://secrets/prod/*' } });
    clock.set(new Date(approval.expiresAt).getTime() - 1);
    expect((await w.bot.read('svc://secrets/prod/db-password', approval.accessToken)).statusCode).toBe(200);
    clock.advance(1);
    const expired = denied(await w.bot.read('svc://secrets/prod/db-password', approval.accessToken), 'access_token_expired');
    expect(expired.details.requestApproval).toMatchObject(ASK);
    // An approved approval stays approved: its token simply opens nothing any more.
    expect(json(await w.bot.approval(pending.approvalId)).status).toBe('approved');
  });

  it('a denial gives no token, and the read stays refused', async () => {
    const w = await world();
    await w.secrets.create({ name: 'prod.db-password', value: 'hunter2' });
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const asked = json(await w.bot.approve({ resource: 'svc://secrets/prod/db-password', reason: 'curious' }));
    expect(asked).toMatchObject({ operation: 'read', status: 'pending' });
    expect(new Date(asked.expiresAt).getTime() - new Date(asked.requestedAt).getTime()).toBe(3_600_000);
    clock.advance(1000);
    const no = await w.alice.respond(asked.approvalId, { action: 'deny', reason: 'not today' });
    expect(no.statusCode, no.body).toBe(200);
    expect(json(no)).toMatchObject({
      status: 'denied', approvedBy: null, approvedAt: null, deniedBy: 'alice', deniedAt: clock.now().toISOString(), responseReason: 'not today',
      accessToken: null,
    });
    denied(await w.bot.read('svc://secrets/prod/db-password'), 'approval_required');
  });

  it('reads an API key\'s record (never the key) and a custom value', async () => {
    const w = await world();
    const made = json(await t.app.inject({
      method: 'POST', url: '/v1/security/api-keys', headers: { authorization: `Bearer ${w.aliceKey}` }, payload: { name: 'CI deploy', scopes: ['secrets:read'] },
    }));
    await register(w, { uri: `svc://api-keys/${made.id as string}`, requiresApproval: false });
    await register(w, { uri: 'svc://custom/config/flags', requiresApproval: false, value: '{"beta":true}' });
    const key = await w.bot.read(`svc://api-keys/${made.id as string}`);
    expect(key.statusCode, key.body).toBe(200);
    expect(key.body).not.toContain(made.key);
    expect(JSON.parse(json(key).value)).toEqual({
      id: made.id, name: 'CI deploy', prefix: made.prefix, userId: 'alice', scopes: ['secrets:read'], tier: 'enterprise', mode: 'live',
      createdAt: made.createdAt, expiresAt: null, revokedAt: null, replacedBy: null,
    });
    expect(json(key)).toMatchObject({ type: 'api-key', metadata: { type: 'api-key', keyId: made.id, prefix: made.prefix } });
    expect(json(await w.bot.read('svc://custom/config/flags'))).toMatchObject({
      type: 'custom', value: '{"beta":true}', metadata: { type: 'custom', customType: 'config', customId: 'flags', registeredUri: 'svc://custom/config/flags' },
    });
  });

  it('approves at once inside the autoApprove conditions: requester listed, 09:00-17:00 London across the change to summer time', async () => {
    const w = await world();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await w.secrets.create({ name: `prod.${name}`, value: `value-${name}` });
    await register(w, {
      uri: 'svc://secrets/prod/*', approvers: ['alice'],
      autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London', requester: ['bot'] } },
    });
    const ask = async (who: typeof w.bot, name: string) => {
      const res = await who.approve({ resource: `svc://secrets/prod/${name}`, reason: 'nightly job' });
      expect(res.statusCode, res.body).toBe(201);
      return json(res);
    };
    clock.set(Date.UTC(2026, 2, 28, 8, 30)); // Saturday 08:30 GMT: before the window
    expect(await ask(w.bot, 'a')).toMatchObject({ status: 'pending', accessToken: null, autoApproved: false });
    clock.set(Date.UTC(2026, 2, 30, 8, 30)); // Monday 08:30 UTC, 09:30 BST (the clocks went forward on Sunday): inside
    const auto = await ask(w.bot, 'b');
    expect(auto).toMatchObject({
      status: 'approved', autoApproved: true, approvedBy: 'auto-approve', approvedAt: clock.now().toISOString(), accessToken: expect.stringMatching(TOKEN),
    });
    expect(json(await w.bot.read('svc://secrets/prod/b', auto.accessToken))).toMatchObject({ value: 'value-b' });
    // Another requester, inside the window: not listed, so a person decides.
    expect(await ask(w.carol, 'c')).toMatchObject({ status: 'pending', accessToken: null });
    clock.set(Date.UTC(2026, 2, 30, 15, 59)); // 16:59 BST
    expect(await ask(w.bot, 'd')).toMatchObject({ status: 'approved', autoApproved: true });
    clock.set(Date.UTC(2026, 2, 30, 16, 0)); // 17:00 BST: the window has closed
    expect(await ask(w.bot, 'e')).toMatchObject({ status: 'pending', autoApproved: false });
  });

  it('approves at once inside a window crossing midnight', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/*', approvers: ['alice'], autoApprove: { enabled: true, conditions: { timeWindow: '22:00-06:00 Asia/Tokyo' } } });
    const status = async (at: number, name: string) => {
      clock.set(at);
      return json(await w.bot.approve({ resource: `svc://secrets/nightly/${name}`, reason: 'batch' })).status;
    };
    expect(await status(Date.UTC(2026, 5, 1, 12, 59), 'a')).toBe('pending'); // 21:59 JST
    expect(await status(Date.UTC(2026, 5, 1, 13, 0), 'b')).toBe('approved'); // 22:00 JST
    expect(await status(Date.UTC(2026, 5, 1, 15, 0), 'c')).toBe('approved'); // 00:00 JST
    expect(await status(Date.UTC(2026, 5, 1, 20, 59), 'd')).toBe('approved'); // 05:59 JST
    expect(await status(Date.UTC(2026, 5, 1, 21, 0), 'e')).toBe('pending'); // 06:00 JST
  });

  it('an approval of a wildcard opens each URI under it; the most specific registration governs', async () => {
    const w = await world();
    for (const name of ['a', 'b', 'public']) await w.secrets.create({ name: `prod.${name}`, value: `value-${name}` });
    await w.secrets.create({ name: 'staging.a', value: 'staging-a' });
    await register(w, { uri: 'svc://secrets/*', approvers: ['alice'] });
    await register(w, { uri: 'svc://secrets/prod/public', requiresApproval: false });
    // The exact registration governs prod.public, and needs no approval; the broad one governs the rest.
    expect(json(await w.bot.read('svc://secrets/prod/public'))).toMatchObject({ value: 'value-public', metadata: { registeredUri: 'svc://secrets/prod/public' } });
    denied(await w.bot.read('svc://secrets/prod/a'), 'approval_required');
    const grant = await approved(w, { resource: 'svc://secrets/prod/*' });
    for (const name of ['a', 'b']) {
      expect(json(await w.bot.read(`svc://secrets/prod/${name}`, grant.accessToken))).toMatchObject({ value: `value-${name}`, metadata: { registeredUri: 'svc://secrets/*' } });
    }
    denied(await w.bot.read('svc://secrets/staging/a', grant.accessToken), 'access_token_invalid');
  });

  it('lists approvals by status, resource and limit, newest first', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/*', approvers: ['alice'] });
    const ask = async (name: string, ttl = 3600) => {
      clock.advance(1000);
      return json(await w.bot.approve({ resource: `svc://secrets/app/${name}`, reason: 'r', ttl })).approvalId as string;
    };
    const short = await ask('short', 60);
    const yes = await ask('yes');
    const no = await ask('no');
    const open = await ask('open');
    await w.alice.respond(yes, { action: 'approve' });
    await w.alice.respond(no, { action: 'deny' });
    clock.advance(60_000); // `short` is now past its expiresAt, unanswered
    const ids = async (query: string) => {
      const res = await w.carol.approvals(query);
      expect(res.statusCode, res.body).toBe(200);
      return json(res).data.map((a: Json) => [a.approvalId, a.status]);
    };
    expect(await ids('')).toEqual([[open, 'pending'], [no, 'denied'], [yes, 'approved'], [short, 'expired']]);
    expect(await ids('status=pending')).toEqual([[open, 'pending']]);
    expect(await ids('status=approved')).toEqual([[yes, 'approved']]);
    expect(await ids('status=denied')).toEqual([[no, 'denied']]);
    expect(await ids('status=expired')).toEqual([[short, 'expired']]);
    expect(await ids(`resource=${encodeURIComponent('svc://secrets/app/yes')}`)).toEqual([[yes, 'approved']]);
    const page = json(await w.carol.approvals('limit=3'));
    expect(page.pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 4 });
    const rest = json(await w.carol.approvals(`limit=3&cursor=${encodeURIComponent(page.pagination.cursor)}`));
    expect(rest.data.map((a: Json) => a.approvalId)).toEqual([short]);
    expect(rest.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 4 });
    for (const a of [...page.data, ...rest.data]) expect(a).not.toHaveProperty('accessToken');
  });

  it('serves every MCP request, granted or refused, as the MCP audit', async () => {
    const w = await world();
    await w.secrets.create({ name: 'prod.db', value: 'hunter2' });
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    const bot = g11Mcp(t.app, await t.key({ tenant: w.tenant, user: 'bot', scopes: ['mcp:access'] }), { 'user-agent': 'deploy-agent/2.1' });
    clock.advance(1000);
    await bot.read('svc://secrets/prod/db');
    const asked = json(await bot.approve({ resource: 'svc://secrets/prod/db', reason: 'deploy' }));
    const token = json(await w.alice.respond(asked.approvalId, { action: 'approve' })).accessToken as string;
    clock.advance(1000);
    await bot.read('svc://secrets/prod/db', token);
    const res = await w.alice.audit();
    expect(res.statusCode, res.body).toBe(200);
    const logs = json(res).logs;
    expect(logs.map((l: Json) => [l.operation, l.resource, l.actor, l.success, l.status])).toEqual([
      ['read', 'svc://secrets/prod/db', 'bot', true, 200],
      ['respond', `mcp-approval:${asked.approvalId as string}`, 'alice', true, 200],
      ['request', 'svc://secrets/prod/db', 'bot', true, 201],
      ['read', 'svc://secrets/prod/db', 'bot', false, 403],
      ['register', 'svc://secrets/prod/*', 'alice', true, 201],
    ]);
    expect(logs[0]).toEqual({
      id: expect.stringMatching(/^aud_/), timestamp: clock.now().toISOString(), resource: 'svc://secrets/prod/db', operation: 'read', actor: 'bot',
      approvalId: asked.approvalId, success: true, status: 200, metadata: { ipAddress: '127.0.0.1', userAgent: 'deploy-agent/2.1' },
    });
    expect(logs[3]).toMatchObject({ approvalId: null, success: false, metadata: { ipAddress: '127.0.0.1', userAgent: 'deploy-agent/2.1', reason: 'approval_required' } });
    expect(logs[2].approvalId).toBe(asked.approvalId);
    const filtered = json(await w.alice.audit(`resource=${encodeURIComponent('svc://secrets/prod/db')}&actor=bot&limit=2`));
    expect(filtered.logs.map((l: Json) => l.operation)).toEqual(['read', 'request']);
    expect(filtered.pagination).toMatchObject({ hasMore: true, totalCount: 3 });
    // The same rows are the audit log's, which reading the MCP audit is recorded in too.
    const general = json(await t.app.inject({ method: 'GET', url: '/v1/security/audit-logs?action=audit.read', headers: { authorization: `Bearer ${w.aliceKey}` } }));
    expect(general.data.map((r: Json) => r.resource)).toContain('audit-log:mcp');
  });
});

describe('G11 MCP: errors', () => {
  it('refuses URIs outside the spec\'s patterns with 400 VALIDATION_ERROR, and a wildcard where one value is read', async () => {
    const w = await world();
    for (const uri of ['svc://secrets/prod', 'svc://secrets/*/db', 'https://example.com', 'svc://custom/config/*', 'svc://other/x', 'svc://secrets/pr.od/x']) {
      const made = await w.alice.register({ uri, name: 'x', requiresApproval: false });
      expect(made.statusCode, uri).toBe(400);
      expect(json(made).error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [expect.objectContaining({ field: 'uri' })] } });
      expect((await w.bot.read(uri)).statusCode, uri).toBe(400);
      expect(json(await w.bot.approve({ resource: uri, reason: 'r' })).error.details.fields[0].field).toBe('resource');
      expect((await w.bot.approvals(`resource=${encodeURIComponent(uri)}`)).statusCode).toBe(400);
      expect((await w.alice.audit(`resource=${encodeURIComponent(uri)}`)).statusCode).toBe(400);
    }
    await register(w, { uri: 'svc://secrets/prod/*', requiresApproval: false });
    const wildcard = await w.bot.read('svc://secrets/prod/*');
    expect(wildcard.statusCode).toBe(400);
    expect(json(wildcard).error.details.fields).toEqual([{ field: 'uri', message: 'names several values: read one URI under it' }]);
    // Not URL-encoded: the slashes make it another path.
    const raw = await t.app.inject({ method: 'GET', url: '/v1/security/mcp/resources/svc://secrets/prod/db', headers: { authorization: `Bearer ${w.aliceKey}` } });
    expect(raw.statusCode).toBe(404);
    expect(json(raw).error.code).toBe('RESOURCE_NOT_FOUND');
    expect(json(await w.bot.list()).pagination.totalCount).toBe(1);
  });

  it('answers bad registrations with 400 naming each field, and stores nothing', async () => {
    const w = await world();
    const base = { uri: 'svc://secrets/prod/*', name: 'Prod', approvers: ['alice'] };
    for (const [body, field] of [
      [{ ...base, name: undefined }, 'name'],
      [{ ...base, name: '   ' }, 'name'],
      [{ ...base, permissions: [] }, 'permissions'],
      [{ ...base, permissions: ['delete'] }, 'permissions'],
      [{ ...base, approvers: [] }, 'approvers'],
      [{ ...base, approvers: undefined }, 'approvers'],
      [{ ...base, approvers: ['alice\u0007'] }, 'approvers'],
      [{ ...base, requiresApproval: 'yes' }, 'requiresApproval'],
      [{ ...base, autoApprove: { enabled: true, conditions: { timeWindow: '9-5 London' } } }, 'autoApprove.conditions.timeWindow'],
      [{ ...base, autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Nowhere/City' } } }, 'autoApprove.conditions.timeWindow'],
      [{ ...base, autoApprove: { enabled: true, conditions: { requester: [] } } }, 'autoApprove.conditions.requester'],
      [{ ...base, autoApprove: { conditions: {} } }, 'autoApprove'],
      [{ ...base, type: 'custom' }, 'type'],
      [{ ...base, value: 'x' }, 'value'],
      [{ ...base, uri: 'svc://custom/config/flags' }, 'value'],
      [{ ...base, tenantId: 'other' }, 'tenantId'],
    ] as const) {
      const res = await w.alice.register(JSON.parse(JSON.stringify(body)));
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      const error = json(res).error;
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields.map((f: Json) => f.field).join(' '), JSON.stringify(body)).toContain(field);
    }
    expect(json(await w.bot.list()).pagination.totalCount).toBe(0);
  });

  it('answers 404 where no registration governs a URI, nothing is stored, or no such approval exists', async () => {
    const w = await world();
    const none = await w.bot.read('svc://secrets/prod/db');
    expect(none.statusCode).toBe(404);
    expect(json(none)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'No MCP resource governs svc://secrets/prod/db', details: {} } });
    expect(json(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'r' })).error.message).toBe('No MCP resource governs svc://secrets/prod/db');
    await register(w, { uri: 'svc://secrets/prod/*', requiresApproval: false });
    await register(w, { uri: 'svc://api-keys/*', requiresApproval: false });
    for (const [uri, what] of [['svc://secrets/prod/db', 'no secret named "prod.db"'], ['svc://api-keys/key_missing', 'no API key "key_missing"']] as const) {
      const empty = await w.bot.read(uri);
      expect(empty.statusCode).toBe(404);
      expect(json(empty).error).toEqual({ code: 'RESOURCE_NOT_FOUND', message: `Nothing is stored at ${uri} (${what})`, details: {} });
    }
    // An expired secret is not there either.
    await w.secrets.create({ name: 'prod.short', value: 'v', expiresIn: '60s' });
    expect((await w.bot.read('svc://secrets/prod/short')).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await w.bot.read('svc://secrets/prod/short')).statusCode).toBe(404);
    for (const res of [await w.bot.approval('appr_missing'), await w.alice.respond('appr_missing', { action: 'approve' })]) {
      expect(res.statusCode).toBe(404);
      expect(json(res)).toEqual({ error: { code: 'RESOURCE_NOT_FOUND', message: 'MCP approval "appr_missing" not found', details: {} } });
    }
  });

  it('answers 409 to a second registration of a URI, a duplicate pending request, and a request nothing needs', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    await register(w, { uri: 'svc://secrets/staging/*', requiresApproval: false });
    const again = await w.alice.register({ uri: 'svc://secrets/prod/*', name: 'again', requiresApproval: false });
    expect(again.statusCode).toBe(409);
    expect(json(again)).toEqual({ error: { code: 'CONFLICT', message: 'An MCP resource with the URI svc://secrets/prod/* already exists', details: { field: 'uri' } } });

    const first = json(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'r', ttl: 60 }));
    const duplicate = await w.bot.approve({ resource: 'svc://secrets/prod/db', operation: 'read', reason: 'again' });
    expect(duplicate.statusCode).toBe(409);
    expect(json(duplicate).error).toMatchObject({ code: 'CONFLICT', details: { field: 'resource', approvalId: first.approvalId } });
    // Another requester, or another resource, may ask meanwhile.
    expect((await w.carol.approve({ resource: 'svc://secrets/prod/db', reason: 'r' })).statusCode).toBe(201);
    expect((await w.bot.approve({ resource: 'svc://secrets/prod/cache', reason: 'r' })).statusCode).toBe(201);
    // Once the first expired unanswered, a new request is taken, and the first reads expired.
    clock.advance(60_000);
    const renewed = await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'still needed' });
    expect(renewed.statusCode, renewed.body).toBe(201);
    expect(json(await w.bot.approval(first.approvalId)).status).toBe('expired');

    const needless = await w.bot.approve({ resource: 'svc://secrets/staging/db', reason: 'r' });
    expect(needless.statusCode).toBe(409);
    expect(json(needless).error).toEqual({
      code: 'CONFLICT', message: 'MCP resource svc://secrets/staging/* does not require approval: read svc://secrets/staging/db directly', details: { field: 'resource' },
    });
  });

  it('answers 400 to an operation the resource does not permit, a ttl out of range, a missing reason or action', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    for (const [body, field] of [
      [{ resource: 'svc://secrets/prod/db', reason: 'r', operation: 'write' }, 'operation'],
      [{ resource: 'svc://secrets/prod/db', reason: 'r', operation: 'delete' }, 'operation'],
      [{ resource: 'svc://secrets/prod/db', reason: 'r', ttl: 59 }, 'ttl'],
      [{ resource: 'svc://secrets/prod/db', reason: 'r', ttl: 86_401 }, 'ttl'],
      [{ resource: 'svc://secrets/prod/db', reason: 'r', ttl: 90.5 }, 'ttl'],
      [{ resource: 'svc://secrets/prod/db', reason: 'r', ttl: '600' }, 'ttl'],
      [{ resource: 'svc://secrets/prod/db' }, 'reason'],
      [{ resource: 'svc://secrets/prod/db', reason: ' ' }, 'reason'],
      [{ reason: 'r' }, 'resource'],
    ] as const) {
      const res = await w.bot.approve(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(json(res).error.details.fields.map((f: Json) => f.field).join(' '), JSON.stringify(body)).toContain(field);
    }
    const asked = json(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'r' }));
    for (const body of [{}, { action: 'maybe' }, { action: 'approve', reason: '' }, { action: 'approve', extra: 1 }]) {
      const res = await w.alice.respond(asked.approvalId, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(json(await w.bot.approval(asked.approvalId)).status).toBe('pending');
  });

  it('answers an approval once: a second answer, or one after expiresAt, is 409 and the approval then reads expired', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice', 'bob'] });
    const asked = json(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'r' }));
    expect((await w.alice.respond(asked.approvalId, { action: 'approve' })).statusCode).toBe(200);
    const second = await w.bob.respond(asked.approvalId, { action: 'deny' });
    expect(second.statusCode).toBe(409);
    expect(json(second).error).toEqual({
      code: 'CONFLICT', message: `MCP approval ${asked.approvalId as string} was already answered (approved)`, details: { status: 'approved' },
    });

    const late = json(await w.bot.approve({ resource: 'svc://secrets/prod/cache', reason: 'r', ttl: 120 }));
    clock.advance(120_000);
    const tooLate = await w.alice.respond(late.approvalId, { action: 'approve' });
    expect(tooLate.statusCode).toBe(409);
    expect(json(tooLate).error).toMatchObject({ code: 'CONFLICT', details: { status: 'expired' } });
    expect(json(tooLate).error.message).toContain('expired at');
    expect(json(tooLate).error.message).not.toContain('mcp_at_');
    expect(json(await w.bot.approval(late.approvalId)).status).toBe('expired');
    const stored = await t.container.storage.mcpApprovals.find({ tenantId: w.tenant, mode: 'live' }, late.approvalId);
    expect(stored).toMatchObject({ status: 'expired', tokenDigest: null, respondedBy: null });
  });

  it('stores one of two concurrent answers; the other is 409', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice', 'bob'] });
    for (let round = 0; round < 3; round++) {
      const asked = json(await w.bot.approve({ resource: `svc://secrets/prod/r${round}`, reason: 'r' }));
      const answers = await Promise.all([
        w.alice.respond(asked.approvalId, { action: 'approve' }), w.bob.respond(asked.approvalId, { action: 'deny' }),
      ]);
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
      const winner = json(answers.find((a) => a.statusCode === 200)!);
      expect(json(await w.bot.approval(asked.approvalId)).status).toBe(winner.status);
    }
  });
});

describe('G11 MCP: security', () => {
  it('refuses every endpoint without a usable key (401)', async () => {
    for (const key of [undefined, 'mnemo_live_forged']) {
      const c = g11Mcp(t.app, key);
      for (const res of [
        await c.register({ uri: 'svc://secrets/*', name: 'x' }), await c.list(), await c.read('svc://secrets/prod/db'),
        await c.approve({ resource: 'svc://secrets/prod/db', reason: 'r' }), await c.approvals(), await c.approval('appr_x'),
        await c.respond('appr_x', { action: 'approve' }), await c.audit(),
      ]) {
        expect(res.statusCode).toBe(401);
        expect(json(res).error.code).toBe('AUTHENTICATION_REQUIRED');
      }
    }
  });

  it('needs mcp:access to use access paths, secrets:write to register (and apikeys:manage for API keys), audit:read for the audit', async () => {
    const w = await world();
    const scoped = async (scopes: Permission[]) => g11Mcp(t.app, await t.key({ tenant: w.tenant, user: 'dave', scopes }));
    const needs = (res: { statusCode: number; body: string }, scope: string) => {
      expect(res.statusCode, res.body).toBe(403);
      expect(JSON.parse(res.body).error).toEqual({ code: 'PERMISSION_DENIED', message: `This API key lacks the ${scope} scope`, details: { requiredScope: scope } });
    };
    needs(await w.bot.register({ uri: 'svc://secrets/*', name: 'x', requiresApproval: false }), 'secrets:write');
    needs(await w.bot.audit(), 'audit:read');
    const secretsOnly = await scoped(['secrets:read', 'secrets:write', 'audit:read']);
    needs(await secretsOnly.list(), 'mcp:access');
    needs(await secretsOnly.read('svc://secrets/prod/db'), 'mcp:access');
    needs(await secretsOnly.approve({ resource: 'svc://secrets/prod/db', reason: 'r' }), 'mcp:access');
    needs(await secretsOnly.approvals(), 'mcp:access');
    needs(await secretsOnly.respond('appr_x', { action: 'approve' }), 'mcp:access');
    expect((await secretsOnly.audit()).statusCode).toBe(200);
    // Opening API key records to MCP clients takes the scope that manages them.
    const writer = await scoped(['secrets:write', 'mcp:access']);
    expect((await writer.register({ uri: 'svc://secrets/*', name: 'x', requiresApproval: false })).statusCode).toBe(201);
    needs(await writer.register({ uri: 'svc://api-keys/*', name: 'x', requiresApproval: false }), 'apikeys:manage');
    expect(json(await writer.list()).pagination.totalCount).toBe(1);
  });

  it('keeps tenants and modes apart: resources, approvals, tokens and the audit', async () => {
    const a = await world();
    await a.secrets.create({ name: 'prod.db', value: 'tenant-a-secret' });
    await register(a, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    await register(a, { uri: 'svc://custom/config/flags', requiresApproval: false, value: 'a-flags' });
    const grant = await approved(a, { resource: 'svc://secrets/prod/db' });
    expect(json(await a.bot.read('svc://secrets/prod/db', grant.accessToken)).value).toBe('tenant-a-secret');

    for (const other of [await world(), await world({ tenant: a.tenant, mode: 'test' })]) {
      expect(json(await other.alice.audit()).logs).toEqual([]);
      expect(json(await other.bot.list()).resources).toEqual([]);
      expect(json(await other.bot.approvals()).data).toEqual([]);
      for (const res of [await other.bot.read('svc://secrets/prod/db', grant.accessToken), await other.bot.read('svc://custom/config/flags')]) {
        expect(res.statusCode).toBe(404);
        expect(res.body).not.toContain('tenant-a');
      }
      for (const res of [await other.bot.approval(grant.approvalId), await other.alice.respond(grant.approvalId, { action: 'deny' })]) {
        expect(res.statusCode).toBe(404);
        expect(json(res).error.message).toBe(`MCP approval "${grant.approvalId as string}" not found`);
      }
      // Its own registration of the same URI and a secret of the same name: the other tenant's token opens nothing.
      await other.secrets.create({ name: 'prod.db', value: 'other-secret' });
      await register(other, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
      denied(await other.bot.read('svc://secrets/prod/db', grant.accessToken), 'access_token_invalid');
      // And an approval there opens its own secret only.
      const own = await approved(other, { resource: 'svc://secrets/prod/db' });
      expect(json(await other.bot.read('svc://secrets/prod/db', own.accessToken)).value).toBe('other-secret');
      denied(await a.bot.read('svc://secrets/prod/db', own.accessToken), 'access_token_invalid');
    }
    expect(json(await a.bot.list()).pagination.totalCount).toBe(2);
    expect(json(await a.bot.approval(grant.approvalId)).status).toBe('approved');
  });

  it('a token opens exactly its operation on its resource, for its requester', async () => {
    const w = await world();
    for (const name of ['db', 'cache']) await w.secrets.create({ name: `prod.${name}`, value: `value-${name}` });
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'], permissions: ['read', 'write'] });
    await register(w, { uri: 'svc://secrets/prod/cache', approvers: ['alice'] });
    const db = await approved(w, { resource: 'svc://secrets/prod/db' });
    // Another resource under the same registration, and one another registration governs.
    denied(await w.bot.read('svc://secrets/prod/other', db.accessToken), 'access_token_invalid');
    denied(await w.bot.read('svc://secrets/prod/cache', db.accessToken), 'access_token_invalid');
    // Another user's key with the token: the token is bound to its requester.
    denied(await w.carol.read('svc://secrets/prod/db', db.accessToken), 'access_token_invalid');
    // Another operation: a write approval does not open a read.
    const write = await approved(w, { resource: 'svc://secrets/prod/db', operation: 'write' });
    expect(write).toMatchObject({ operation: 'write', status: 'approved' });
    denied(await w.bot.read('svc://secrets/prod/db', write.accessToken), 'access_token_invalid');
    // Forged, mangled or denied: refused alike.
    for (const token of [`mcp_at_${'A'.repeat(40)}`, db.accessToken.slice(0, -1) + (db.accessToken.endsWith('A') ? 'B' : 'A'), 'not a token']) {
      denied(await w.bot.read('svc://secrets/prod/db', token), 'access_token_invalid');
    }
    expect(json(await w.bot.read('svc://secrets/prod/db', db.accessToken)).value).toBe('value-db');
  });

  it('refuses a read the registration does not permit, token or not', async () => {
    const w = await world();
    await register(w, { uri: 'svc://custom/queue/jobs', requiresApproval: false, permissions: ['write'], value: 'v' });
    await register(w, { uri: 'svc://custom/queue/results', approvers: ['alice'], permissions: ['write'], value: 'v' });
    const refused = denied(await w.bot.read('svc://custom/queue/jobs'), 'operation_not_permitted', { resource: 'svc://custom/queue/jobs', operation: 'read' });
    expect(refused.details).not.toHaveProperty('requestApproval');
    const write = await approved(w, { resource: 'svc://custom/queue/results', operation: 'write' });
    denied(await w.bot.read('svc://custom/queue/results', write.accessToken), 'operation_not_permitted');
    expect(json(await w.bot.approve({ resource: 'svc://custom/queue/results', reason: 'r' })).error.details.fields[0].field).toBe('operation');
  });

  it('lets only a listed approver answer, never the requester, and nobody in another\'s name', async () => {
    const w = await world();
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice', 'bot'] });
    const asked = json(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'r' }));
    const notApprover = denied(await w.carol.respond(asked.approvalId, { action: 'approve' }), 'not_an_approver');
    expect(notApprover.message).toBe('User carol is not an approver of MCP resource svc://secrets/prod/*');
    denied(await w.bob.respond(asked.approvalId, { action: 'approve' }), 'not_an_approver');
    const own = denied(await w.bot.respond(asked.approvalId, { action: 'approve' }), 'own_request');
    expect(own.message).toBe('An approver cannot answer a request of their own');
    const impersonating = await w.alice.respond(asked.approvalId, { action: 'approve', approvedBy: 'bob' });
    expect(impersonating.statusCode).toBe(403);
    expect(json(impersonating).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { field: 'approvedBy' } });
    expect(json(await w.bot.approval(asked.approvalId)).status).toBe('pending');
    const askingForAnother = await w.carol.approve({ resource: 'svc://secrets/prod/db', reason: 'r', requestedBy: 'bot' });
    expect(askingForAnother.statusCode).toBe(403);
    expect(json(askingForAnother).error).toMatchObject({ code: 'PERMISSION_DENIED', details: { field: 'requestedBy' } });
    expect(json(await w.alice.respond(asked.approvalId, { action: 'approve', approvedBy: 'alice' })).approvedBy).toBe('alice');
  });

  it('stores no access token and no custom value in plaintext, and records neither in the audit log', async () => {
    const w = await world();
    await w.secrets.create({ name: 'prod.db', value: 'hunter2' });
    await register(w, { uri: 'svc://secrets/prod/*', approvers: ['alice'] });
    await register(w, { uri: 'svc://custom/vault/root', requiresApproval: false, value: 'custom-plaintext-marker' });
    const grant = await approved(w, { resource: 'svc://secrets/prod/db' });
    await w.bot.read('svc://secrets/prod/db', grant.accessToken);
    await w.bot.read('svc://secrets/prod/db', `${grant.accessToken as string}x`);
    expect(json(await w.bot.read('svc://custom/vault/root')).value).toBe('custom-plaintext-marker');
    const rows: string[] = [];
    for (const table of TRANSFER_TABLES) rows.push(JSON.stringify(await t.container.storage.transfer.dump(table, null, 1_000_000)));
    const everything = rows.join('\n');
    expect(everything).toContain('svc://custom/vault/root');
    for (const text of [grant.accessToken as string, 'custom-plaintext-marker', 'hunter2']) expect(everything.includes(text), text).toBe(false);
    expect(everything).toContain(createHash('sha256').update(grant.accessToken as string).digest('hex'));
  });
});

/** The answer's body, once its status is checked (empty for a 204). */
const ok = (res: Awaited<ReturnType<McpClient['list']>>, status: number): Json => {
  expect(res.statusCode, res.body).toBe(status);
  return res.body === '' ? {} : json(res);
};

describe('G11 MCP: changing and deleting registrations (PUT and DELETE /v1/security/mcp/resources/:uri)', () => {
  it('replaces approvers and auto-approve; the URI stays and the new approvers answer from then on', async () => {
    const w = await world();
    const made = ok(await w.alice.register({ uri: 'svc://secrets/prod/*', name: 'Prod', approvers: ['alice'] }), 201);
    const asked = ok(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'deploy' }), 201);
    const changed = ok(await w.alice.update('svc://secrets/prod/*', {
      approvers: ['bob'], description: 'now bob', autoApprove: { enabled: true, conditions: { requester: ['carol'] } },
    }), 200);
    expect(changed).toEqual({
      ...made, description: 'now bob', approvers: ['bob'], autoApprove: { enabled: true, conditions: { requester: ['carol'] } },
    });
    expect(json(await w.alice.list()).resources).toEqual([changed]);
    expect(json(await w.alice.respond(asked.approvalId as string, { action: 'approve' })).error.details).toMatchObject({ reason: 'not_an_approver' });
    ok(await w.bob.respond(asked.approvalId as string, { action: 'deny' }), 200);
    const audit = json(await w.alice.audit()).logs.map((l: Json) => [l.operation, l.resource, l.status]);
    expect(audit).toContainEqual(['update', 'svc://secrets/prod/*', 200]);
  });

  it('deletes a registration with its approvals: their tokens open nothing, a broader registration governs again', async () => {
    const w = await world();
    ok(await w.alice.register({ uri: 'svc://secrets/*', name: 'All', approvers: ['alice'] }), 201);
    ok(await w.alice.register({ uri: 'svc://secrets/prod/*', name: 'Prod', approvers: ['alice'] }), 201);
    const asked = ok(await w.bot.approve({ resource: 'svc://secrets/prod/db', reason: 'deploy' }), 201);
    const token = ok(await w.alice.respond(asked.approvalId as string, { action: 'approve' }), 200).accessToken as string;
    const pending = ok(await w.bot.approve({ resource: 'svc://secrets/prod/cache', reason: 'cache' }), 201);

    // Only the exact registered URI names a registration; one it merely governs does not.
    expect((await w.alice.remove('svc://secrets/prod/db')).statusCode).toBe(404);
    ok(await w.alice.remove('svc://secrets/prod/*'), 204);
    expect(json(await w.alice.list()).resources.map((r: Json) => r.uri)).toEqual(['svc://secrets/*']);
    const read = await w.bot.read('svc://secrets/prod/db', token);
    expect(read.statusCode, read.body).toBe(403);
    expect(json(read).error.details).toMatchObject({ reason: 'access_token_invalid' });
    expect((await w.alice.respond(pending.approvalId as string, { action: 'approve' })).statusCode).toBe(404);
    expect((await w.bot.approval(asked.approvalId as string)).statusCode).toBe(404);
    // Deleted once: a second delete, or a change, finds nothing.
    expect(json(await w.alice.remove('svc://secrets/prod/*')).error.code).toBe('RESOURCE_NOT_FOUND');
    expect((await w.alice.update('svc://secrets/prod/*', { name: 'x' })).statusCode).toBe(404);
    const audit = json(await w.alice.audit()).logs.map((l: Json) => [l.operation, l.resource, l.status]);
    expect(audit).toContainEqual(['delete', 'svc://secrets/prod/*', 204]);
  });

  it('refuses: 400 for bad changes, 404 in another tenant or at an unregistered URI, 403 without secrets:write', async () => {
    const w = await world();
    const made = ok(await w.alice.register({ uri: 'svc://custom/app/flags', name: 'Flags', requiresApproval: false, value: 'on' }), 201);
    const bad = ok(await w.alice.update('svc://custom/app/flags', { requiresApproval: true, uri: 'svc://custom/x' }), 400);
    expect(bad.error.code).toBe('VALIDATION_ERROR');
    const empty = ok(await w.alice.update('svc://custom/app/flags', { requiresApproval: true }), 400);
    expect(empty.error.details.fields).toEqual([expect.objectContaining({ field: 'approvers' })]);
    expect(ok(await w.alice.update('not a uri', { name: 'x' }), 400).error.code).toBe('VALIDATION_ERROR');
    const other = await world();
    for (const res of [await other.alice.update('svc://custom/app/flags', { name: 'x' }), await other.alice.remove('svc://custom/app/flags'),
      await w.alice.update('svc://custom/app/other', { name: 'x' })]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(json(res).error.code).toBe('RESOURCE_NOT_FOUND');
    }
    for (const res of [await w.bot.update('svc://custom/app/flags', { name: 'x' }), await w.bot.remove('svc://custom/app/flags')]) {
      expect(res.statusCode, res.body).toBe(403);
      expect(json(res).error.details).toEqual({ requiredScope: 'secrets:write' });
    }
    // A custom value can be replaced; the registration is unchanged by the refusals above.
    ok(await w.alice.update('svc://custom/app/flags', { value: 'off' }), 200);
    expect(json(await w.bot.read('svc://custom/app/flags')).value).toBe('off');
    expect(json(await w.alice.list()).resources).toEqual([made]);
  });
});
