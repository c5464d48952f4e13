import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingError, type Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { makeMemory } from '../support/fixtures.ts';
import { createServices, freshScope, actor, rejection, type Services } from './support.ts';

/** The error a promise rejects with (fails the test when it resolves). */

describe('MemoryService', () => {
  let s: Services;
  beforeAll(() => { s = createServices(); });
  afterAll(() => s.close());

  describe('create', () => {
    it('stores the memory with normalised tags, the default type, the clock time and an embedding', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'Deploy notes', content: 'Roll out on Tuesdays', tags: [' ops ', 'ops', 'deploy'] });
      expect(m.tags).toEqual(['ops', 'deploy']);
      expect(m.memoryType).toBe('context');
      expect(m.createdAt.getTime()).toBe(s.clock.now().getTime());
      expect(m).toMatchObject({ createdBy: 'alice', updatedBy: 'alice', accessCount: 0, lastAccessed: null, topicId: null });
      expect(await s.storage.memories.findById(scope, m.id)).toEqual(m);
      // The stored vector is the embedding of title + content: a search with that text finds it at similarity 1.
      const vectors = await s.storage.memories.vectorsOf(scope, [m.id], s.embedder.modelId);
      const [expected] = await s.embedder.embed([s.memories.embeddingText(m.title, m.content)]);
      expect([...vectors.get(m.id)!]).toEqual([...expected!]);
    });

    it('writes memory.created and embedding.generated in the same commit, but no embedding event for a supplied vector', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C' });
      const events = await s.eventsOf(scope);
      expect(events.map((e) => e.type)).toEqual(['memory.created', 'embedding.generated']);
      expect(events[0]!.data).toMatchObject({ id: m.id, title: 'T', created_by: 'alice' });
      expect(events[1]!.data).toMatchObject({ memory_id: m.id, model: s.embedder.modelId, trigger: 'memory.created' });

      const supplied = new Float32Array(s.embedder.dimensions).fill(0.1);
      const other = freshScope();
      await s.memories.create(other, actor(other, 'alice'), { title: 'T', content: 'C', vector: { modelId: s.embedder.modelId, vector: supplied } });
      expect((await s.eventsOf(other)).map((e) => e.type)).toEqual(['memory.created']);
    });

    it('rejects bad fields all at once and writes nothing', async () => {
      const scope = freshScope();
      const e = await rejection(s.memories.create(scope, actor(scope, 'alice'), {
        title: ' ', content: '', memoryType: 'Not A Type', tags: ['ok', ''], topicId: 'not-a-uuid', clientId: '!bad',
      }));
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(e.details.fields!.map((f) => f.field).sort()).toEqual(['content', 'id', 'memory_type', 'tags[1]', 'title', 'topic_id']);
      expect((await s.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'desc' })).total).toBe(0);
      expect(await s.eventsOf(scope)).toEqual([]);
    });

    it('answers CONTENT_TOO_LARGE past the byte limit (UTF-8 bytes, not characters)', async () => {
      const small = createServices({ maxContentBytes: 10 });
      try {
        const scope = freshScope();
        await expect(small.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'é'.repeat(5) })).resolves.toBeDefined(); // 10 bytes
        const e = await rejection(small.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'é'.repeat(6) }));
        expect(e.code).toBe('CONTENT_TOO_LARGE');
        expect(e.details.maxBytes).toBe(10);
      } finally {
        await small.close();
      }
    });

    it('accepts a topic of the same scope only', async () => {
      const scope = freshScope();
      const topic = await s.topics.create(scope, 'alice', { name: 'Ops' });
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C', topicId: topic.id.toUpperCase() });
      expect(m.topicId).toBe(topic.id);
      const elsewhere = freshScope();
      const e = await rejection(s.memories.create(elsewhere, actor(elsewhere, 'alice'), { title: 'T', content: 'C', topicId: topic.id }));
      expect(e.code).toBe('VALIDATION_FAILED');
      expect(e.details.fields).toEqual([{ field: 'topic_id', reason: 'not_found', message: 'no such topic' }]);
    });

    it('writes nothing when the embedder fails, and says EMBEDDING_FAILED', async () => {
      const failing: Embedder = { modelId: 'broken', dimensions: 4, embed: async () => { throw new EmbeddingError('model offline'); }, close: async () => {} };
      const broken = createServices({ embedder: failing });
      try {
        const scope = freshScope();
        const e = await rejection(broken.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'C' }));
        expect(e.code).toBe('EMBEDDING_FAILED');
        expect(e.message).toContain('model offline');
        expect((await broken.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'desc' })).total).toBe(0);
      } finally {
        await broken.close();
      }
    });
  });

  describe('get by id or prefix', () => {
    const storeWithIds = async (scope: ReturnType<typeof freshScope>, ids: string[]) => {
      for (const id of ids) {
        await s.storage.memories.insert(makeMemory(scope, { id, title: id }), { modelId: s.embedder.modelId, vector: new Float32Array(s.embedder.dimensions) });
      }
    };

    it('finds by full id (any case) or by a unique prefix of at least 8 characters, counting each access', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C' });
      s.clock.advance(5000);
      const byId = await s.memories.get(scope, m.id.toUpperCase());
      expect(byId.id).toBe(m.id);
      expect(byId.accessCount).toBe(1);
      expect(byId.lastAccessed!.getTime()).toBe(s.clock.now().getTime());
      const byPrefix = await s.memories.get(scope, ` ${m.id.slice(0, 8)} `);
      expect(byPrefix.accessCount).toBe(2);
      // find() reads without counting.
      expect((await s.memories.find(scope, m.id.slice(0, 12))).accessCount).toBe(2);
    });

    it('refuses a prefix shorter than 8 characters, and treats non-hex text as not found', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C' });
      const short = await rejection(s.memories.get(scope, m.id.slice(0, 7)));
      expect(short.code).toBe('VALIDATION_FAILED');
      expect(short.details.fields![0]!.field).toBe('id');
      expect((await rejection(s.memories.get(scope, 'zzzzzzzzzz'))).code).toBe('NOT_FOUND');
      expect((await rejection(s.memories.get(scope, `${m.id}0`))).code).toBe('NOT_FOUND');
    });

    it('answers AMBIGUOUS_ID listing only the candidates of the caller\'s scope', async () => {
      const scope = freshScope();
      const other = freshScope();
      const mine = ['abcdef01-0000-4000-8000-000000000001', 'abcdef01-0000-4000-8000-000000000002'];
      await storeWithIds(scope, mine);
      await storeWithIds(other, ['abcdef01-0000-4000-8000-000000000003']);
      const e = await rejection(s.memories.get(scope, 'abcdef01'));
      expect(e.code).toBe('AMBIGUOUS_ID');
      expect([...(e.details.candidates as string[])].sort()).toEqual(mine);
      expect(e.details.prefix).toBe('abcdef01');
      // A longer prefix that tells them apart resolves; the other scope's id is as unknown as a missing one.
      expect((await s.memories.get(scope, 'abcdef01-0000-4000-8000-000000000002')).id).toBe(mine[1]);
      expect((await rejection(s.memories.get(scope, 'abcdef01-0000-4000-8000-000000000003'))).code).toBe('NOT_FOUND');
      // In the other scope the shared prefix is not ambiguous: only one memory there has it.
      expect((await s.memories.get(other, 'abcdef01')).id).toBe('abcdef01-0000-4000-8000-000000000003');
    });

    it('never shows a memory across tenants, modes or workspaces', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C' });
      for (const elsewhere of [freshScope(), { ...scope, mode: 'test' as const }, { ...scope, workspace: 'other' }]) {
        expect((await rejection(s.memories.get(elsewhere, m.id))).code).toBe('NOT_FOUND');
        expect((await rejection(s.memories.update(elsewhere, actor(elsewhere, 'mallory'), m.id, { title: 'x' }))).code).toBe('NOT_FOUND');
        expect((await rejection(s.memories.delete(elsewhere, actor(elsewhere, 'mallory'), m.id))).code).toBe('NOT_FOUND');
      }
      expect(await s.memories.find(scope, m.id)).toMatchObject({ title: 'T', accessCount: 0 });
    });
  });

  describe('update', () => {
    it('applies the patch, moves updated_at to the clock, and re-embeds only when title or content change', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'Old', content: 'Body', tags: ['a'] });
      s.clock.advance(60_000);
      const tagged = await s.memories.update(scope, actor(scope, 'bob'), m.id.slice(0, 8), { tags: ['b', 'b '] });
      expect(tagged).toMatchObject({ title: 'Old', tags: ['b'], updatedBy: 'bob', createdBy: 'alice' });
      expect(tagged.updatedAt.getTime()).toBe(m.createdAt.getTime() + 60_000);
      const retitled = await s.memories.update(scope, actor(scope, 'bob'), m.id, { title: 'New' });
      const vectors = await s.storage.memories.vectorsOf(scope, [m.id], s.embedder.modelId);
      const [expected] = await s.embedder.embed([s.memories.embeddingText('New', 'Body')]);
      expect([...vectors.get(m.id)!]).toEqual([...expected!]);
      expect(retitled.title).toBe('New');

      const updates = (await s.eventsOf(scope)).slice(2); // after the create's memory.created and embedding.generated
      expect(updates.map((e) => e.type)).toEqual(['memory.updated', 'memory.updated', 'embedding.generated']);
      expect(updates[0]!.data.changes).toEqual({ content: false, metadata: false, tags: true });
      expect(updates[1]!.data.changes).toEqual({ content: true, metadata: false, tags: false });
      expect(updates[2]!.data).toMatchObject({ memory_id: m.id, trigger: 'memory.updated' });
    });

    it('refuses an empty patch and bad fields, leaving the memory as it was', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C' });
      const empty = await rejection(s.memories.update(scope, actor(scope, 'bob'), m.id, {}));
      expect(empty.details.fields).toEqual([{ field: 'body', reason: 'empty', message: 'at least one field to update is required' }]);
      const bad = await rejection(s.memories.update(scope, actor(scope, 'bob'), m.id, { title: '', memoryType: 'X' }));
      expect(bad.details.fields!.map((f) => f.field).sort()).toEqual(['memory_type', 'title']);
      expect(await s.memories.find(scope, m.id)).toEqual(m);
      expect((await s.eventsOf(scope)).filter((e) => e.type === 'memory.updated')).toEqual([]);
    });
  });

  describe('delete', () => {
    it('deletes by prefix, records who and why in memory.deleted, and is then not found', async () => {
      const scope = freshScope();
      const m = await s.memories.create(scope, actor(scope, 'alice'), { title: 'T', content: 'C', tags: ['x'] });
      s.clock.advance(1000);
      const { id, deletedAt } = await s.memories.delete(scope, actor(scope, 'bob'), m.id.slice(0, 10), 'batch');
      expect(id).toBe(m.id);
      expect(deletedAt.getTime()).toBe(s.clock.now().getTime());
      expect((await rejection(s.memories.get(scope, m.id))).code).toBe('NOT_FOUND');
      expect((await rejection(s.memories.delete(scope, actor(scope, 'bob'), m.id))).code).toBe('NOT_FOUND');
      const deleted = (await s.eventsOf(scope)).filter((e) => e.type === 'memory.deleted');
      expect(deleted).toHaveLength(1);
      expect(deleted[0]!.data).toMatchObject({ id: m.id, deleted_by: 'bob', reason: 'batch', forgotten: true, deleted_at: deletedAt.toISOString() });
      expect(deleted[0]!.data).not.toHaveProperty('tags');
    });
  });

  describe('legacy ids', () => {
    it('finds by client id, mem_<uuid> or bare uuid, and names memories the way G2 does', async () => {
      const scope = freshScope();
      const named = await s.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'C', clientId: 'note:1' });
      const plain = await s.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'C' });
      expect(s.memories.legacyIdOf(named)).toBe('note:1');
      expect(s.memories.legacyIdOf(plain)).toBe(`mem_${plain.id}`);
      expect((await s.memories.findByLegacyId(scope, 'note:1')).id).toBe(named.id);
      expect((await s.memories.findByLegacyId(scope, `mem_${plain.id}`)).id).toBe(plain.id);
      expect((await s.memories.findByLegacyId(scope, plain.id.toUpperCase())).id).toBe(plain.id);
      expect((await rejection(s.memories.findByLegacyId(freshScope(), 'note:1'))).code).toBe('NOT_FOUND');
      // A client id is unique within its scope.
      expect((await rejection(s.memories.create(scope, actor(scope, 'a'), { title: 'T', content: 'C', clientId: 'note:1' }))).code).toBe('CONFLICT');
    });
  });
});
