import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { DIMS, NATIVE_DIMS, embeddingTextOf, g2, uuidOf } from './client.ts';

/** A G2 memory is a G1 memory: one record, seen and changed through either surface. */
describe('G2 and G1 share one memory', () => {
  let t: TestApp;
  let v1: ReturnType<typeof g1>;
  let v2: ReturnType<typeof g2>;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    const key = await t.freshTenant();
    v1 = g1(t.app, key);
    v2 = g2(t.app, key);
  });

  it('reads, searches, updates and deletes a G2 memory through G1', async () => {
    const text = 'Deployment checklist\nRun migrations, then restart the workers one by one.';
    const created = json(await v2.create({
      text, metadata: { type: 'workflow', tags: ['ops', 'deploy'], source: 'wiki', timestamp: '2026-01-10T08:00:00Z', extra: [1, 2] },
    }));
    const uuid = uuidOf(created.id);

    const onG1 = await v1.get(uuid);
    expect(onG1.statusCode).toBe(200);
    expect(json(onG1).data).toMatchObject({
      id: uuid, title: 'Deployment checklist', content: text, memory_type: 'workflow', tags: ['ops', 'deploy'],
      metadata: { source: 'wiki', timestamp: '2026-01-10T08:00:00Z', extra: [1, 2] },
    });
    // type and tags are the memory's own fields, not metadata keys.
    expect(Object.keys(json(onG1).data.metadata).sort()).toEqual(['extra', 'source', 'timestamp']);

    const found = json(await v1.search({ query: 'deployment checklist migrations workers', threshold: 0.6 })).data;
    expect(found.results.map((r: Json) => r.id)).toContain(uuid);

    const updated = await v1.update(uuid, { content: 'Deployment checklist v2\nRoll back on failure.', tags: ['ops'], metadata: { source: 'g1' } });
    expect(updated.statusCode).toBe(200);
    const back = json(await v2.get(created.id));
    expect(back.text).toBe('Deployment checklist v2\nRoll back on failure.');
    expect(back.metadata).toEqual({ type: 'workflow', tags: ['ops'], source: 'g1' });
    // G1 kept the title it had; the embedding follows G1's re-embed.
    const expected = hashEmbed(embeddingTextOf('Deployment checklist', 'Deployment checklist v2\nRoll back on failure.'), NATIVE_DIMS);
    expect(back.embedding.slice(0, NATIVE_DIMS).map((x: number) => Math.fround(x))).toEqual(Array.from(expected));

    expect((await v1.delete(uuid)).statusCode).toBe(200);
    const gone = await v2.get(created.id);
    expect(gone.statusCode).toBe(404);
    expect(json(gone).error).toBe('NOT_FOUND');
  });

  it('reads and deletes a G1 memory through G2 by mem_<uuid>', async () => {
    const m = json(await v1.create({ title: 'G1 title', content: 'Body written on G1', memory_type: 'knowledge', tags: ['g1'], metadata: { k: 1, nested: { a: true } } })).data;
    const res = await v2.get(`mem_${m.id}`);
    expect(res.statusCode).toBe(200);
    const g = json(res);
    expect(g).toMatchObject({
      id: `mem_${m.id}`, text: 'Body written on G1',
      metadata: { k: 1, nested: { a: true }, type: 'knowledge', tags: ['g1'] },
      created_at: m.created_at, updated_at: m.updated_at,
    });
    expect(g.embedding).toHaveLength(DIMS);
    expect(g.embedding.slice(0, NATIVE_DIMS).map((x: number) => Math.fround(x)))
      .toEqual(Array.from(hashEmbed(embeddingTextOf('G1 title', 'Body written on G1'), NATIVE_DIMS)));

    // A G2 text update re-derives the title from the text.
    expect(json(await v2.update(`mem_${m.id}`, { text: 'Fresh first line\nmore' })).embedding_regenerated).toBe(true);
    expect(json(await v1.get(m.id)).data).toMatchObject({ title: 'Fresh first line', content: 'Fresh first line\nmore', memory_type: 'knowledge', tags: ['g1'] });

    const del = await v2.delete(`mem_${m.id}`);
    expect(json(del)).toEqual({ success: true, deleted_id: `mem_${m.id}` });
    expect((await v1.get(m.id)).statusCode).toBe(404);
  });

  it('shows a client-id memory on G1 under its UUID, and G1 writes keep the client id', async () => {
    await v2.create({ id: 'ticket-42', text: 'Customer reported login issue', metadata: { tags: ['support'] } });
    const listed = json(await v1.list()).data as Json[];
    expect(listed).toHaveLength(1);
    const uuid = listed[0]!.id as string;
    expect(listed[0]).toMatchObject({ title: 'Customer reported login issue', tags: ['support'] });
    await v1.update(uuid, { title: 'Login issue (triaged)' });
    expect(json(await v2.get('ticket-42')).id).toBe('ticket-42');
    expect(json(await v2.get(`mem_${uuid}`)).id).toBe('ticket-42');
    expect(json(await v2.delete(uuid))).toEqual({ success: true, deleted_id: 'ticket-42' });
    expect(json(await v1.list()).pagination.total).toBe(0);
  });
});
