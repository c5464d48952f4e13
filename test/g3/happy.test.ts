import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { HYBRID_METHOD_PLAIN, HYBRID_METHOD_RERANK } from '../../src/core/search/search.service.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { expectG3Error, fieldsOf, g3, ids } from './client.ts';

/** The hashing embedder, slowed down and counting how many embeds run at once. */
function concurrencyProbe(delayMs: number): Embedder & { maxInFlight: number } {
  const inner = createHashingEmbedder({ dimensions: 256 });
  let inFlight = 0;
  const probe = {
    maxInFlight: 0,
    modelId: inner.modelId,
    dimensions: inner.dimensions,
    async embed(texts: readonly string[]) {
      inFlight++;
      probe.maxInFlight = Math.max(probe.maxInFlight, inFlight);
      try {
        await new Promise((r) => setTimeout(r, delayMs));
        return await inner.embed(texts);
      } finally {
        inFlight--;
      }
    },
    close: () => inner.close(),
  };
  return probe;
}

describe('G3 happy paths', () => {
  let t: TestApp;
  const scope = (workspace = 'default') => ({ tenantId: t.tenant, mode: 'live' as const, workspace });
  let key: string;
  let api: ReturnType<typeof g3>;
  let writer: ReturnType<typeof g1>;
  let clock: ManualClock;
  const mk = async (title: string, content: string, extra: object = {}, headers: Record<string, string> = {}) => {
    clock.advance(60_000);
    const res = await g1(t.app, key, headers).create({ title, content, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return json(res).data.id as string;
  };

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 0, 10, 12, 0, 0)); // each test starts at the same time, as with an app of its own
    key = await t.freshTenant();
    api = g3(t.app, key);
    writer = g1(t.app, key);
  });

  describe('POST /api/v1/search', () => {
    it('answers best first above the threshold, in the bare G3 shape, and logs the search', async () => {
      const deploy = await mk('Deploy checklist', 'Run the deploy pipeline and watch the deploy dashboard', { metadata: { team: 'ops' } });
      const rollback = await mk('Deploy rollback', 'How to roll back a failed deploy pipeline');
      await mk('Lunch', 'Sandwich shop on the corner has good soup');

      const res = await api.search({ query: 'deploy pipeline', threshold: 0.55 });
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(['matches', 'query_embedding_time', 'search_time', 'total']);
      expect(ids(body.matches).sort()).toEqual([deploy, rollback].sort());
      expect(body.total).toBe(2);
      const scores = body.matches.map((m: Json) => m.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      for (const s of scores) {
        expect(s).toBeGreaterThanOrEqual(0.55);
        expect(s).toBeLessThanOrEqual(1);
        expect(Math.round(s * 1e6) / 1e6).toBe(s);
      }
      const first = body.matches.find((m: Json) => m.id === deploy);
      expect(Object.keys(first).sort()).toEqual(['highlights', 'id', 'metadata', 'score', 'superseded_by', 'text', 'title', 'valid_from', 'valid_until', 'version']);
      expect(first.text).toBe('Run the deploy pipeline and watch the deploy dashboard');
      expect(first.metadata).toEqual({ team: 'ops', type: 'context', tags: [] });
      expect(first.highlights.join(' ')).toContain('<mark>deploy</mark>');
      expect(first.highlights.join(' ')).toContain('<mark>pipeline</mark>');
      for (const k of ['query_embedding_time', 'search_time']) {
        expect(typeof body[k]).toBe('number');
        expect(body[k]).toBeGreaterThanOrEqual(0);
        expect(Math.round(body[k] * 100) / 100).toBe(body[k]);
      }

      // A threshold between the two scores keeps only the better one; the default is 0.7.
      const between = (scores[0] + scores[1]) / 2;
      expect(json(await api.search({ query: 'deploy pipeline', threshold: between })).matches).toEqual([body.matches[0]]);
      const everything = json(await api.search({ query: 'deploy pipeline', threshold: 0 })).matches;
      expect(everything).toHaveLength(3);
      expect(json(await api.search({ query: 'deploy pipeline' })).matches).toEqual(everything.filter((m: Json) => m.score >= 0.7));
      expect(everything.filter((m: Json) => m.score >= 0.7).length).toBeLessThan(3);
      const capped = json(await api.search({ query: 'deploy pipeline', threshold: 0, topK: 1 }));
      expect(capped.matches).toHaveLength(1);
      expect(capped.total).toBe(3);

      await t.container.search.flushLog(); // the search log is written in batches
      const logged = await t.container.storage.searchLog.suggestQueries(scope(), 'deploy', 10);
      expect(logged).toContainEqual({ text: 'deploy pipeline', frequency: 5 });
    });

    it('filters by type (one or several)', async () => {
      const a = await mk('Deploy notes', 'deploy notes', { memory_type: 'workflow' });
      const b = await mk('Deploy notes', 'deploy notes', { memory_type: 'project' });
      await mk('Deploy notes', 'deploy notes', { memory_type: 'knowledge' });
      const q = (filters: object) => api.search({ query: 'deploy notes', threshold: 0, filters }).then((r) => ids(json(r).matches).sort());
      expect(await q({ type: 'workflow' })).toEqual([a]);
      expect(await q({ type: ['workflow', 'project'] })).toEqual([a, b].sort());
      expect(await q({ type: 'meeting' })).toEqual([]);
    });

    it('filters by tags: any-of (array or $in) and all-of ($all)', async () => {
      const both = await mk('Notes', 'deploy notes', { tags: ['ops', 'urgent'] });
      const ops = await mk('Notes', 'deploy notes', { tags: ['ops'] });
      const urgent = await mk('Notes', 'deploy notes', { tags: ['urgent'] });
      await mk('Notes', 'deploy notes', { tags: ['other'] });
      const q = (tags: unknown) => api.search({ query: 'deploy notes', threshold: 0, filters: { tags } }).then((r) => ids(json(r).matches).sort());
      expect(await q(['ops', 'urgent'])).toEqual([both, ops, urgent].sort());
      expect(await q({ $in: ['ops', 'urgent'] })).toEqual([both, ops, urgent].sort());
      expect(await q({ $all: ['ops', 'urgent'] })).toEqual([both]);
      expect(await q({ $all: ['ops'] })).toEqual([both, ops].sort());
      expect(await q({ $in: ['urgent'], $all: ['ops'] })).toEqual([both]);
    });

    it('filters by a creation date range, bounds inclusive', async () => {
      clock.set(Date.UTC(2026, 0, 31, 23, 0, 0));
      const jan31 = await mk('Notes', 'deploy notes'); // 23:01 on Jan 31
      clock.set(Date.UTC(2026, 1, 1, 11, 0, 0));
      const feb1 = await mk('Notes', 'deploy notes'); // 11:01 on Feb 1
      clock.set(Date.UTC(2026, 1, 2, 11, 0, 0));
      const feb2 = await mk('Notes', 'deploy notes');
      const q = (date: object) => api.search({ query: 'deploy notes', threshold: 0, filters: { date } }).then((r) => ids(json(r).matches).sort());
      expect(await q({ $gte: '2026-02-01' })).toEqual([feb1, feb2].sort());
      expect(await q({ $lte: '2026-01-31' })).toEqual([jan31]); // a date alone covers the whole UTC day
      expect(await q({ $gte: '2026-02-01T11:01:00.000Z', $lte: '2026-02-01T11:01:00.000Z' })).toEqual([feb1]);
      expect(await q({ $gte: '2026-01-31T23:30:00Z', $lte: '2026-02-02T00:00:00+00:00' })).toEqual([feb1]);
      expect(await q({ $gte: '2026-02-01', $lte: '2026-02-02' })).toEqual([feb1, feb2].sort());
    });

    it('filters by metadata: scalars, arrays (any of), nested keys with dots, numbers and booleans', async () => {
      const web = await mk('Notes', 'deploy notes', { metadata: { env: 'prod', source: { kind: 'web' }, priority: 2, pinned: true } });
      const api2 = await mk('Notes', 'deploy notes', { metadata: { env: 'staging', source: { kind: 'api' }, priority: 1, pinned: false } });
      const listed = await mk('Notes', 'deploy notes', { metadata: { env: ['dev', 'prod'] } });
      const q = (filters: object) => api.search({ query: 'deploy notes', threshold: 0, filters }).then((r) => ids(json(r).matches).sort());
      expect(await q({ env: 'prod' })).toEqual([web, listed].sort());
      expect(await q({ env: ['staging', 'dev'] })).toEqual([api2, listed].sort());
      expect(await q({ 'source.kind': 'api' })).toEqual([api2]);
      expect(await q({ priority: 2 })).toEqual([web]);
      expect(await q({ pinned: false })).toEqual([api2]);
      expect(await q({ env: 'prod', 'source.kind': 'web', type: 'context', tags: ['x'] })).toEqual([]);
      expect(await q({ env: 'prod', 'source.kind': 'web', type: 'context' })).toEqual([web]);
    });

    it('omits metadata when includeMetadata is false', async () => {
      await mk('Notes', 'deploy notes', { metadata: { secret: 'x' } });
      const m = json(await api.search({ query: 'deploy notes', includeMetadata: false })).matches;
      expect(m).toHaveLength(1);
      expect(m[0]).not.toHaveProperty('metadata');
      expect(m[0]).not.toHaveProperty('embedding');
      expect(Object.keys(m[0]).sort()).toEqual(['highlights', 'id', 'score', 'superseded_by', 'text', 'title', 'valid_from', 'valid_until', 'version']);
    });

    it('adds the stored vector zero-padded to 1536 numbers with includeEmbedding', async () => {
      const id = await mk('Notes', 'deploy notes');
      const stored = (await t.container.storage.memories.vectorsOf(scope(), [id], t.container.embedder.modelId)).get(id)!;
      expect(stored).toHaveLength(256);
      for (const res of [
        await api.search({ query: 'deploy notes', includeEmbedding: true }),
        await api.hybrid({ query: 'deploy notes', includeEmbedding: true }),
      ]) {
        expect(res.headers.deprecation).toBeUndefined();
        const [match] = json(res).matches;
        expect(match.embedding).toHaveLength(1536);
        expect(match.embedding.slice(0, 256)).toEqual(Array.from(stored));
        expect(match.embedding.slice(256).every((x: number) => x === 0)).toBe(true);
        expect(stored.some((x) => x !== 0)).toBe(true);
      }
      expect(json(await api.search({ query: 'deploy notes', includeEmbedding: false })).matches[0]).not.toHaveProperty('embedding');
    });

    it('accepts the deprecated includeVector, flagging it with Deprecation and Link headers', async () => {
      await mk('Notes', 'deploy notes');
      for (const res of [
        await api.search({ query: 'deploy notes', includeVector: true }),
        await api.hybrid({ query: 'deploy notes', includeVector: true }),
        await api.search({ query: 'deploy notes', includeVector: true, includeEmbedding: true }),
      ]) {
        expect(res.statusCode).toBe(200);
        expect(res.headers.deprecation).toBe('true');
        expect(res.headers.link).toBe('</docs>; rel="deprecation"');
        expect(json(res).matches[0].embedding).toHaveLength(1536);
      }
      const off = await api.search({ query: 'deploy notes', includeVector: false });
      expect(off.headers.deprecation).toBe('true');
      expect(json(off).matches[0]).not.toHaveProperty('embedding');
      const plain = await api.search({ query: 'deploy notes' });
      expect(plain.headers.deprecation).toBeUndefined();
      expect(plain.headers.link).toBeUndefined();
      const e = expectG3Error(await api.search({ query: 'deploy notes', includeVector: true, includeEmbedding: false }), 400, 'VALIDATION_ERROR');
      expect(fieldsOf(e)).toEqual(['includeVector']);
    });

    it('searches the workspace named by namespace or X-Workspace-ID, default `default`', async () => {
      const inWs = await mk('Notes', 'deploy notes in ws-1', {}, { 'x-workspace-id': 'ws-1' });
      const inDefault = await mk('Notes', 'deploy notes in default');
      const q = (body: object, headers: Record<string, string> = {}) =>
        g3(t.app, key, headers).search({ query: 'deploy notes', threshold: 0, ...body }).then((r) => ids(json(r).matches));
      expect(await q({})).toEqual([inDefault]);
      expect(await q({ namespace: 'default' })).toEqual([inDefault]);
      expect(await q({ namespace: 'ws-1' })).toEqual([inWs]);
      expect(await q({}, { 'x-workspace-id': 'ws-1' })).toEqual([inWs]);
      expect(await q({ namespace: 'ws-1' }, { 'x-workspace-id': 'ws-1' })).toEqual([inWs]);
      expect(await q({ namespace: 'ws-2' })).toEqual([]);
      const conflict = await g3(t.app, key, { 'x-workspace-id': 'ws-1' }).search({ query: 'deploy notes', namespace: 'default' });
      expect(fieldsOf(expectG3Error(conflict, 400, 'VALIDATION_ERROR'))).toEqual(['namespace']);
      // The search is logged in the workspace it ran in.
      await t.container.search.flushLog(); // the search log is written in batches
      expect(await t.container.storage.searchLog.suggestQueries(scope('ws-1'), 'deploy', 10)).toEqual([{ text: 'deploy notes', frequency: 3 }]);
    });
  });

  describe('POST /api/v1/search/hybrid', () => {
    let notes1: string; let notes2: string; let keywordOnly: string; let unrelated: string;
    beforeEach(async () => {
      notes1 = await mk('Meeting notes', 'Notes from the weekly meeting');
      notes2 = await mk('Team notes', 'Notes about the team');
      keywordOnly = await mk('Gardening', 'Tomatoes need sun and water; the code zqxv42 opens the shed near the roses and tulips');
      unrelated = await mk('Lunch', 'Sandwich shop on the corner has good soup');
    });

    it('finds a keyword-only hit that semantic search misses', async () => {
      const semantic = json(await api.search({ query: 'zqxv42 notes' }));
      expect(ids(semantic.matches)).not.toContain(keywordOnly);
      expect(semantic.matches.length).toBeGreaterThan(0);

      // At the default relevance floor: holding every informative query word ("notes" is in most memories, so its
      // idf is nil) makes it relevant whatever its similarity; the semantic hits stay too.
      const res = await api.hybrid({ query: 'zqxv42 notes' });
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(
        ['combined_score_method', 'keyword_results', 'matches', 'query_embedding_time', 'search_time', 'semantic_results', 'total']);
      expect(ids(body.matches)[0]).toBe(keywordOnly);
      expect(ids(body.matches)).not.toContain(unrelated);
      expect(body.total).toBe(body.matches.length);
      expect(body.matches[0].highlights.join(' ')).toContain('<mark>zqxv42</mark>');
      expect(body.matches[0].title).toBe('Gardening');
      expect(body.matches[0].score).toBeGreaterThanOrEqual(0.6);
      // Without a floor every candidate comes back, the unrelated one last.
      const all = json(await api.hybrid({ query: 'zqxv42 notes', rerank: false, threshold: 0 }));
      expect(ids(all.matches)).toHaveLength(4);
      expect(ids(all.matches)[0]).toBe(keywordOnly);
      expect(ids(all.matches)[3]).toBe(unrelated);
    });

    it('reports the candidate counts of each leg', async () => {
      const body = json(await api.hybrid({ query: 'zqxv42 notes', threshold: 0 }));
      expect(body.semantic_results).toBe(4);
      expect(body.keyword_results).toBe(3); // notes1, notes2 ("notes") and keywordOnly ("zqxv42")
      expect(json(await api.hybrid({ query: 'zqxv42' })).keyword_results).toBe(1);
      expect(json(await api.hybrid({ query: 'zqxv42', threshold: 0.55 })).semantic_results).toBe(1);
      for (const k of ['semantic_results', 'keyword_results', 'total']) expect(Number.isInteger(body[k])).toBe(true);
    });

    it('names the combination method, which rerank changes (how the two orders differ: test/services/search.service.test.ts)', async () => {
      const rrf = json(await api.hybrid({ query: 'zqxv42 notes', threshold: 0 }));
      const sum = json(await api.hybrid({ query: 'zqxv42 notes', rerank: false, threshold: 0 }));
      expect(rrf.combined_score_method).toBe(HYBRID_METHOD_RERANK);
      expect(sum.combined_score_method).toBe(HYBRID_METHOD_PLAIN);
      // "notes" is in half the memories (idf at the floor): with rerank only zqxv42 covers the query.
      expect(ids(rrf.matches)).toEqual([keywordOnly, notes2, notes1, unrelated]);
      expect(ids(sum.matches)).toEqual([keywordOnly, notes2, notes1, unrelated]);
      const scores = sum.matches.map((m: Json) => m.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });

    it('lets the weights change the order', async () => {
      const order = (semanticWeight: number, keywordWeight: number) =>
        api.hybrid({ query: 'zqxv42 notes', semanticWeight, keywordWeight, rerank: false, threshold: 0 }).then((r) => ids(json(r).matches));
      expect((await order(1, 0))[0]).toBe(notes2);
      expect((await order(0, 1))[0]).toBe(keywordOnly);
      const semanticOnly = json(await api.hybrid({ query: 'zqxv42 notes', semanticWeight: 1, keywordWeight: 0, rerank: false, threshold: 0 }));
      const plain = json(await api.search({ query: 'zqxv42 notes', threshold: 0 }));
      expect(semanticOnly.matches.map((m: Json) => m.score)).toEqual(plain.matches.map((m: Json) => m.score));
    });

    it('applies filters and namespace like /search, and logs a hybrid search', async () => {
      const tagged = await mk('Ops notes', 'zqxv42 notes for ops', { tags: ['ops'] }, { 'x-workspace-id': 'ws-9' });
      expect(ids(json(await api.hybrid({ query: 'zqxv42 notes', filters: { tags: ['ops'] } })).matches)).toEqual([]);
      expect(ids(json(await api.hybrid({ query: 'zqxv42 notes', namespace: 'ws-9', filters: { tags: ['ops'] } })).matches)).toEqual([tagged]);
      const noMeta = json(await api.hybrid({ query: 'zqxv42 notes', includeMetadata: false })).matches;
      expect(noMeta.every((m: Json) => !('metadata' in m))).toBe(true);
      await t.container.search.flushLog(); // the search log is written in batches
      expect(await t.container.storage.searchLog.suggestQueries(scope('ws-9'), 'zqxv42', 10)).toEqual([{ text: 'zqxv42 notes', frequency: 1 }]);
    });
  });

  describe('POST /api/v1/search/batch', () => {
    it('runs every valid search and marks the invalid one in its slot, keeping input order', async () => {
      const deploy = await mk('Deploy checklist', 'Run the deploy pipeline', { tags: ['ops'] });
      const soup = await mk('Lunch', 'Sandwich shop soup');
      const res = await api.batch({
        searches: [
          { query: 'deploy pipeline' },
          { query: 'x', topK: 0, filters: { date: { $gte: 'yesterday' } } },
          { query: 'sandwich shop soup', topK: 1, threshold: 0.6 },
          { query: 'deploy pipeline', filters: { tags: ['nope'] } },
        ],
      });
      expect(res.statusCode).toBe(200);
      const body = json(res);
      expect(Object.keys(body).sort()).toEqual(['results', 'total_time']);
      expect(typeof body.total_time).toBe('number');
      expect(body.results.map((r: Json) => r.query)).toEqual(['deploy pipeline', 'x', 'sandwich shop soup', 'deploy pipeline']);
      expect(ids(body.results[0].matches)).toEqual([deploy]);
      expect(body.results[0]).not.toHaveProperty('error');
      expect(body.results[0].matches[0]).toMatchObject({ text: 'Run the deploy pipeline', metadata: {} });
      expect(body.results[0].matches[0].highlights[0]).toContain('<mark>deploy</mark>');
      expect(body.results[1].matches).toEqual([]);
      expect(body.results[1].error.code).toBe('VALIDATION_ERROR');
      expect(fieldsOf(body.results[1].error)).toEqual(['searches[1].filters.date.$gte', 'searches[1].topK']);
      expect(ids(body.results[2].matches)).toEqual([soup]);
      expect(body.results[3].matches).toEqual([]);
      expect(body.results[3]).not.toHaveProperty('error');
      // Three searches ran and were logged; the invalid one was not.
      await t.container.search.flushLog(); // the search log is written in batches
      expect(await t.container.storage.searchLog.suggestQueries(scope(), '', 10)).toEqual(expect.arrayContaining([
        { text: 'deploy pipeline', frequency: 2 }, { text: 'sandwich shop soup', frequency: 1 },
      ]));
      await t.container.search.flushLog(); // the search log is written in batches
      expect(await t.container.storage.searchLog.suggestQueries(scope(), 'x', 10)).toEqual([]);
    });

    it('runs the searches concurrently', async () => {
      // Its own app: the embedder is a slow probe that counts concurrent calls.
      const probe = concurrencyProbe(50);
      const own = await createTestApp({ overrides: { clock, embedder: probe } });
      try {
        const res = await g3(own.app, await own.key()).batch({ searches: Array.from({ length: 5 }, (_, i) => ({ query: `query ${i}` })) });
        expect(res.statusCode).toBe(200);
        expect(json(res).results).toHaveLength(5);
        expect(probe.maxInFlight).toBeGreaterThan(1);
        expect(json(res).total_time).toBeGreaterThanOrEqual(50);
      } finally {
        await own.close();
      }
    });

    it('searches the namespace of the batch', async () => {
      const inWs = await mk('Notes', 'deploy notes', {}, { 'x-workspace-id': 'ws-1' });
      const q = { searches: [{ query: 'deploy notes' }] };
      expect(json(await api.batch(q)).results[0].matches).toEqual([]);
      expect(ids(json(await api.batch({ ...q, namespace: 'ws-1' })).results[0].matches)).toEqual([inWs]);
      expect(ids(json(await g3(t.app, key, { 'x-workspace-id': 'ws-1' }).batch(q)).results[0].matches)).toEqual([inWs]);
    });
  });

  it('documents G3 in /openapi.json', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    for (const path of ['/api/v1/search', '/api/v1/search/hybrid', '/api/v1/search/batch']) {
      const op = doc.paths[path]?.post;
      expect(op, path).toBeDefined();
      expect(op.tags).toEqual(['G3 search']);
      expect(op.security).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '408', '429', '503']));
    }
    const body = doc.paths['/api/v1/search'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['query']);
    expect(body.properties.includeVector.deprecated).toBe(true);
    expect(body.properties.topK).toMatchObject({ default: 10, minimum: 1, maximum: 100 });
    expect(body.properties.threshold.default).toBe(0.7);
    expect(body.properties.filters.properties).toHaveProperty('date');
  });

  it('keeps a G1 write visible to G3 search (one core)', async () => {
    const id = await mk('Runbook', 'restart the cache cluster');
    expect(ids(json(await api.search({ query: 'restart the cache cluster' })).matches)).toEqual([id]);
    await writer.update(id, { content: 'feed the office plants' });
    expect(json(await api.search({ query: 'restart the cache cluster' })).matches).toEqual([]);
  });
});
