import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, uniqueTenant, type Json, type TestApp } from '../support/test-app.ts';
import { batchClient } from './client.ts';

describe('G6 batch: security', () => {
  let t: TestApp;
  let aliceTenant: string, malloryTenant: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.freshTenant();
    aliceTenant = uniqueTenant('alice');
    malloryTenant = uniqueTenant('mallory');
  });

  it("never reads, changes, deletes or finds another tenant's memories", async () => {
    const alice = await t.key({ tenant: aliceTenant });
    const secret = json(await g1(t.app, alice).create({ title: 'secret', content: 'the vault code is 1234' })).data;
    const mallory = batchClient(t.app, await t.key({ tenant: malloryTenant }));
    for (const atomic of [false, true]) {
      const res = await mallory({
        operations: [
          { type: 'read', id: secret.id },
          { type: 'update', id: secret.id, data: { content: 'pwned' } },
          { type: 'delete', id: secret.id.slice(0, 8) },
        ],
        options: { continue_on_error: true, atomic },
      });
      const codes = json(res).data.operations.map((o: Json) => o.error.code);
      expect(codes).toContain('MEMORY_NOT_FOUND');
      expect(codes.every((c: string) => ['MEMORY_NOT_FOUND', 'ROLLED_BACK'].includes(c))).toBe(true);
    }
    const search = json(await mallory({ operations: [{ type: 'search', query: 'vault code', options: { threshold: 0 } }] })).data;
    expect(search.operations[0].result).toEqual({ results: [], total: 0 });
    expect(json(await g1(t.app, alice).get(secret.id)).data.content).toBe('the vault code is 1234');
  });

  it('writes into the caller workspace and test mode only', async () => {
    const key = await t.key({ tenant: t.tenant });
    const res = await batchClient(t.app, key, { 'x-workspace-id': 'ws-9' })({ operations: [{ type: 'create', data: { content: 'in ws-9' } }] });
    const id = json(res).data.operations[0].result.id;
    expect((await g1(t.app, key).get(id)).statusCode).toBe(404);
    expect((await g1(t.app, key, { 'x-workspace-id': 'ws-9' }).get(id)).statusCode).toBe(200);
    const testKey = await t.key({ tenant: t.tenant, mode: 'test' });
    expect((await g1(t.app, testKey, { 'x-workspace-id': 'ws-9' }).get(id)).statusCode).toBe(404);
  });
});
