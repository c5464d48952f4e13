import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { expectG3Error, fieldsOf, g3, ids } from './client.ts';

/** Every id any G3 endpoint returns for `query` (threshold 0, so anything in scope would show). */
async function everythingVisible(api: ReturnType<typeof g3>, query: string, extra: object = {}): Promise<string[]> {
  const search = json(await api.search({ query, threshold: 0, topK: 100, ...extra }));
  const hybrid = json(await api.hybrid({ query, topK: 100, ...extra }));
  const hybridSum = json(await api.hybrid({ query, topK: 100, rerank: false, semanticWeight: 0, keywordWeight: 1, ...extra }));
  const batch = json(await api.batch({ searches: [{ query, threshold: 0, topK: 100 }, { query: 'anything at all', threshold: 0 }], ...extra }));
  for (const body of [search, hybrid, hybridSum, batch]) expect(body.error, JSON.stringify(body.error)).toBeUndefined();
  return [...new Set([
    ...ids(search.matches), ...ids(hybrid.matches), ...ids(hybridSum.matches),
    ...batch.results.flatMap((r: Json) => ids(r.matches)),
  ])].sort();
}

describe('G3 security: tenants, modes and workspaces never cross', () => {
  let t: TestApp;
  let aliceKey: string;
  let alice: ReturnType<typeof g3>;
  let bob: ReturnType<typeof g3>;
  const write = async (key: string, body: object, headers: Record<string, string> = {}) => {
    const res = await g1(t.app, key, headers).create(body);
    expect(res.statusCode).toBe(201);
    return json(res).data.id as string;
  };

  let aliceCo: string, bobCo: string;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.freshTenant();
    aliceCo = uniqueTenant('alice-co');
    bobCo = uniqueTenant('bob-co');
    aliceKey = await t.key({ tenant: aliceCo, user: 'alice' });
    alice = g3(t.app, aliceKey);
    bob = g3(t.app, await t.key({ tenant: bobCo, user: 'bob' }));
  });

  it("never shows another tenant's memories in search, hybrid or batch results", async () => {
    const secret = await write(aliceKey, { title: 'Payroll', content: 'salary spreadsheet password hunter2 zqxv42', tags: ['hr'], metadata: { dept: 'hr' } });
    const bobKey = await t.key({ tenant: bobCo, user: 'bob2' });
    const bobs = await write(bobKey, { title: 'Bob note', content: 'salary talk' });

    expect(await everythingVisible(alice, 'salary spreadsheet password hunter2 zqxv42')).toEqual([secret]);
    expect(await everythingVisible(bob, 'salary spreadsheet password hunter2 zqxv42')).toEqual([bobs]);
    expect(await everythingVisible(bob, 'zqxv42', { namespace: 'default' })).toEqual([bobs]);
    for (const filters of [{ tags: ['hr'] }, { dept: 'hr' }, { tags: { $all: ['hr'] } }]) {
      expect(json(await bob.search({ query: 'salary spreadsheet', threshold: 0, filters })).matches).toEqual([]);
      expect(json(await bob.hybrid({ query: 'salary spreadsheet', filters })).matches).toEqual([]);
      expect(json(await alice.search({ query: 'salary spreadsheet', threshold: 0, filters })).matches).toHaveLength(1);
    }
    // The keyword leg is scoped too: bob's hybrid sees only his own keyword hit count.
    expect(json(await bob.hybrid({ query: 'zqxv42' })).keyword_results).toBe(0);
    expect(json(await alice.hybrid({ query: 'zqxv42' })).keyword_results).toBe(1);
  });

  it("keeps each tenant's search log to itself", async () => {
    await alice.search({ query: 'merger with initech' });
    await t.container.search.flushLog(); // the search log is written in batches
    const scope = (tenantId: string) => ({ tenantId, mode: 'live' as const, workspace: 'default' });
    expect(await t.container.storage.searchLog.suggestQueries(scope(aliceCo), 'merger', 10)).toEqual([{ text: 'merger with initech', frequency: 1 }]);
    expect(await t.container.storage.searchLog.suggestQueries(scope(bobCo), 'merger', 10)).toEqual([]);
  });

  it('keeps test-mode data apart from live data of the same tenant', async () => {
    const testKey = await t.key({ tenant: aliceCo, mode: 'test' });
    const live = await write(aliceKey, { title: 'live', content: 'production note zqxv42' });
    const sandbox = await write(testKey, { title: 'test', content: 'sandbox note zqxv42' });
    expect(await everythingVisible(g3(t.app, testKey), 'production note zqxv42')).toEqual([sandbox]);
    expect(await everythingVisible(alice, 'sandbox note zqxv42')).toEqual([live]);
  });

  it('keeps workspaces apart, whether named by namespace or by X-Workspace-ID', async () => {
    const ws1 = await write(aliceKey, { title: 'in ws1', content: 'roadmap zqxv42' }, { 'x-workspace-id': 'ws-1' });
    const ws2 = await write(aliceKey, { title: 'in ws2', content: 'roadmap zqxv42' }, { 'x-workspace-id': 'ws-2' });
    const dflt = await write(aliceKey, { title: 'in default', content: 'roadmap zqxv42' });
    expect(await everythingVisible(alice, 'roadmap zqxv42')).toEqual([dflt]);
    expect(await everythingVisible(alice, 'roadmap zqxv42', { namespace: 'ws-1' })).toEqual([ws1]);
    expect(await everythingVisible(g3(t.app, aliceKey, { 'x-workspace-id': 'ws-2' }), 'roadmap zqxv42')).toEqual([ws2]);
    expect(await everythingVisible(alice, 'roadmap zqxv42', { namespace: 'WS-1' })).toEqual([]);
    // The same workspace name in another tenant is another workspace.
    expect(await everythingVisible(bob, 'roadmap zqxv42', { namespace: 'ws-1' })).toEqual([]);

    // A header and a namespace that disagree are refused, never resolved one way or the other.
    const both = g3(t.app, aliceKey, { 'x-workspace-id': 'ws-2' });
    for (const res of [
      await both.search({ query: 'roadmap', namespace: 'ws-1' }),
      await both.hybrid({ query: 'roadmap', namespace: 'ws-1' }),
      await both.batch({ searches: [{ query: 'roadmap' }], namespace: 'ws-1' }),
    ]) {
      const e = expectG3Error(res, 400, 'VALIDATION_ERROR');
      expect(fieldsOf(e)).toEqual(['namespace']);
      expect(e.details[0]!.message).toMatch(/X-Workspace-ID/);
    }
  });

  it('refuses workspace names that are not identifiers', async () => {
    for (const bad of ['../etc', 'a b', '', '-x', 'x'.repeat(65), "ws' OR '1'='1"]) {
      const e = expectG3Error(await alice.search({ query: 'q', namespace: bad }), 400, 'VALIDATION_ERROR');
      expect(fieldsOf(e)).toEqual(['namespace']);
    }
    const header = expectG3Error(await g3(t.app, aliceKey, { 'x-workspace-id': '../etc' }).hybrid({ query: 'q' }), 400, 'VALIDATION_ERROR');
    expect(fieldsOf(header)).toEqual(['X-Workspace-ID']);
  });

  it('treats hostile query and filter values as data', async () => {
    const hostile = "x' OR '1'='1";
    const mine = await write(aliceKey, { title: hostile, content: '"; DROP TABLE memories; --', tags: [hostile], metadata: { k: hostile } });
    expect(ids(json(await alice.search({ query: hostile, threshold: 0, filters: { tags: [hostile], k: hostile } })).matches)).toEqual([mine]);
    expect(json(await bob.search({ query: hostile, threshold: 0, filters: { tags: [hostile] } })).matches).toEqual([]);
    expect(json(await bob.hybrid({ query: '"; DROP TABLE memories; --' })).matches).toEqual([]);
    expect(json(await bob.hybrid({ query: 'NEAR( OR AND * "' })).matches).toEqual([]);
    expect(ids(json(await alice.hybrid({ query: 'DROP TABLE memories' })).matches)).toEqual([mine]);
  });

  it('never echoes the key', async () => {
    const res = await alice.search({ query: 'q' });
    expect(res.body).not.toContain(aliceKey);
    const err = await g3(t.app, `${aliceKey}x`).search({ query: 'q' });
    expect(err.statusCode).toBe(401);
    expect(err.body).not.toContain(aliceKey);
  });
});
