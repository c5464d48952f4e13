import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../src/core/api-keys/api-key.types.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { RELATED_MIN_SIMILARITY } from '../../src/core/memories/memory.service.ts';
import { createTestApp, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { call, callError, httpClient, type Json } from './mcp-support.ts';

/**
 * "Memory that stays true" over MCP (docs/memory-lifecycle.md), through the SDK's client over Streamable HTTP against
 * the real server: memory_create's `related`, memory_supersede, memory_history, validity bounds, and the as_of /
 * include_expired reads. A manual clock: a successor must be valid from after the memory it replaces.
 */
let t: TestApp;
let base: string;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
const MINUTE = 60_000;
const open: Client[] = [];

beforeAll(async () => {
  t = await createTestApp({ overrides: { clock } });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const c of open) await c.close().catch(() => undefined);
  await t.close();
});

async function bot(scopes: Permission[] = ['memories:read', 'memories:write'], tenant = uniqueTenant('mcp-life')) {
  const client = await httpClient(base, await t.key({ tenant, user: 'bot', scopes }));
  open.push(client);
  return { client, tenant };
}

const ids = (items: Json[]) => items.map((m) => m.id as string);

describe('MCP: memory that stays true', () => {
  it('teaches the workflow in the tool descriptions, and takes the validity arguments', async () => {
    const { client } = await bot();
    const tools = Object.fromEntries((await client.listTools()).tools.map((x) => [x.name, x]));
    expect(tools.memory_create!.description).toMatch(/related/);
    expect(tools.memory_create!.description).toMatch(/memory_supersede/);
    expect(tools.memory_create!.description).toMatch(/Similar is not the same fact/);
    expect(tools.memory_supersede!.description).toMatch(/memory_create/);
    expect(tools.memory_history!.description).toMatch(/tombstone/);
    expect(Object.keys(tools.memory_create!.inputSchema.properties!)).toEqual(expect.arrayContaining(['valid_from', 'valid_until', 'supersedes']));
    expect(Object.keys(tools.memory_update!.inputSchema.properties!)).toEqual(expect.arrayContaining(['valid_from', 'valid_until']));
    for (const name of ['memory_search', 'memory_list']) {
      expect(Object.keys(tools[name]!.inputSchema.properties!), name).toEqual(expect.arrayContaining(['as_of', 'include_expired']));
    }
    expect(tools.memory_supersede!.inputSchema.required).toEqual(['id', 'by']);
    expect(tools.memory_history!.inputSchema.required).toEqual(['id']);
  });

  it('create → related → supersede: searches return only the new fact, the past and include_expired still see the old, history shows the chain', async () => {
    const { client } = await bot();
    const friday = (await call(client, 'memory_create', { title: 'Deploy day', content: 'The team deploys the API to production on Fridays' })).memory;
    expect(friday).toMatchObject({ valid_from: friday.created_at, valid_until: null, superseded_by: null, version: 1 });
    await call(client, 'memory_create', { title: 'Lunch', content: 'The canteen serves soup on Mondays' });
    clock.advance(MINUTE);
    const between = clock.now().toISOString();
    clock.advance(MINUTE);

    const created = await call(client, 'memory_create', { title: 'Deploy day', content: 'The team deploys the API to production on Tuesdays' });
    const tuesday = created.memory;
    // The near-duplicate comes back for the agent to judge; nothing was superseded on its own.
    expect(created.related).toEqual([{ id: friday.id, title: 'Deploy day', similarity: expect.any(Number) }]);
    expect(created.related[0].similarity).toBeGreaterThanOrEqual(RELATED_MIN_SIMILARITY);
    expect((await call(client, 'memory_get', { id: friday.id })).memory).toMatchObject({ superseded_by: null, validity: 'valid' });

    const superseded = (await call(client, 'memory_supersede', { id: friday.id, by: tuesday.id.slice(0, 8) })).memory;
    expect(superseded).toMatchObject({ id: friday.id, superseded_by: tuesday.id, valid_until: tuesday.valid_from, validity: 'superseded' });
    // Again by the same memory: nothing changes.
    expect((await call(client, 'memory_supersede', { id: friday.id, by: tuesday.id })).memory).toMatchObject({ superseded_by: tuesday.id });

    for (const mode of ['hybrid', 'semantic', 'keyword']) {
      const now = await call(client, 'memory_search', { query: 'which day does the team deploy to production', mode, threshold: 0 });
      expect(ids(now.results), mode).toContain(tuesday.id);
      expect(ids(now.results), mode).not.toContain(friday.id);
      expect(now.results[0], mode).toMatchObject({ valid_from: expect.any(String), valid_until: null, superseded_by: null });
      expect(now.results[0], mode).not.toHaveProperty('validity');
    }
    const all = await call(client, 'memory_search', { query: 'deploys production', mode: 'keyword', include_expired: true });
    expect(Object.fromEntries(all.results.map((r: Json) => [r.id, r.validity]))).toEqual({ [friday.id]: 'superseded', [tuesday.id]: 'valid' });
    const past = await call(client, 'memory_search', { query: 'deploys production', mode: 'keyword', as_of: between });
    expect(ids(past.results)).toEqual([friday.id]);
    // include_expired as of that moment: the old fact held then, the new one did not yet.
    const pastAll = await call(client, 'memory_search', { query: 'deploys production', mode: 'keyword', as_of: between, include_expired: true });
    expect(Object.fromEntries(pastAll.results.map((r: Json) => [r.id, r.validity]))).toEqual({ [friday.id]: 'valid', [tuesday.id]: 'not_yet_valid' });

    const listed = await call(client, 'memory_list', { sort_order: 'asc' });
    expect(listed.total).toBe(2);
    expect(ids(listed.memories)).not.toContain(friday.id);
    const listedAll = await call(client, 'memory_list', { include_expired: true, sort_order: 'asc' });
    expect(listedAll.memories.map((m: Json) => [m.id, m.validity])).toEqual([
      [friday.id, 'superseded'], [expect.any(String), 'valid'], [tuesday.id, 'valid'],
    ]);
    expect(ids((await call(client, 'memory_list', { as_of: between })).memories).sort()).toEqual(
      listedAll.memories.slice(0, 2).map((m: Json) => m.id).sort());

    // An update keeps the state it replaced; the chain reads both ways.
    clock.advance(MINUTE);
    await call(client, 'memory_update', { id: tuesday.id, content: 'The team deploys the API to production on Tuesdays at 10:00', tags: ['ops'] });
    const history = await call(client, 'memory_history', { id: tuesday.id });
    expect(history).toMatchObject({
      memory: { id: tuesday.id, version: 2, tags: ['ops'] }, tombstone: null, total: 1, limit: 20, offset: 0, has_more: false,
      chain: { supersedes: [{ id: friday.id, title: 'Deploy day', valid_from: friday.valid_from, valid_until: tuesday.valid_from }], superseded_by: [] },
    });
    expect(history.versions).toEqual([expect.objectContaining({
      version: 1, content: 'The team deploys the API to production on Tuesdays', tags: [], written_by: 'bot', replaced_by: 'bot',
      written_at: tuesday.created_at, replaced_at: clock.now().toISOString(),
    })]);
    const back = await call(client, 'memory_history', { id: friday.id });
    expect(back.chain).toEqual({ supersedes: [], superseded_by: [expect.objectContaining({ id: tuesday.id })] });
    expect(back.versions).toEqual([]);
  });

  it('supersedes on create in the same write, bounds validity, reopens it with null, and pages the history', async () => {
    const { client } = await bot();
    const office = (await call(client, 'memory_create', { title: 'Office', content: 'The office is in Leeds' })).memory;
    clock.advance(MINUTE);
    const moved = await call(client, 'memory_create', { title: 'Office', content: 'The office is in York', supersedes: [office.id] });
    // The replaced memory no longer holds, so it is no longer a near-duplicate to look at.
    expect(moved.related).toEqual([]);
    expect((await call(client, 'memory_get', { id: office.id })).memory).toMatchObject({ superseded_by: moved.memory.id, validity: 'superseded' });

    const until = new Date(clock.now().getTime() + MINUTE).toISOString();
    const promo = (await call(client, 'memory_create', { content: 'Spring promo code SPRING10', valid_until: until })).memory;
    expect(promo).toMatchObject({ valid_until: until });
    const later = (await call(client, 'memory_create', { content: 'Summer promo code SUMMER20', valid_from: '2026-07-01T00:00:00Z' })).memory;
    const promos = async (extra: Json = {}) => (await call(client, 'memory_search', { query: 'promo code', mode: 'keyword', ...extra })).results as Json[];
    expect(ids(await promos())).toEqual([promo.id]);
    clock.advance(2 * MINUTE);
    expect(await promos()).toEqual([]);
    expect(Object.fromEntries((await promos({ include_expired: true })).map((r) => [r.id, r.validity])))
      .toEqual({ [promo.id]: 'expired', [later.id]: 'not_yet_valid' });
    expect(ids(await promos({ as_of: '2026-07-02' }))).toEqual([later.id]);
    const reopened = (await call(client, 'memory_update', { id: promo.id, valid_until: null })).memory;
    expect(reopened).toMatchObject({ valid_until: null, version: 2 });
    expect(ids(await promos())).toEqual([promo.id]);

    for (const n of [1, 2, 3]) await call(client, 'memory_update', { id: promo.id, tags: [`t${n}`] });
    const page = await call(client, 'memory_history', { id: promo.id, limit: 2, offset: 1 });
    expect(page).toMatchObject({ total: 4, limit: 2, offset: 1, has_more: true });
    expect(page.versions.map((v: Json) => v.version)).toEqual([3, 2]);
  });

  it('answers a deleted memory\'s history with its tombstone, never its content', async () => {
    const { client } = await bot();
    const m = (await call(client, 'memory_create', { content: 'Locker code 4412' })).memory;
    await call(client, 'memory_update', { id: m.id, content: 'Locker code 9981' });
    await call(client, 'memory_delete', { id: m.id });
    const history = await call(client, 'memory_history', { id: m.id });
    expect(history).toMatchObject({ memory: null, tombstone: { id: m.id, deleted_by: 'bot', reason: 'user_request' }, versions: [], total: 0 });
    expect(JSON.stringify(history)).not.toMatch(/4412|9981/);
  });

  it('refuses bad input with the reason, as tool errors, and the session goes on', async () => {
    const { client } = await bot();
    const other = await bot();
    const a = (await call(client, 'memory_create', { title: 'A', content: 'first fact' })).memory;
    clock.advance(MINUTE);
    const b = (await call(client, 'memory_create', { title: 'B', content: 'second fact', supersedes: [a.id] })).memory;
    clock.advance(MINUTE);
    const c = (await call(client, 'memory_create', { title: 'C', content: 'third fact' })).memory;
    const theirs = (await call(other.client, 'memory_create', { content: 'another tenant\'s fact' })).memory;
    const missing = '00000000-0000-4000-8000-000000000000';
    const field = (name: string, reason?: string) => ({
      code: 'VALIDATION_ERROR', details: { fields: [expect.objectContaining({ field: name, ...(reason ? { reason } : {}) })] },
    });

    expect(await callError(client, 'memory_search', { query: 'fact', as_of: 'yesterday' })).toMatchObject(field('as_of', 'invalid_format'));
    expect(await callError(client, 'memory_list', { as_of: '2026-13-45' })).toMatchObject(field('as_of', 'invalid_format'));
    expect((await callError(client, 'memory_list', { include_expired: 'yes' })).text).toMatch(/include_expired/);
    expect(await callError(client, 'memory_create', { content: 'x', valid_from: 'soon' })).toMatchObject(field('valid_from', 'invalid_format'));
    // Every bad field of a write at once: the core's validation names them.
    expect((await callError(client, 'memory_create', { content: 'x', title: 'T'.repeat(256), valid_from: 'soon' })).details.fields.map((f: Json) => f.field))
      .toEqual(['title', 'valid_from']);
    expect(await callError(client, 'memory_create', { content: 'x', valid_from: '2026-06-02T00:00:00Z', valid_until: '2026-06-01T00:00:00Z' }))
      .toMatchObject(field('valid_until', 'invalid_value'));
    expect(await callError(client, 'memory_create', { content: 'x', supersedes: ['not-an-id'] })).toMatchObject(field('supersedes', 'invalid_format'));
    expect(await callError(client, 'memory_create', { content: 'x', supersedes: [missing] })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await callError(client, 'memory_update', { id: c.id, valid_until: 'never' })).toMatchObject(field('valid_until', 'invalid_format'));

    expect(await callError(client, 'memory_supersede', { id: a.id, by: c.id })).toMatchObject({ code: 'CONFLICT' });
    // The successor must be valid from after the memory it replaces.
    expect(await callError(client, 'memory_supersede', { id: c.id, by: b.id })).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/valid from after/) });
    expect(await callError(client, 'memory_supersede', { id: b.id, by: a.id })).toMatchObject(field('by', 'invalid_value'));
    expect(await callError(client, 'memory_supersede', { id: c.id, by: missing })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await callError(client, 'memory_supersede', { id: c.id, by: 'ffffffff-ff' })).toMatchObject({ code: 'NOT_FOUND', details: { fields: [expect.objectContaining({ field: 'by' })] } });
    expect(await callError(client, 'memory_supersede', { id: c.id, by: theirs.id })).toMatchObject({ code: 'NOT_FOUND' });
    expect(await callError(client, 'memory_supersede', { id: 'abc', by: c.id })).toMatchObject(field('id'));
    expect((await callError(client, 'memory_supersede', { id: c.id })).text).toMatch(/by/);
    expect(await callError(client, 'memory_history', { id: missing })).toEqual({ code: 'NOT_FOUND', message: 'Memory not found', details: { resource: 'memory' } });
    expect(await callError(client, 'memory_history', { id: theirs.id })).toMatchObject({ code: 'NOT_FOUND' });
    expect((await callError(client, 'memory_history', { id: c.id, limit: 0 })).text).toMatch(/limit/);
    // Nothing of the refused calls was written.
    expect((await call(client, 'memory_get', { id: c.id })).memory).toMatchObject({ superseded_by: null, valid_until: null, version: 1 });

    const reader = await bot(['memories:read'], other.tenant);
    expect(await callError(reader.client, 'memory_supersede', { id: c.id, by: b.id })).toMatchObject({
      code: 'PERMISSION_DENIED', details: { requiredScope: 'memories:write' },
    });
    expect((await call(reader.client, 'memory_history', { id: theirs.id })).memory).toMatchObject({ id: theirs.id });
  });
});
