import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';

/** Counts model calls, to see when a write re-embeds. */
function countingEmbedder(): Embedder & { calls: number } {
  const inner = createHashingEmbedder({ dimensions: 256 });
  const counted = {
    calls: 0,
    modelId: inner.modelId,
    dimensions: inner.dimensions,
    embed: async (texts: readonly string[]) => { counted.calls++; return inner.embed(texts); },
    close: () => inner.close(),
  };
  return counted;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('G1 happy paths', () => {
  let t: TestApp;
  let api: ReturnType<typeof g1>;
  let embedder: ReturnType<typeof countingEmbedder>;
  let key: string;
  beforeAll(async () => {
    embedder = countingEmbedder();
    t = await createTestApp({ overrides: { embedder } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    key = await t.freshTenant();
    api = g1(t.app, key);
  });


  it('creates a memory with every field and returns both type names', async () => {
    const topicRes = await t.app.inject({ method: 'POST', url: '/api/v1/topics', headers: { 'x-api-key': key }, payload: { name: 'Team' } });
    const topic = json(topicRes).data.id as string;
    const res = await api.create({
      title: 'Weekly sync', content: 'Discussed the roadmap', type: 'meeting', tags: ['team', 'team', ' q3 '],
      metadata: { attendees: ['ann', 'bo'], room: { floor: 3, name: 'Blue' } }, topic_id: topic,
    });
    expect(res.statusCode).toBe(201);
    const body = json(res);
    expect(body.success).toBe(true);
    expect(body.data).toMatchObject({
      title: 'Weekly sync', content: 'Discussed the roadmap', memory_type: 'meeting', type: 'meeting',
      tags: ['team', 'q3'], metadata: { attendees: ['ann', 'bo'], room: { floor: 3, name: 'Blue' } }, topic_id: topic,
    });
    expect(body.data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.data.created_at).toMatch(ISO);
    expect(body.data.updated_at).toBe(body.data.created_at);
    expect(body.data).not.toHaveProperty('access_count');
    expect(body.data).not.toHaveProperty('state');
  });

  it('accepts every listed type through memory_type and defaults to context', async () => {
    for (const type of ['context', 'project', 'knowledge', 'reference', 'personal', 'workflow', 'meeting_notes']) {
      const res = await api.create({ title: type, content: 'x', memory_type: type });
      expect(json(res).data).toMatchObject({ memory_type: type, type });
    }
    expect(json(await api.create({ title: 'untyped', content: 'x' })).data.memory_type).toBe('context');
  });

  it('gets by full id and by prefix, counting each access', async () => {
    const { id } = json(await api.create({ title: 'T', content: 'C' })).data;
    const first = json(await api.get(id));
    expect(first.data).toMatchObject({ id, title: 'T', content: 'C', access_count: 1 });
    expect(first.data.last_accessed).toMatch(ISO);
    const second = json(await api.get(id.slice(0, 8)));
    expect(second.data).toMatchObject({ id, access_count: 2 });
    const third = json(await api.get(id.slice(0, 13).toUpperCase()));
    expect(third.data).toMatchObject({ id, access_count: 3 });
    expect(Date.parse(third.data.last_accessed)).toBeGreaterThanOrEqual(Date.parse(first.data.last_accessed));
  });

  it('updates given fields only, keeps created_at, moves updated_at, re-embeds only on text change', async () => {
    const created = json(await api.create({ title: 'Old', content: 'apples and pears', tags: ['a'], metadata: { k: 1 } })).data;
    const callsAfterCreate = embedder.calls;

    const tagsOnly = await api.update(created.id, { tags: ['b'], metadata: { k: 2, deep: { x: true } } });
    expect(tagsOnly.statusCode).toBe(200);
    expect(json(tagsOnly).data).toMatchObject({ title: 'Old', content: 'apples and pears', tags: ['b'], metadata: { k: 2, deep: { x: true } } });
    expect(embedder.calls).toBe(callsAfterCreate);

    const res = await api.update(created.id, { content: 'submarine engines and propellers', memory_type: 'project' });
    const updated = json(res).data;
    expect(updated).toMatchObject({ id: created.id, title: 'Old', content: 'submarine engines and propellers', memory_type: 'project', type: 'project', created_at: created.created_at });
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
    expect(embedder.calls).toBe(callsAfterCreate + 1);

    // The stored vector follows the new text.
    const found = json(await api.search({ query: 'submarine engines propellers', threshold: 0.6 })).data;
    expect(found.results.map((r: { id: string }) => r.id)).toEqual([created.id]);
    const stale = json(await api.search({ query: 'apples and pears', threshold: 0.8 })).data;
    expect(stale.results).toEqual([]);
  });

  it('deletes permanently', async () => {
    const { id } = json(await api.create({ title: 'T', content: 'C' })).data;
    const res = await api.delete(id);
    expect(res.statusCode).toBe(200);
    const body = json(res);
    expect(body).toMatchObject({ success: true, data: { id } });
    expect(typeof body.message).toBe('string');
    expect(body.data.deleted_at).toMatch(ISO);
    expect((await api.get(id)).statusCode).toBe(404);
    expect((await api.delete(id)).statusCode).toBe(404);
    expect(json(await api.list()).pagination.total).toBe(0);
  });

  it('lists with paging, filters and sorting', async () => {
    const titles = ['delta', 'alpha', 'charlie', 'bravo', 'echo'];
    for (const [i, title] of titles.entries()) {
      await api.create({ title, content: `content ${i}`, memory_type: i % 2 ? 'project' : 'knowledge', tags: i < 2 ? ['red'] : ['blue'] });
    }
    const all = json(await api.list());
    expect(all.data).toHaveLength(5);
    expect(all.pagination).toEqual({ total: 5, page: 1, limit: 20, hasMore: false });
    // Default: newest first.
    expect(all.data.map((m: { title: string }) => m.title)).toEqual([...titles].reverse());
    expect(Object.keys(all.data[0]).sort()).toEqual(
      ['content', 'created_at', 'id', 'memory_type', 'metadata', 'tags', 'title', 'topic_id', 'type', 'updated_at',
        'valid_from', 'valid_until', 'superseded_by', 'version'].sort());

    const page2 = json(await api.list('limit=2&offset=2&sortBy=title&sortOrder=asc'));
    expect(page2.data.map((m: { title: string }) => m.title)).toEqual(['charlie', 'delta']);
    expect(page2.pagination).toEqual({ total: 5, page: 2, limit: 2, hasMore: true });
    const last = json(await api.list('limit=2&offset=4&sortBy=title&sortOrder=asc'));
    expect(last.pagination).toEqual({ total: 5, page: 3, limit: 2, hasMore: false });
    // `page` is honoured, not only echoed: page 2 of 2 is what offset 2 answers.
    const byPage = json(await api.list('limit=2&page=2&sortBy=title&sortOrder=asc'));
    expect(byPage.data.map((m: { title: string }) => m.title)).toEqual(['charlie', 'delta']);
    expect(byPage.pagination).toEqual({ total: 5, page: 2, limit: 2, hasMore: true });
    expect(json(await api.list('limit=2&page=2&offset=2')).pagination.page).toBe(2);
    const clash = await api.list('limit=2&page=2&offset=0');
    expect(clash.statusCode).toBe(400);
    expect(json(clash).error.details).toEqual([expect.objectContaining({ field: 'page' })]);

    const projects = json(await api.list('type=project&sortBy=title&sortOrder=asc'));
    expect(projects.data.map((m: { title: string }) => m.title)).toEqual(['alpha', 'bravo']);
    const tagged = json(await api.list('tags=red,green&sortBy=title&sortOrder=asc'));
    expect(tagged.data.map((m: { title: string }) => m.title)).toEqual(['alpha', 'delta']);
    expect(tagged.pagination.total).toBe(2);
  });

  it('searches best first above the threshold, with type and tag filters', async () => {
    const mk = async (title: string, content: string, extra: object = {}) => json(await api.create({ title, content, ...extra })).data.id as string;
    const deploy = await mk('Deploy checklist', 'Run the deploy pipeline and watch the deploy dashboard', { tags: ['ops'] });
    const deploy2 = await mk('Deploy rollback', 'How to roll back a failed deploy pipeline', { memory_type: 'workflow' });
    await mk('Lunch', 'Sandwich shop on the corner has good soup');

    const res = await api.search({ query: 'deploy pipeline', threshold: 0.55 });
    expect(res.statusCode).toBe(200);
    const data = json(res).data;
    expect(data.query).toBe('deploy pipeline');
    expect(data.threshold).toBe(0.55);
    expect(data.results.map((r: { id: string }) => r.id).sort()).toEqual([deploy, deploy2].sort());
    expect(data.total).toBe(2);
    const scores = data.results.map((r: { similarity_score: number }) => r.similarity_score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const s of scores) expect(s).toBeGreaterThanOrEqual(0.55);
    expect(Object.keys(data.results[0]).sort()).toEqual(
      ['content', 'id', 'memory_type', 'metadata', 'similarity_score', 'tags', 'title', 'type',
        'valid_from', 'valid_until', 'superseded_by', 'version'].sort());

    expect(json(await api.search({ query: 'deploy pipeline', threshold: 0.55, type: 'workflow' })).data.results
      .map((r: { id: string }) => r.id)).toEqual([deploy2]);
    expect(json(await api.search({ query: 'deploy pipeline', threshold: 0.55, tags: ['ops'] })).data.results
      .map((r: { id: string }) => r.id)).toEqual([deploy]);
    expect(json(await api.search({ query: 'deploy pipeline', threshold: 0, limit: 1 })).data).toMatchObject({ total: 3 });
    // A metadata filter is honoured (it was silently ignored), and a bad one is a 400 naming it.
    const tagged = await mk('Deploy owners', 'The deploy pipeline is owned by the platform team', { metadata: { team: 'platform', source: { kind: 'wiki' } } });
    for (const metadata of [{ team: 'platform' }, { 'source.kind': ['wiki', 'doc'] }]) {
      expect(json(await api.search({ query: 'deploy pipeline', threshold: 0, metadata })).data.results
        .map((r: { id: string }) => r.id)).toEqual([tagged]);
    }
    expect(json(await api.search({ query: 'deploy pipeline', threshold: 0, metadata: { team: 'ops' } })).data.total).toBe(0);
    const bad = await api.search({ query: 'deploy pipeline', metadata: { 'bad key!': 1, team: { nested: true } } });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.details.map((d: { field: string }) => d.field).sort()).toEqual(['metadata.bad key!', 'metadata.team']);
    expect(json(await api.search({ query: 'deploy pipeline' })).data.threshold).toBe(0.7);
  });

  it('echoes a request id and answers health without a key', async () => {
    const res = await api.list();
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    const mine = await t.app.inject({ method: 'GET', url: '/api/v1/memories', headers: { 'x-api-key': 'x', 'x-request-id': 'trace-123' } });
    expect(mine.headers['x-request-id']).toBe('trace-123');
    expect(json(mine).error.request_id).toBe('trace-123');
    for (const url of ['/health', '/api/v1/health']) {
      const health = await t.app.inject({ method: 'GET', url });
      expect(health.statusCode).toBe(200);
      expect(json(health).status).toBe('ok');
    }
  });

  it('serves OpenAPI docs', async () => {
    const spec = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/api/v1/memories', '/api/v1/memories/search', '/api/v1/memories/{id}']));
    const ui = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
  });
});
