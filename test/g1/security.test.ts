import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeMemory } from '../support/fixtures.ts';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';

/** An error body without the parts that differ per request. */
const stable = (body: Json) => ({ ...body, error: { ...body.error, request_id: undefined, timestamp: undefined } });

describe('G1 security: tenants, modes and workspaces never cross', () => {
  let t: TestApp;
  let alice: ReturnType<typeof g1>;
  let bob: ReturnType<typeof g1>;
  let aliceCo: string, bobCo: string, carolCo: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    aliceCo = uniqueTenant('alice-co');
    bobCo = uniqueTenant('bob-co');
    carolCo = uniqueTenant('carol-co');
    alice = g1(t.app, await t.key({ tenant: aliceCo, user: 'alice' }));
    bob = g1(t.app, await t.key({ tenant: bobCo, user: 'bob' }));
  });


  it("answers another tenant's id exactly like a missing one, on every operation", async () => {
    const secret = json(await alice.create({ title: 'Payroll', content: 'salary spreadsheet password hunter2', tags: ['hr'] })).data;
    const missing = '00000000-0000-4000-8000-000000000000';
    const pairs: [Json, Json][] = [];
    for (const [op, run] of [
      ['get', (id: string) => bob.get(id)],
      ['get by prefix', (id: string) => bob.get(id.slice(0, 8))],
      ['update', (id: string) => bob.update(id, { title: 'pwned' })],
      ['delete', (id: string) => bob.delete(id)],
    ] as const) {
      const theirs = await run(secret.id);
      const none = await run(missing);
      expect(theirs.statusCode, op).toBe(404);
      expect(none.statusCode, op).toBe(404);
      pairs.push([stable(json(theirs)), stable(json(none))]);
    }
    for (const [theirs, none] of pairs) expect(theirs).toEqual(none);

    expect(json(await bob.list()).pagination.total).toBe(0);
    expect(json(await bob.list('tags=hr')).data).toEqual([]);
    const search = json(await bob.search({ query: 'salary spreadsheet password', threshold: 0 })).data;
    expect(search).toMatchObject({ results: [], total: 0 });

    // Alice's memory is untouched by all of it.
    const mine = json(await alice.get(secret.id)).data;
    expect(mine).toMatchObject({ title: 'Payroll', access_count: 1 });
  });

  it('resolves prefixes and ambiguity within the caller scope only', async () => {
    const scope = (tenantId: string) => ({ tenantId, mode: 'live' as const, workspace: 'default' });
    const insert = async (tenantId: string, id: string) => {
      await t.container.storage.memories.insert(makeMemory(scope(tenantId), { id, title: `${tenantId} ${id}` }), { modelId: t.container.embedder.modelId, vector: new Float32Array(t.container.embedder.dimensions) });
    };
    await insert(aliceCo, 'cafe0001-0000-4000-8000-00000000000a');
    await insert(aliceCo, 'cafe0001-0000-4000-8000-00000000000b');
    await insert(bobCo, 'cafe0001-0000-4000-8000-00000000000c');

    // Bob has one match: no ambiguity, and it is his.
    expect(json(await bob.get('cafe0001')).data.id).toBe('cafe0001-0000-4000-8000-00000000000c');
    // Alice has two: ambiguous, and the answer names only her ids.
    const res = await alice.get('cafe0001');
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('00000000000a');
    expect(res.body).toContain('00000000000b');
    expect(res.body).not.toContain('00000000000c');
  });

  it('keeps test-mode data apart from live data of the same tenant', async () => {
    const live = alice;
    const test = g1(t.app, await t.key({ tenant: aliceCo, mode: 'test' }));
    const liveMemory = json(await live.create({ title: 'live', content: 'production note' })).data;
    const testMemory = json(await test.create({ title: 'test', content: 'sandbox note' })).data;
    expect((await test.get(liveMemory.id)).statusCode).toBe(404);
    expect((await live.get(testMemory.id)).statusCode).toBe(404);
    expect(json(await test.list()).data.map((m: Json) => m.title)).toEqual(['test']);
    expect(json(await live.list()).data.map((m: Json) => m.title)).toEqual(['live']);
    expect(json(await test.search({ query: 'production note', threshold: 0 })).data.results.map((r: Json) => r.title)).toEqual(['test']);
  });

  it('keeps workspaces apart (X-Workspace-ID)', async () => {
    const key = await t.key({ tenant: aliceCo });
    const ws1 = g1(t.app, key, { 'x-workspace-id': 'ws-1' });
    const ws2 = g1(t.app, key, { 'x-workspace-id': 'ws-2' });
    const m = json(await ws1.create({ title: 'in ws1', content: 'only here' })).data;
    expect((await ws2.get(m.id)).statusCode).toBe(404);
    expect(json(await ws2.list()).pagination.total).toBe(0);
    expect(json(await alice.list()).pagination.total).toBe(0);
    expect(json(await ws1.list()).pagination.total).toBe(1);
    const bad = await g1(t.app, key, { 'x-workspace-id': '../etc' }).list();
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.details[0].field).toBe('X-Workspace-ID');
  });

  it('treats hostile strings as data, not code', async () => {
    const hostile = "x' OR '1'='1";
    const m = json(await alice.create({ title: hostile, content: '"; DROP TABLE memories; --', tags: [hostile], metadata: { [hostile]: hostile } })).data;
    expect(json(await alice.get(m.id)).data).toMatchObject({ title: hostile, tags: [hostile] });
    expect(json(await bob.list(`type=${encodeURIComponent(hostile)}`)).pagination.total).toBe(0);
    expect(json(await bob.list(`tags=${encodeURIComponent(hostile)}`)).pagination.total).toBe(0);
    expect(json(await alice.list(`tags=${encodeURIComponent(hostile)}`)).pagination.total).toBe(1);
    expect((await alice.get("cafe0001' OR 1=1 --")).statusCode).toBe(404);
    expect((await alice.list('sortBy=created_at;DROP')).statusCode).toBe(400);
  });

  it('never stores or returns key material', async () => {
    const key = await t.key({ tenant: carolCo });
    const [record] = await t.container.apiKeys.list(carolCo);
    expect(JSON.stringify(record)).not.toContain(key);
    expect(record!.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(key.startsWith(record!.displayPrefix)).toBe(true);
    const res = await g1(t.app, key).create({ title: 't', content: 'c' });
    expect(res.body).not.toContain(key);
  });
});
