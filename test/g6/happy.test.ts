import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { batchClient } from './client.ts';

describe('G6 batch: happy paths', () => {
  let t: TestApp;
  let key: string;
  let batch: ReturnType<typeof batchClient>;
  let memories: ReturnType<typeof g1>;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    key = await t.freshTenant();
    batch = batchClient(t.app, key);
    memories = g1(t.app, key);
  });

  it('runs a mixed batch in input order with a summary, and answers the batch id', async () => {
    const existing = json(await memories.create({ title: 'Old', content: 'old content about gardening' })).data;
    const gone = json(await memories.create({ title: 'Gone', content: 'to be deleted' })).data;
    const res = await batch({
      operations: [
        { type: 'create', data: { content: 'First line becomes the title\nrest of the note about gardening', metadata: { source: 'batch' }, tags: ['b'] } },
        { type: 'read', id: existing.id },
        { type: 'update', id: existing.id, data: { content: 'new content about gardening tools', metadata: { v: 2 } } },
        { type: 'delete', id: gone.id.slice(0, 8) },
        { type: 'search', query: 'gardening', options: { limit: 5, filters: { tags: ['b'] }, threshold: 0 } },
      ],
    }, { 'x-batch-id': 'trace-42' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-batch-id']).toBe('trace-42');
    const data = json(res).data;
    expect(data).toMatchObject({ batch_id: 'trace-42', processed: 5, failed: 0, total: 5, summary: { creates: 1, reads: 1, updates: 1, deletes: 1, searches: 1 } });
    expect(typeof data.execution_time).toBe('number');
    expect(data.operations.map((o: Json) => [o.index, o.type, o.status])).toEqual([
      [0, 'create', 'success'], [1, 'read', 'success'], [2, 'update', 'success'], [3, 'delete', 'success'], [4, 'search', 'success']]);
    const [created, read, updated, deleted, searched] = data.operations;
    expect(Object.keys(created.result).sort()).toEqual(['created_at', 'id']);
    expect(read.result).toMatchObject({ id: existing.id, content: 'old content about gardening', access_count: 1 });
    expect(updated.result).toMatchObject({ id: existing.id });
    expect(deleted.result).toMatchObject({ id: gone.id });
    expect(searched.result.results.map((r: Json) => r.id)).toEqual([created.result.id]);
    expect(searched.result.total).toBe(1);
    expect(Object.keys(searched.result.results[0]).sort()).toEqual(['content', 'id', 'score']);

    const made = json(await memories.get(created.result.id)).data;
    expect(made).toMatchObject({ title: 'First line becomes the title', tags: ['b'], metadata: { source: 'batch' } });
    expect(json(await memories.get(existing.id)).data).toMatchObject({ content: 'new content about gardening tools', metadata: { v: 2 } });
    expect((await memories.get(gone.id)).statusCode).toBe(404);
  });

  it('generates a batch id when none is given', async () => {
    const data = json(await batch({ operations: [{ type: 'create', data: { content: 'x' } }] })).data;
    expect(data.batch_id).toMatch(/^batch_/);
  });

  it('keeps input order for a large parallel batch', async () => {
    const operations = Array.from({ length: 100 }, (_, i) => ({ type: 'create', data: { content: `note number ${i}` } }));
    const res = await batch({ operations, options: { continue_on_error: true, parallel: true } });
    expect(res.statusCode).toBe(200);
    const ops = json(res).data.operations as Json[];
    expect(ops.map((o) => o.index)).toEqual(operations.map((_, i) => i));
    for (const [i, o] of ops.entries()) {
      expect(json(await memories.get(o.result.id)).data.content).toBe(`note number ${i}`);
    }
  });

  it('validate_only checks every operation and runs none', async () => {
    const { id } = json(await memories.create({ title: 't', content: 'c' })).data;
    const res = await batch({
      operations: [
        { type: 'create', data: { content: 'would be created' } },
        { type: 'delete', id },
        { type: 'update', id: '00000000-0000-4000-8000-000000000000', data: { content: 'x' } },
        { type: 'create', data: {} },
      ],
      options: { validate_only: true },
    });
    expect(res.statusCode).toBe(207);
    const ops = json(res).data.operations as Json[];
    expect(ops.map((o) => o.status)).toEqual(['success', 'success', 'failed', 'failed']);
    expect(ops[0]!.result).toEqual({ valid: true });
    expect(ops[2]!.error.code).toBe('MEMORY_NOT_FOUND');
    expect(ops[3]!.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'data.content' }] } });
    expect(json(await memories.list()).pagination.total).toBe(1);
    expect((await memories.get(id)).statusCode).toBe(200);
  });

  it('atomic: all writes commit together', async () => {
    const { id } = json(await memories.create({ title: 't', content: 'keep me' })).data;
    const res = await batch({
      operations: [
        { type: 'create', data: { content: 'atomic one' } },
        { type: 'create', data: { content: 'atomic two' } },
        { type: 'update', id, data: { content: 'changed atomically' } },
        { type: 'read', id },
      ],
      options: { atomic: true },
    });
    expect(res.statusCode).toBe(200);
    const ops = json(res).data.operations as Json[];
    expect(ops[3]!.result.content).toBe('changed atomically');
    expect(json(await memories.list()).pagination.total).toBe(3);
    // The vectors were committed too: the new memories are searchable.
    const found = json(await memories.search({ query: 'atomic two', threshold: 0.8 })).data;
    expect(found.results.map((r: Json) => r.id)).toContain(ops[1]!.result.id);
  });
});
