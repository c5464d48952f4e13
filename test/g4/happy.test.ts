import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Memory } from '../../src/core/memories/memory.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { actorIn } from '../support/fixtures.ts';
import { contentPreview, scoreSuggestions } from '../../src/surfaces/g4-discovery/mappers.ts';
import { ISO, g4, ok, type G4Client } from './client.ts';

const SEMANTIC_FIELDS = ['content_preview', 'created_at', 'highlights', 'id', 'metadata', 'similarity_score', 'tags', 'title', 'updated_at'];
const VECTOR_FIELDS = ['content_preview', 'created_at', 'id', 'metadata', 'similarity_score', 'tags', 'title', 'vector_distance'];

const LONG_CONTENT = 'Pipeline notes: every deploy goes through the pipeline in three stages, build, verify and release. '
  + 'The deploy pipeline keeps artifacts for thirty days so that any release can be rolled back quickly. '
  + 'Owners rotate weekly and the rota lives in the team wiki.';

const ids = (results: Json[]) => results.map((r) => r.id as string);

describe('G4 happy paths', () => {
  let t: TestApp;
  let api: G4Client;
  let clock: ManualClock;
  let scope: Scope;
  let m: Record<'checklist' | 'rollback' | 'lunch' | 'notes', Memory>;

  /** Memories one minute apart, so that created_at bounds are easy to aim. */
  const create = async (title: string, content: string, tags: string[], metadata: Record<string, unknown>) => {
    clock.advance(60_000);
    return t.container.memories.create(scope, actorIn(scope), { title, content, tags, metadata });
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 2, 1, 9, 0, 0)); // each test starts at the same time, as with an app of its own
    api = g4(t.app, await t.freshTenant());
    scope = { tenantId: t.tenant, mode: 'live', workspace: 'default' };
    m = {
      checklist: await create('Deploy checklist', 'Run the deploy pipeline and watch the deploy dashboard', ['ops', 'release'], { env: 'prod', team: 'infra' }),
      rollback: await create('Deploy rollback', 'How to roll back a failed deploy pipeline', ['ops'], { env: 'staging', team: 'infra' }),
      lunch: await create('Lunch', 'Sandwich shop on the corner has good soup', ['food'], { env: 'prod' }),
      notes: await create('Pipeline deploy notes', LONG_CONTENT, ['docs'], { env: 'dev', team: 'web', labels: ['a', 'b'] }),
    };
  });

  describe('GET /v1/search', () => {
    it('answers best first above the threshold, with every item field', async () => {
      const res = await api.search({ q: 'deploy pipeline', similarity_threshold: 0.55 });
      const data = ok(res);
      expect(Object.keys(data).sort()).toEqual(['pagination', 'query', 'results', 'search_metadata']);
      expect(data.query).toBe('deploy pipeline');
      expect(ids(data.results).sort()).toEqual([m.checklist.id, m.rollback.id, m.notes.id].sort());
      const scores = data.results.map((r: Json) => r.similarity_score as number);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const s of scores) expect(s).toBeGreaterThanOrEqual(0.55);
      expect(data.pagination).toEqual({ total: 3, limit: 10, offset: 0, has_more: false });
      // The model the search compared (the test app's 256-dimension hashing embedder), not a padded API model's name.
      expect(data.search_metadata).toMatchObject({ embedding_model: 'hashing:v1-256', embedding_dimensions: 256, similarity_threshold: 0.55 });
      expect(typeof data.search_metadata.query_time_ms).toBe('number');
      expect(data.search_metadata.query_time_ms).toBeGreaterThanOrEqual(0);
      expect(Math.round(data.search_metadata.query_time_ms * 100) / 100).toBe(data.search_metadata.query_time_ms);

      const checklist = data.results.find((r: Json) => r.id === m.checklist.id);
      expect(Object.keys(checklist).sort()).toEqual(SEMANTIC_FIELDS);
      expect(checklist).toMatchObject({
        title: 'Deploy checklist', content_preview: 'Run the deploy pipeline and watch the deploy dashboard',
        tags: ['ops', 'release'], metadata: { env: 'prod', team: 'infra' },
        created_at: m.checklist.createdAt.toISOString(), updated_at: m.checklist.updatedAt.toISOString(),
      });
      expect(checklist.created_at).toMatch(ISO);
      expect(checklist.highlights).toEqual(['Run the <mark>deploy</mark> <mark>pipeline</mark> and watch the <mark>deploy</mark> dashboard']);
    });

    it('uses the 0.7 default threshold and 10 results by default', async () => {
      const data = ok(await api.search({ q: 'deploy pipeline' }));
      expect(data.search_metadata.similarity_threshold).toBe(0.7);
      expect(data.pagination.limit).toBe(10);
      for (const r of data.results) expect(r.similarity_score).toBeGreaterThanOrEqual(0.7);
      const all = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 0 }));
      expect(all.pagination.total).toBe(4);
      expect(data.pagination.total).toBeLessThan(4);
      const none = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 1 }));
      expect(none).toMatchObject({ results: [], pagination: { total: 0, has_more: false } });
    });

    it('pages with limit and offset over the same ranking', async () => {
      const all = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 0 }));
      const order = ids(all.results);
      expect(order).toHaveLength(4);
      const pages = [];
      for (const offset of [0, 1, 2, 3]) {
        const page = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 0, limit: 1, offset }));
        expect(page.pagination).toEqual({ total: 4, limit: 1, offset, has_more: offset < 3 });
        pages.push(...ids(page.results));
      }
      expect(pages).toEqual(order);
      const two = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 0, limit: 2, offset: 1 }));
      expect(ids(two.results)).toEqual(order.slice(1, 3));
      expect(two.pagination.has_more).toBe(true);
      const beyond = ok(await api.search({ q: 'deploy pipeline', similarity_threshold: 0, limit: 5, offset: 10 }));
      expect(beyond).toMatchObject({ results: [], pagination: { total: 4, limit: 5, offset: 10, has_more: false } });
    });

    it('filters by tags (any of them) and inclusive created_after / created_before', async () => {
      const q = { q: 'deploy pipeline', similarity_threshold: 0 };
      expect(ids(ok(await api.search({ ...q, tags: 'release' })).results)).toEqual([m.checklist.id]);
      expect(ids(ok(await api.search({ ...q, tags: 'release, docs' })).results).sort()).toEqual([m.checklist.id, m.notes.id].sort());
      expect(ok(await api.search({ ...q, tags: 'nothing' })).pagination.total).toBe(0);

      const at = m.rollback.createdAt.toISOString();
      expect(ids(ok(await api.search({ ...q, created_after: at })).results).sort()).toEqual([m.rollback.id, m.lunch.id, m.notes.id].sort());
      expect(ids(ok(await api.search({ ...q, created_before: at })).results).sort()).toEqual([m.checklist.id, m.rollback.id].sort());
      expect(ids(ok(await api.search({ ...q, created_after: at, created_before: at })).results)).toEqual([m.rollback.id]);
      // Offsets and date-only values are ISO 8601 too.
      const plusOne = at.replace('Z', '+00:00');
      expect(ids(ok(await api.search({ ...q, created_after: plusOne, created_before: plusOne })).results)).toEqual([m.rollback.id]);
      expect(ok(await api.search({ ...q, created_after: '2026-03-02' })).pagination.total).toBe(0);
      expect(ok(await api.search({ ...q, created_before: '2026-03-02' })).pagination.total).toBe(4);
    });

    it('filters by metadata sent as a JSON body with the GET, scalar and array values', async () => {
      const q = { q: 'deploy pipeline', similarity_threshold: 0 };
      const prod = ok(await api.search(q, { metadata_filter: { env: 'prod' } }));
      expect(ids(prod.results).sort()).toEqual([m.checklist.id, m.lunch.id].sort());
      const either = ok(await api.search(q, { metadata_filter: { env: ['staging', 'dev'] } }));
      expect(ids(either.results).sort()).toEqual([m.rollback.id, m.notes.id].sort());
      const both = ok(await api.search(q, { metadata_filter: { env: ['prod', 'staging'], team: 'infra' } }));
      expect(ids(both.results).sort()).toEqual([m.checklist.id, m.rollback.id].sort());
      // A stored array matches when any element matches.
      expect(ids(ok(await api.search(q, { metadata_filter: { labels: 'b' } })).results)).toEqual([m.notes.id]);
      expect(ok(await api.search(q, { metadata_filter: { env: 'qa' } })).pagination.total).toBe(0);
      // Combined with the query-string filters.
      expect(ids(ok(await api.search({ ...q, tags: 'ops' }, { metadata_filter: { env: 'prod' } })).results)).toEqual([m.checklist.id]);
      // An empty body or an empty filter changes nothing.
      expect(ok(await api.search(q, {})).pagination.total).toBe(4);
      expect(ok(await api.search(q, { metadata_filter: {} })).pagination.total).toBe(4);
    });

    it('filters by metadata sent as a URL-encoded JSON query parameter', async () => {
      const q = { q: 'deploy pipeline', similarity_threshold: 0 };
      const prod = ok(await api.search({ ...q, metadata_filter: JSON.stringify({ env: 'prod' }) }));
      expect(ids(prod.results).sort()).toEqual([m.checklist.id, m.lunch.id].sort());
      const either = ok(await api.search({ ...q, metadata_filter: JSON.stringify({ env: ['staging', 'dev'] }) }));
      expect(ids(either.results).sort()).toEqual([m.rollback.id, m.notes.id].sort());
      expect(ok(await api.search({ ...q, metadata_filter: '{"team":"web"}' })).results.map((r: Json) => r.id)).toEqual([m.notes.id]);
    });

    it('switches include_content and highlight, and previews long content on a word boundary', async () => {
      const q = { q: 'deploy pipeline', similarity_threshold: 0.55 };
      const plain = ok(await api.search(q)).results.find((r: Json) => r.id === m.notes.id);
      expect(plain).not.toHaveProperty('content');
      const preview: string = plain.content_preview;
      expect(preview.endsWith('…')).toBe(true);
      expect(preview.length).toBeLessThanOrEqual(201);
      expect(preview.length).toBeGreaterThan(150);
      const kept = preview.slice(0, -1);
      expect(LONG_CONTENT.startsWith(kept)).toBe(true);
      expect(LONG_CONTENT[kept.length]).toMatch(/\s/);
      expect(plain.highlights.length).toBeGreaterThan(0);
      for (const h of plain.highlights) expect(h).toContain('<mark>');

      const full = ok(await api.search({ ...q, include_content: true })).results;
      expect(Object.keys(full[0]).sort()).toEqual([...SEMANTIC_FIELDS, 'content'].sort());
      expect(full.find((r: Json) => r.id === m.notes.id).content).toBe(LONG_CONTENT);
      expect(full.find((r: Json) => r.id === m.checklist.id).content).toBe(m.checklist.content);

      const bare = ok(await api.search({ ...q, highlight: false, include_content: false })).results;
      expect(bare.length).toBe(3);
      for (const r of bare) {
        expect(r.highlights).toEqual([]);
        expect(r).not.toHaveProperty('content');
      }
    });

    it('highlights from the title when the content does not mention the query', async () => {
      const only = await create('Kubernetes upgrade', 'Notes from Tuesday', [], {});
      const hit = ok(await api.search({ q: 'kubernetes', similarity_threshold: 0.6 })).results.find((r: Json) => r.id === only.id);
      expect(hit.highlights).toEqual(['<mark>Kubernetes</mark> upgrade']);
    });
  });

  describe('POST /v1/search/vector', () => {
    it('finds the memory whose own embedding is the query vector first, similarity 1 and distance 0', async () => {
      const text = t.container.memories.embeddingText(m.checklist.title, m.checklist.content);
      const { embedding } = ok(await api.embed({ text }));
      expect(embedding).toHaveLength(1536);
      const data = ok(await api.vector({ vector: embedding }));
      expect(Object.keys(data).sort()).toEqual(['pagination', 'results', 'search_metadata']);
      expect(data.results[0].id).toBe(m.checklist.id);
      expect(data.results[0].similarity_score).toBeCloseTo(1, 5);
      expect(data.results[0].vector_distance).toBeCloseTo(0, 5);
      expect(Object.keys(data.results[0]).sort()).toEqual(VECTOR_FIELDS);
      expect(data.results[0]).toMatchObject({
        title: 'Deploy checklist', content_preview: m.checklist.content, tags: ['ops', 'release'],
        metadata: { env: 'prod', team: 'infra' }, created_at: m.checklist.createdAt.toISOString(),
      });
      for (const r of data.results) {
        expect(r.similarity_score).toBeGreaterThanOrEqual(0.7);
        // similarity = (1 + cosine) / 2 and distance = 1 - cosine.
        expect(r.vector_distance).toBeCloseTo(2 - 2 * r.similarity_score, 5);
      }
      const scores = data.results.map((r: Json) => r.similarity_score as number);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(data.search_metadata).toMatchObject({ similarity_threshold: 0.7, distance_metric: 'cosine' });
      expect(typeof data.search_metadata.query_time_ms).toBe('number');
      expect(data.pagination).toEqual({ total: data.results.length, limit: 10, offset: 0, has_more: false });
    });

    it('filters by tags and metadata, thresholds and pages', async () => {
      const text = t.container.memories.embeddingText(m.checklist.title, m.checklist.content);
      const { embedding } = ok(await api.embed({ text }));
      const all = ok(await api.vector({ vector: embedding, similarity_threshold: 0 }));
      expect(all.pagination.total).toBe(4);
      expect(ids(ok(await api.vector({ vector: embedding, similarity_threshold: 0, tags: ['food'] })).results)).toEqual([m.lunch.id]);
      expect(ids(ok(await api.vector({ vector: embedding, similarity_threshold: 0, tags: ['food', 'docs'] })).results).sort())
        .toEqual([m.lunch.id, m.notes.id].sort());
      expect(ids(ok(await api.vector({ vector: embedding, similarity_threshold: 0, metadata_filter: { team: 'web' } })).results))
        .toEqual([m.notes.id]);
      expect(ids(ok(await api.vector({ vector: embedding, similarity_threshold: 0, metadata_filter: { env: ['staging', 'dev'] } })).results).sort())
        .toEqual([m.rollback.id, m.notes.id].sort());
      const page = ok(await api.vector({ vector: embedding, similarity_threshold: 0, limit: 2, offset: 1 }));
      expect(ids(page.results)).toEqual(ids(all.results).slice(1, 3));
      expect(page.pagination).toEqual({ total: 4, limit: 2, offset: 1, has_more: true });
      expect(ok(await api.vector({ vector: embedding, similarity_threshold: 0.99999 })).results.map((r: Json) => r.id)).toEqual([m.checklist.id]);
    });

    it('accepts any 1536 finite numbers', async () => {
      let seed = 42;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
      const vector = Array.from({ length: 1536 }, random);
      const data = ok(await api.vector({ vector, similarity_threshold: 0 }));
      expect(data.pagination.total).toBe(4);
      for (const r of data.results) {
        expect(r.similarity_score).toBeGreaterThanOrEqual(0);
        expect(r.similarity_score).toBeLessThanOrEqual(1);
      }
      expect(ok(await api.vector({ vector })).results.every((r: Json) => r.similarity_score >= 0.7)).toBe(true);
    });
  });

  describe('GET /v1/search/suggestions', () => {
    it('suggests past queries by frequency, scored', async () => {
      for (const q of ['deploy pipeline', 'Deploy  Pipeline', 'deploy pipeline', 'deployment', 'DEPLOYMENT', 'deploy rollback', 'lunch']) {
        ok(await api.search({ q }));
      }
      const data = ok(await api.suggestions({ q: 'dep' }));
      expect(data).toEqual({
        query: 'dep',
        suggestions: [
          { text: 'deploy pipeline', type: 'query', frequency: 3, score: 1 },
          { text: 'deployment', type: 'query', frequency: 2, score: 0.8 },
          { text: 'deploy rollback', type: 'query', frequency: 1, score: 0.6 },
        ],
      });
      // Vector searches have no text and never show up.
      const { embedding } = ok(await api.embed({ text: 'deploy' }));
      ok(await api.vector({ vector: embedding }));
      expect(ok(await api.suggestions({ q: 'DEPLOY', type: 'query', limit: 2 })).suggestions.map((s: Json) => s.text))
        .toEqual(['deploy pipeline', 'deployment']);
      expect(ok(await api.suggestions({ q: 'zzz' })).suggestions).toEqual([]);
    });

    it('suggests tags and titles, prefix matches scored above inner matches', async () => {
      await create('Deploy checklist', 'A second copy', ['ops', 'onboarding'], {});
      const tags = ok(await api.suggestions({ q: 'o', type: 'tag' }));
      expect(tags.suggestions).toEqual([
        { text: 'ops', type: 'tag', frequency: 3, score: 1 },
        { text: 'onboarding', type: 'tag', frequency: 1, score: 0.6 },
      ]);
      const titles = ok(await api.suggestions({ q: 'deploy', type: 'title', limit: 20 }));
      expect(titles.suggestions).toEqual([
        { text: 'Deploy checklist', type: 'title', frequency: 2, score: 1 },
        { text: 'Deploy rollback', type: 'title', frequency: 1, score: 0.7 },
        { text: 'Pipeline deploy notes', type: 'title', frequency: 1, score: 0.5 },
      ]);
      expect(ok(await api.suggestions({ q: 'deploy', type: 'title', limit: 1 })).suggestions).toHaveLength(1);
    });
  });

  describe('POST /v1/embeddings', () => {
    it('embeds a text at 1536 dimensions with its token count', async () => {
      const res = await api.embed({ text: 'The quick brown fox' });
      const data = ok(res);
      expect(Object.keys(data).sort()).toEqual(['dimensions', 'embedding', 'model', 'text', 'token_count']);
      expect(data).toMatchObject({ text: 'The quick brown fox', model: 'mnemo-embed-1536', dimensions: 1536 });
      expect(data.embedding).toHaveLength(1536);
      for (const x of data.embedding) expect(Number.isFinite(x)).toBe(true);
      expect(Math.hypot(...data.embedding)).toBeCloseTo(1, 4);
      expect(Number.isInteger(data.token_count)).toBe(true);
      expect(data.token_count).toBeGreaterThan(0);
      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
      // Deterministic: the same text gives the same vector.
      expect(ok(await api.embed({ text: 'The quick brown fox', model: 'mnemo-embed-1536' })).embedding).toEqual(data.embedding);
    });

    it('serves the other models, the deprecated one with Deprecation and Sunset headers', async () => {
      const wide = ok(await api.embed({ text: 'hello world', model: 'mnemo-embed-1024' }));
      expect(wide).toMatchObject({ model: 'mnemo-embed-1024', dimensions: 1024 });
      expect(wide.embedding).toHaveLength(1024);
      const res = await api.embed({ text: 'hello world', model: 'mnemo-embed-768' });
      const old = ok(res);
      expect(old).toMatchObject({ model: 'mnemo-embed-768', dimensions: 768 });
      expect(old.embedding).toHaveLength(768);
      expect(res.headers.deprecation).toBe('true');
      expect(res.headers.sunset).toBe('Mon, 01 Nov 2027 00:00:00 GMT');
      expect(res.headers.link).toBe('</docs>; rel="deprecation"');
      // Padding keeps cosine: the narrower model's vector is a prefix of the wider one's.
      expect(wide.embedding.slice(0, 768)).toEqual(old.embedding);
    });

    it('needs only a valid key, no scope', async () => {
      const narrow = g4(t.app, await t.key({ tenant: t.tenant, scopes: ['secrets:read'] }));
      expect(ok(await narrow.embed({ text: 'x' })).dimensions).toBe(1536);
    });
  });

  it('echoes X-Request-Id in meta and documents G4 in /openapi.json', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/search?q=deploy', headers: { ...api.headers, 'x-request-id': 'my-trace.1' } });
    expect(ok(res)).toHaveProperty('results');
    expect((res.json() as Json).meta.request_id).toBe('my-trace.1');

    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
    for (const [path, method] of [['/v1/search', 'get'], ['/v1/search/vector', 'post'], ['/v1/search/suggestions', 'get'], ['/v1/embeddings', 'post']] as const) {
      const op = spec.paths[path]?.[method];
      expect(op, path).toBeDefined();
      expect(op.tags).toEqual(['G4 search and discovery']);
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(op.responses['200']).toBeDefined();
      expect(op.responses['400']).toBeDefined();
    }
    const params = spec.paths['/v1/search'].get.parameters as Json[];
    expect(params.find((p) => p.name === 'q')).toMatchObject({ required: true });
    expect(params.find((p) => p.name === 'limit')).toMatchObject({ required: false, schema: { minimum: 1, maximum: 50, default: 10 } });
    expect(params.map((p) => p.name)).toEqual(expect.arrayContaining(['similarity_threshold', 'tags', 'created_after', 'created_before',
      'include_content', 'highlight', 'offset', 'metadata_filter']));
  });
});

describe('G4 mappers', () => {
  it('previews content at about 200 characters on a word boundary', () => {
    expect(contentPreview('short')).toBe('short');
    expect(contentPreview('x'.repeat(200))).toBe('x'.repeat(200));
    expect(contentPreview('x'.repeat(201))).toBe(`${'x'.repeat(200)}…`);
    const words = 'word '.repeat(60);
    const preview = contentPreview(words);
    expect(preview).toBe(`${'word '.repeat(40).trimEnd()}…`);
    // A word ending exactly at the limit is kept whole.
    expect(contentPreview(`${'y'.repeat(195)} abcd efgh`)).toBe(`${'y'.repeat(195)} abcd…`);
    // Never half a surrogate pair.
    const emoji = contentPreview(`${'z'.repeat(199)}😀${'z'.repeat(10)}`);
    expect(emoji).toBe(`${'z'.repeat(199)}…`);
  });

  it('scores suggestions by frequency and prefix, best first', () => {
    const scored = scoreSuggestions([
      { text: 'Release notes', frequency: 1 }, { text: 'pre-release', frequency: 4 }, { text: 'release plan', frequency: 2 },
    ], ' RELEASE ', 'title');
    expect(scored).toEqual([
      { text: 'pre-release', type: 'title', frequency: 4, score: 0.8 },
      { text: 'release plan', type: 'title', frequency: 2, score: 0.7 },
      { text: 'Release notes', type: 'title', frequency: 1, score: 0.55 },
    ]);
    expect(scoreSuggestions([], 'x', 'query')).toEqual([]);
    expect(scoreSuggestions([{ text: 'abc', frequency: 3 }, { text: 'abd', frequency: 1 }], 'ab', 'tag').map((s) => s.score)).toEqual([1, 0.6]);
  });
});
