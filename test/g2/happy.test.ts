import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import {
  specPart, DIMS, NATIVE_DIMS, UUID, clientVector, embeddingTextOf, g2, paddedHashVector, uuidOf,
} from './client.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The returned embedding is the stored float32 vector: each number reads back as the same float32. */
function expectHashVector(embedding: number[], text: string) {
  expect(embedding).toHaveLength(DIMS);
  const expected = hashEmbed(text, NATIVE_DIMS);
  expect(embedding.slice(0, NATIVE_DIMS).map((x) => Math.fround(x))).toEqual(Array.from(expected));
  expect(embedding.slice(NATIVE_DIMS).every((x) => x === 0)).toBe(true);
  // A real vector, not zeros.
  expect(embedding.some((x) => x !== 0)).toBe(true);
}

describe('G2 happy paths', () => {
  let t: TestApp;
  let api: ReturnType<typeof g2>;
  let v1: ReturnType<typeof g1>;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    const key = await t.freshTenant();
    api = g2(t.app, key);
    v1 = g1(t.app, key);
  });

  it('stores a memory without an id: mem_<uuid>, embedded by the server, tokens counted with cl100k', async () => {
    const res = await api.create({ text: 'hello world' });
    expect(res.statusCode).toBe(201);
    const body = json(res);
    expect(specPart(body, 'created')).toEqual({
      id: expect.stringMatching(/^mem_/), status: 'stored', embedding_generated: true, vector_dimensions: 1536, tokens_used: 2,
    });
    expect(uuidOf(body.id)).toMatch(UUID);
    expect(json(await api.create({ text: 'The quick brown fox jumps over the lazy dog.' })).tokens_used).toBe(10);
  });

  it('stores a client id and metadata, and gets it back with the stored vector at 1536 dimensions', async () => {
    const text = 'Quarterly planning\nWe agreed on three goals for the next quarter.';
    const metadata = {
      type: 'project', tags: ['planning', 'q3'], source: 'slack', timestamp: '2026-01-15T10:30:00Z', extra: { channel: '#team', n: 3 },
    };
    const created = json(await api.create({ id: 'note.2026:q3_plan-1', text, metadata }));
    expect(created).toMatchObject({ id: 'note.2026:q3_plan-1', status: 'stored', embedding_generated: true, vector_dimensions: 1536 });

    const got = await api.get('note.2026:q3_plan-1');
    expect(got.statusCode).toBe(200);
    const m = json(got);
    expect(Object.keys(specPart(m, 'memory')).sort()).toEqual(['created_at', 'embedding', 'id', 'metadata', 'text', 'updated_at']);
    // Beside the spec's: what @lanonasis/memory-client reads (never a `status`: memories have no states).
    expect(m).toMatchObject({ title: expect.any(String), content: m.text, memory_type: m.metadata.type, tags: m.metadata.tags });
    expect(m).not.toHaveProperty('status');
    expect(m).toMatchObject({ id: 'note.2026:q3_plan-1', text });
    expect(m.metadata).toEqual(metadata);
    expect(m.created_at).toMatch(ISO);
    expect(m.updated_at).toBe(m.created_at);
    // The core embeds title + blank line + content; the title is the first line.
    expectHashVector(m.embedding, embeddingTextOf('Quarterly planning', text));
  });

  it('defaults the type to context and tags to none', async () => {
    const { id } = json(await api.create({ text: 'plain' }));
    expect(json(await api.get(id)).metadata).toEqual({ type: 'context', tags: [] });
  });

  it('derives the title from the first non-blank line, collapsed and cut on a word boundary', async () => {
    const title = async (text: string) => {
      const { id } = json(await api.create({ text }));
      return json(await v1.get(uuidOf(id))).data.title as string;
    };
    expect(await title('\n  \n\t First\t\tline   here  \nsecond line')).toBe('First line here');
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(' ');
    const cut = await title(words);
    expect([...cut].length).toBeLessThanOrEqual(255);
    expect(cut.endsWith('…')).toBe(true);
    expect(words.startsWith(cut.slice(0, -1))).toBe(true);
    expect(words[cut.length - 1]).toBe(' '); // cut right before a space: whole words only
    const long = 'x'.repeat(400);
    expect(await title(long)).toBe(`${'x'.repeat(254)}…`);
    const exact = 'y'.repeat(255);
    expect(await title(exact)).toBe(exact);
  });

  it('finds a memory by its client id, mem_<uuid> and the bare UUID, counting each get as an access', async () => {
    const { id } = json(await api.create({ id: 'abc', text: 'ids' }));
    const uuid = json(await v1.list()).data[0].id as string;
    for (const ref of ['abc', `mem_${uuid}`, uuid, uuid.toUpperCase()]) {
      const got = await api.get(ref);
      expect(got.statusCode, ref).toBe(200);
      expect(json(got).id).toBe(id);
    }
    expect(json(await v1.get(uuid)).data.access_count).toBe(5);
  });

  it('stores a supplied embedding with a zero tail as the model vector: searchable, not re-embedded', async () => {
    const query = 'quantum entanglement laboratory notes';
    const embedding = paddedHashVector(query);
    const res = await api.create({ text: 'Gardening: tomatoes want sun', embedding });
    expect(res.statusCode).toBe(201);
    const created = json(res);
    expect(created).toMatchObject({ status: 'stored', embedding_generated: false, tokens_used: 0, vector_dimensions: 1536 });
    await api.create({ text: 'unrelated memory about cooking pasta' });

    const m = json(await api.get(created.id));
    expect(m.embedding.map((x: number) => Math.fround(x))).toEqual(embedding.map((x) => Math.fround(x)));

    // The G1 search embeds the query with the same model: the supplied vector is what matched (cosine 1).
    const found = json(await v1.search({ query, threshold: 0.95 })).data;
    expect(found.results.map((r: Json) => r.id)).toEqual([uuidOf(created.id)]);
    expect(found.results[0].similarity_score).toBeCloseTo(1, 5);
    // The text alone would not have matched.
    expect(json(await v1.search({ query: 'Gardening tomatoes sun', threshold: 0.95 })).data.total).toBe(0);
  });

  it('keeps a supplied embedding with a non-zero tail exactly, outside semantic search', async () => {
    const embedding = clientVector(7);
    expect(embedding.slice(NATIVE_DIMS).some((x) => x !== 0)).toBe(true);
    const created = json(await api.create({ id: 'vec-1', text: 'client vector memory', embedding }));
    expect(created).toMatchObject({ id: 'vec-1', embedding_generated: false, tokens_used: 0, vector_dimensions: 1536 });
    const m = json(await api.get('vec-1'));
    expect(m.embedding).toEqual(embedding);
    await api.create({ text: 'another memory' });
    const all = json(await v1.search({ query: 'client vector memory', threshold: 0 })).data;
    expect(all.results.length).toBe(1);
    expect(all.results.map((r: Json) => r.content)).toEqual(['another memory']);
  });

  it('updates the text: regenerated embedding, new text and title', async () => {
    const { id } = json(await api.create({ id: 'u1', text: 'Old title\nold body', metadata: { tags: ['keep'], source: 's' } }));
    const before = json(await api.get(id));
    const res = await api.update(id, { text: 'New title\nnew body' });
    expect(res.statusCode).toBe(200);
    expect(specPart(json(res), 'updated')).toEqual({ id: 'u1', status: 'updated', embedding_regenerated: true });
    const after = json(await api.get(id));
    expect(after.text).toBe('New title\nnew body');
    expect(after.metadata).toEqual({ type: 'context', tags: ['keep'], source: 's' });
    expectHashVector(after.embedding, embeddingTextOf('New title', 'New title\nnew body'));
    expect(after.embedding).not.toEqual(before.embedding);
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    expect(after.created_at).toBe(before.created_at);
    const uuid = json(await v1.list()).data[0].id as string;
    expect(json(await v1.get(uuid)).data).toMatchObject({ title: 'New title', content: 'New title\nnew body' });
  });

  it('updates metadata only: replaced whole, embedding untouched', async () => {
    const { id } = json(await api.create({ text: 'Meta\nbody', metadata: { type: 'project', tags: ['a'], source: 'x', old: 1 } }));
    const before = json(await api.get(id));
    const res = await api.update(id, { metadata: { tags: ['b', 'c'], source: 'y' } });
    expect(specPart(json(res), 'updated')).toEqual({ id, status: 'updated', embedding_regenerated: false });
    const after = json(await api.get(id));
    expect(after.metadata).toEqual({ type: 'context', tags: ['b', 'c'], source: 'y' });
    expect(after.embedding).toEqual(before.embedding);
    expect(after.text).toBe('Meta\nbody');
  });

  it('treats an unchanged text as no change: nothing re-embedded, nothing written', async () => {
    const { id } = json(await api.create({ text: 'Same\ntext' }));
    const before = json(await api.get(id));
    expect(specPart(json(await api.update(id, { text: 'Same\ntext' })), 'updated')).toEqual({ id, status: 'updated', embedding_regenerated: false });
    const after = json(await api.get(id));
    expect(after.updated_at).toBe(before.updated_at);
    expect(json(await api.update(id, { text: 'Same\ntext', metadata: { tags: ['t'] } })).embedding_regenerated).toBe(false);
    expect(json(await api.get(id)).metadata.tags).toEqual(['t']);
  });

  it('replaces a supplied embedding with the model vector when the text changes', async () => {
    const embedding = clientVector(3);
    await api.create({ id: 'sup', text: 'first', embedding });
    expect(json(await api.update('sup', { metadata: { tags: ['x'] } })).embedding_regenerated).toBe(false);
    expect(json(await api.get('sup')).embedding).toEqual(embedding);
    expect(json(await api.update('sup', { text: 'second' })).embedding_regenerated).toBe(true);
    expectHashVector(json(await api.get('sup')).embedding, embeddingTextOf('second', 'second'));
  });

  it('deletes by any id form, answering the id G2 knows; the memory is gone', async () => {
    const a = json(await api.create({ text: 'to delete' }));
    const del = await api.delete(uuidOf(a.id));
    expect(del.statusCode).toBe(200);
    expect(json(del)).toEqual({ success: true, deleted_id: a.id });
    expect((await api.get(a.id)).statusCode).toBe(404);
    expect((await api.delete(a.id)).statusCode).toBe(404);

    await api.create({ id: 'named', text: 'named memory' });
    expect(json(await api.delete('named'))).toEqual({ success: true, deleted_id: 'named' });
    expect((await api.get('named')).statusCode).toBe(404);
    expect(json(await v1.list()).pagination.total).toBe(0);
    // The client id is free again.
    expect((await api.create({ id: 'named', text: 'again' })).statusCode).toBe(201);
  });

  it('shows a memory stored under another model with the current model\'s vector, computed for the answer', async () => {
    const scope = { tenantId: t.tenant, mode: 'live' as const, workspace: 'default' };
    const id = '11111111-2222-4333-8444-555555555555';
    const now = new Date();
    await t.container.storage.memories.insert({
      id, clientId: null, scope, title: 'Old model', content: 'stored long ago', memoryType: 'context', tags: [], metadata: {},
      topicId: null, createdAt: now, updatedAt: now, createdBy: 'u', updatedBy: 'u', accessCount: 0, lastAccessed: null,
      validFrom: now, validUntil: null, supersededBy: null, version: 1,
    }, { modelId: 'retired:v0-4', vector: new Float32Array([1, 0, 0, 0]) });
    expectHashVector(json(await api.get(`mem_${id}`)).embedding, embeddingTextOf('Old model', 'stored long ago'));
    // Nothing was written: the old vector is still the only one.
    expect((await t.container.storage.memories.vectorsOf(scope, [id], t.container.embedder.modelId)).size).toBe(0);
  });

  it('serves a client id of the full 128 characters in the path', async () => {
    // The router's maxParamLength (Fastify's default is 100) is raised for this in app/server.ts.
    const id = `a${'b'.repeat(127)}`;
    expect((await api.create({ id, text: 'long id' })).statusCode).toBe(201);
    expect(json(await api.get(id)).id).toBe(id);
    expect(json(await api.delete(id)).deleted_id).toBe(id);
  });

  it('documents the G2 routes in OpenAPI with Bearer security', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    const post = doc.paths['/api/v1/memory/']?.post ?? doc.paths['/api/v1/memory']?.post;
    expect(post.tags).toEqual(['G2 legacy memory']);
    expect(post.security).toEqual([{ bearer: [] }]);
    const get = doc.paths['/api/v1/memory/{id}'].get;
    expect(get.tags).toEqual(['G2 legacy memory']);
    expect(doc.paths['/api/v1/memory/{id}'].put).toBeDefined();
    expect(doc.paths['/api/v1/memory/{id}'].delete).toBeDefined();
  });
});
