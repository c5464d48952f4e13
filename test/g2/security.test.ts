import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { g2, uuidOf } from './client.ts';

/** An error body without the part that differs per request. */
const stable = (body: Json) => ({ ...body, request_id: undefined });

describe('G2 security: tenants, modes and workspaces never cross', () => {
  let t: TestApp;
  let aliceKey: string;
  let alice: ReturnType<typeof g2>;
  let bob: ReturnType<typeof g2>;
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
    alice = g2(t.app, aliceKey);
    bob = g2(t.app, await t.key({ tenant: bobCo, user: 'bob' }));
  });

  it("answers another tenant's ids (mem_uuid, bare uuid, client id) exactly like missing ones", async () => {
    const generated = json(await alice.create({ text: 'Payroll\nsalary spreadsheet password hunter2' })).id as string;
    await alice.create({ id: 'payroll-2026', text: 'Bonus plan' });
    const named = json(await g1(t.app, aliceKey).list()).data.find((m: Json) => m.title === 'Bonus plan').id as string;
    const theirs = [generated, uuidOf(generated), 'payroll-2026', `mem_${named}`, named];
    const missing = ['mem_00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000', 'payroll-2027'];
    const ops = [
      (id: string) => bob.get(id),
      (id: string) => bob.update(id, { text: 'pwned' }),
      (id: string) => bob.update(id, { metadata: { tags: ['pwned'] } }),
      (id: string) => bob.delete(id),
    ];
    const reference = stable(json(await bob.get(missing[0]!)));
    expect(reference).toMatchObject({ error: 'NOT_FOUND', details: {} });
    for (const op of ops) {
      for (const id of [...theirs, ...missing]) {
        const res = await op(id);
        expect(res.statusCode, id).toBe(404);
        expect(stable(json(res)), id).toEqual(reference);
        expect(res.body).not.toContain('alice');
      }
    }
    // Alice's memories are untouched.
    expect(json(await alice.get(generated))).toMatchObject({ text: 'Payroll\nsalary spreadsheet password hunter2', metadata: { tags: [] } });
    expect(json(await alice.get('payroll-2026')).text).toBe('Bonus plan');
  });

  it('keeps the same client id in two tenants as two different memories', async () => {
    expect((await alice.create({ id: 'shared-id', text: 'alice text', metadata: { tags: ['a'] } })).statusCode).toBe(201);
    expect((await bob.create({ id: 'shared-id', text: 'bob text' })).statusCode).toBe(201);
    expect(json(await alice.get('shared-id'))).toMatchObject({ id: 'shared-id', text: 'alice text', metadata: { tags: ['a'] } });
    expect(json(await bob.get('shared-id'))).toMatchObject({ id: 'shared-id', text: 'bob text', metadata: { tags: [] } });
    await bob.update('shared-id', { text: 'bob changed' });
    await bob.delete('shared-id');
    expect(json(await alice.get('shared-id')).text).toBe('alice text');
    expect((await bob.get('shared-id')).statusCode).toBe(404);
  });

  it('keeps workspaces apart (X-Workspace-ID)', async () => {
    const ws1 = g2(t.app, aliceKey, { 'x-workspace-id': 'ws-1' });
    const ws2 = g2(t.app, aliceKey, { 'x-workspace-id': 'ws-2' });
    const generated = json(await ws1.create({ text: 'in ws1 only' })).id as string;
    await ws1.create({ id: 'ws-note', text: 'ws1 note' });
    for (const id of [generated, uuidOf(generated), 'ws-note']) {
      expect((await ws2.get(id)).statusCode, id).toBe(404);
      expect((await alice.get(id)).statusCode, id).toBe(404);
      expect((await ws2.delete(id)).statusCode, id).toBe(404);
    }
    // The same client id is free in another workspace.
    expect((await ws2.create({ id: 'ws-note', text: 'ws2 note' })).statusCode).toBe(201);
    expect(json(await ws1.get('ws-note')).text).toBe('ws1 note');
    expect(json(await ws2.get('ws-note')).text).toBe('ws2 note');
    expect(json(await g1(t.app, aliceKey, { 'x-workspace-id': 'ws-1' }).list()).pagination.total).toBe(2);
    expect(json(await g1(t.app, aliceKey).list()).pagination.total).toBe(0);

    const bad = await g2(t.app, aliceKey, { 'x-workspace-id': '../etc' }).create({ text: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).details.invalid_fields).toEqual([{ field: 'X-Workspace-ID', message: expect.any(String) }]);
    expect((await g2(t.app, aliceKey, { 'x-workspace-id': '../etc' }).get('ws-note')).statusCode).toBe(400);
  });

  it('keeps test-mode data apart from live data of the same tenant', async () => {
    const test = g2(t.app, await t.key({ tenant: aliceCo, mode: 'test' }));
    const live = json(await alice.create({ id: 'same', text: 'production note' })).id as string;
    const liveGenerated = json(await alice.create({ text: 'live generated' })).id as string;
    expect((await test.get(live)).statusCode).toBe(404);
    expect((await test.get(liveGenerated)).statusCode).toBe(404);
    expect((await test.get(uuidOf(liveGenerated))).statusCode).toBe(404);
    expect((await test.create({ id: 'same', text: 'sandbox note' })).statusCode).toBe(201);
    expect(json(await test.get('same')).text).toBe('sandbox note');
    expect(json(await alice.get('same')).text).toBe('production note');
    expect((await test.delete(liveGenerated)).statusCode).toBe(404);
    expect((await alice.get(liveGenerated)).statusCode).toBe(200);
  });

  it('treats hostile ids and text as data, and never echoes key material', async () => {
    const hostile = "x' OR '1'='1";
    const res = await alice.create({ text: `${hostile}\n"; DROP TABLE memories; --`, metadata: { tags: [hostile], [hostile]: hostile } });
    expect(res.statusCode).toBe(201);
    expect(json(await alice.get(json(res).id)).metadata).toMatchObject({ tags: [hostile], [hostile]: hostile });
    expect((await alice.get("abc' OR 1=1 --")).statusCode).toBe(404);
    expect((await alice.get('%')).statusCode).toBe(404);
    expect((await alice.get('*')).statusCode).toBe(404);
    expect(res.body).not.toContain(aliceKey);
    const unauthorized = await g2(t.app, `${aliceKey}x`).get('x');
    expect(unauthorized.statusCode).toBe(401);
    expect(unauthorized.body).not.toContain(aliceKey);
  });
});
