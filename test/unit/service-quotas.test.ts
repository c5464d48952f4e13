import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import { DEFAULT_G5_MODEL_DIMENSIONS } from '../../src/core/embeddings/embedding.service.ts';
import { isDomainError } from '../../src/core/errors.ts';
import type { Scope } from '../../src/core/scope.ts';
import { actorIn } from '../support/fixtures.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** Issue 9, point 6: quotas are counted inside the services, so no caller of a service can skip them. */
describe('quotas inside the services', () => {
  let t: TestApp;
  let tenant = 0;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(async () => { await t.close(); });

  /** A free-tier caller of a fresh tenant (100 memory writes and 1000 embedding requests an hour). */
  function freeCaller(): { scope: Scope; caller: Principal } {
    const scope: Scope = { tenantId: `quota-${++tenant}`, mode: 'live', workspace: 'default' };
    return { scope, caller: { ...actorIn(scope), keyId: `quota-key-${tenant}`, tier: 'free' } };
  }

  async function codeOf(work: Promise<unknown>): Promise<string> {
    try {
      await work;
      return 'no error';
    } catch (err) {
      return isDomainError(err) ? err.code : String(err);
    }
  }

  it('MemoryService counts every create, update and delete; past the quota it refuses and writes nothing', async () => {
    const { scope, caller } = freeCaller();
    const m = await t.container.memories.create(scope, caller, { title: 'kept', content: 'as it was' });
    // The write above was the first of 100; spend the other 99 (what the service counts against).
    let last = await t.container.limits.memoryWrite(caller);
    while (last && last.remaining > 0) last = await t.container.limits.memoryWrite(caller);
    expect(last?.remaining).toBe(0);

    expect(await codeOf(t.container.memories.create(scope, caller, { title: 'new', content: 'never stored' }))).toBe('QUOTA_EXCEEDED');
    expect(await codeOf(t.container.memories.update(scope, caller, m.id, { content: 'changed' }))).toBe('QUOTA_EXCEEDED');
    expect(await codeOf(t.container.memories.delete(scope, caller, m.id))).toBe('QUOTA_EXCEEDED');
    expect(await codeOf(t.container.memories.updateByLegacyId(scope, caller, `mem_${m.id}`, { patch: {} }))).toBe('QUOTA_EXCEEDED');

    const { items } = await t.container.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'desc' });
    expect(items.map((i) => [i.id, i.content])).toEqual([[m.id, 'as it was']]);
  });

  it('a G6 batch counts each write once (the batch service does not count again what the memory service counts)', async () => {
    const key = await t.key({ tenant: `batch-${++tenant}`, tier: 'free' });
    const caller = await t.container.apiKeys.authenticate(key);
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/batch', headers: { authorization: `Bearer ${key}` },
      payload: { operations: [{ type: 'create', data: { title: 'a', content: 'one' } }, { type: 'create', data: { title: 'b', content: 'two' } }] },
    });
    expect(res.statusCode).toBe(200);
    // Two writes, then this hit: 100 - 3 left.
    expect((await t.container.limits.memoryWrite(caller))?.remaining).toBe(97);
  });

  it('EmbeddingService counts every embedding request; past the limit it refuses', async () => {
    const { caller } = freeCaller();
    const model = t.container.embeddings.resolveModel(undefined, DEFAULT_G5_MODEL_DIMENSIONS);
    const first = await t.container.embeddings.embed(caller, ['counted'], model);
    expect(first.vectors).toHaveLength(1);
    let last = await t.container.limits.embeddings(caller);
    // The embed above was the first request of the hour: this hit is the second.
    expect(last?.remaining).toBe(last!.limit - 2);
    while (last && last.remaining > 0) last = await t.container.limits.embeddings(caller);
    expect(await codeOf(t.container.embeddings.embed(caller, ['refused'], model))).toBe('RATE_LIMITED');
  });
});
