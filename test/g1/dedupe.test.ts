import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { calibrationFor } from '../../src/core/search/score-calibration.ts';
import { createTestApp, g1, json, uniqueTenant, type TestApp } from '../support/test-app.ts';

/**
 * G1 deduplication (`dedupe: true` on create) and near-duplicates (`GET /api/v1/memories/:id/similar`):
 * happy paths, errors, and the scope rules (another tenant, mode or workspace is never matched nor shown).
 */
describe('G1 deduplication and similar memories', () => {
  let t: TestApp;
  let alice: ReturnType<typeof g1>;
  let key: string;
  let tenant: string;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => {
    tenant = uniqueTenant('dedupe');
    key = await t.key({ tenant, user: 'alice' });
    alice = g1(t.app, key);
  });
  const similar = (k: string, id: string, query = '', headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: `/api/v1/memories/${encodeURIComponent(id)}/similar${query ? `?${query}` : ''}`, headers: { 'x-api-key': k, ...headers } });

  describe('dedupe: true', () => {
    it('returns the stored memory (200, deduplicated: true) for identical content after whitespace normalisation', async () => {
      const first = await alice.create({ title: 'Release', content: 'We deploy with blue/green on Fridays', dedupe: true });
      expect(first.statusCode).toBe(201);
      expect(json(first)).toMatchObject({ success: true, deduplicated: false, data: { title: 'Release' } });
      const again = await alice.create({ title: 'Another title', content: '  We deploy with\nblue/green   on Fridays\t', tags: ['x'], dedupe: true });
      expect(again.statusCode).toBe(200);
      expect(json(again)).toMatchObject({ success: true, deduplicated: true, data: { id: json(first).data.id, title: 'Release', tags: [] } });
      expect(json(await alice.list()).pagination.total).toBe(1);
    });

    it('keeps the spec semantics without the flag: a second identical create stores a second copy (201, no deduplicated field)', async () => {
      await alice.create({ title: 'A', content: 'same text' });
      const second = await alice.create({ title: 'A', content: 'same text' });
      expect(second.statusCode).toBe(201);
      expect(json(second)).not.toHaveProperty('deduplicated');
      expect(json(await alice.list()).pagination.total).toBe(2);
      // With the flag, either copy is "the stored one": the oldest is returned.
      const dedup = await alice.create({ title: 'A', content: 'same text', dedupe: true });
      expect(dedup.statusCode).toBe(200);
      expect(json(await alice.list()).pagination.total).toBe(2);
    });

    it('stores different content, case included, as new memories', async () => {
      await alice.create({ title: 'A', content: 'Case Matters', dedupe: true });
      const other = await alice.create({ title: 'A', content: 'case matters', dedupe: true });
      expect(other.statusCode).toBe(201);
      expect(json(other).deduplicated).toBe(false);
    });

    it('stores one memory when identical creates race', async () => {
      const answers = await Promise.all(Array.from({ length: 6 }, () => alice.create({ title: 'R', content: 'raced', dedupe: true })));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(answers.map((a) => json(a).data.id)).size).toBe(1);
      expect(json(await alice.list()).pagination.total).toBe(1);
    });

    it('rejects a non-boolean flag and still validates the new memory before matching', async () => {
      await alice.create({ title: 'A', content: 'valid', dedupe: true });
      const bad = await alice.create({ title: 'A', content: 'valid', dedupe: 'yes' });
      expect(bad.statusCode).toBe(400);
      expect(json(bad).error.code).toBe('VALIDATION_ERROR');
      const noTitle = await alice.create({ content: 'valid', dedupe: true });
      expect(noTitle.statusCode).toBe(400);
      expect(json(noTitle).error.details.map((d: { field: string }) => d.field)).toContain('title');
    });

    it('never matches another tenant, mode or workspace', async () => {
      const mine = json(await alice.create({ title: 'Secret', content: 'the vault code is 1234', dedupe: true })).data;
      const bob = g1(t.app, await t.key({ tenant: uniqueTenant('bob'), user: 'bob' }));
      const sandbox = g1(t.app, await t.key({ tenant, user: 'alice', mode: 'test' }));
      const otherWorkspace = g1(t.app, key, { 'x-workspace-id': 'elsewhere' });
      for (const client of [bob, sandbox, otherWorkspace]) {
        const res = await client.create({ title: 'Probe', content: 'the vault code is 1234', dedupe: true });
        expect(res.statusCode).toBe(201);
        expect(json(res)).toMatchObject({ deduplicated: false, data: { title: 'Probe' } });
        expect(json(res).data.id).not.toBe(mine.id);
      }
    });
  });

  describe('GET /api/v1/memories/:id/similar', () => {
    it('lists the most similar other memories, best first, never the memory itself', async () => {
      const base = json(await alice.create({ title: 'Deploys', content: 'We deploy the api with blue green deployments on Fridays' })).data;
      const near = json(await alice.create({ title: 'Deploys', content: 'We deploy the api with blue green deployments on Friday' })).data;
      const far = json(await alice.create({ title: 'Cooking', content: 'Roast the vegetables at 200 degrees for forty minutes' })).data;
      const res = await similar(key, base.id, 'threshold=0');
      expect(res.statusCode).toBe(200);
      const data = json(res).data;
      expect(data.memory_id).toBe(base.id);
      expect(data.results.map((r: { id: string }) => r.id)).toEqual([near.id, far.id]);
      expect(data.results[0].similarity_score).toBeGreaterThan(data.results[1].similarity_score);
      expect(data.total).toBe(2);
      // A high threshold keeps the near-duplicate only; limit cuts the list, not total; a prefix works as in Get.
      const strict = json(await similar(key, base.id.slice(0, 8), 'threshold=0.9&limit=5')).data;
      expect(strict.results.map((r: { id: string }) => r.id)).toEqual([near.id]);
      expect(strict.total).toBe(1);
      const one = json(await similar(key, base.id, 'threshold=0&limit=1')).data;
      expect(one.results).toHaveLength(1);
      expect(one.total).toBe(2);
    });

    it('answers 404 for a missing id and 400 for bad parameters', async () => {
      const base = json(await alice.create({ title: 'A', content: 'x y z' })).data;
      expect((await similar(key, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
      expect(json(await similar(key, '00000000-0000-4000-8000-000000000000')).error.code).toBe('MEMORY_NOT_FOUND');
      for (const q of ['limit=0', 'limit=101', 'threshold=2', 'threshold=-0.1', 'limit=abc']) {
        const res = await similar(key, base.id, q);
        expect(res.statusCode, q).toBe(400);
        expect(json(res).error.code, q).toBe('VALIDATION_ERROR');
      }
      expect((await similar(key, 'abc')).statusCode).toBe(400);
      expect((await t.app.inject({ method: 'GET', url: `/api/v1/memories/${base.id}/similar` })).statusCode).toBe(401);
    });

    it('never shows or matches another tenant, mode or workspace', async () => {
      const mine = json(await alice.create({ title: 'Plan', content: 'quarterly revenue plan for the board' })).data;
      const bobKey = await t.key({ tenant: uniqueTenant('bob'), user: 'bob' });
      const bob = g1(t.app, bobKey);
      const theirs = json(await bob.create({ title: 'Plan', content: 'quarterly revenue plan for the board' })).data;
      // Bob cannot ask about Alice's memory: exactly like a missing one.
      const probe = await similar(bobKey, mine.id);
      expect(probe.statusCode).toBe(404);
      // Bob's identical memory never shows up among Alice's near-duplicates, nor a test-mode or other-workspace copy.
      await g1(t.app, await t.key({ tenant, user: 'alice', mode: 'test' })).create({ title: 'Plan', content: 'quarterly revenue plan for the board' });
      await g1(t.app, key, { 'x-workspace-id': 'w2' }).create({ title: 'Plan', content: 'quarterly revenue plan for the board' });
      const data = json(await similar(key, mine.id, 'threshold=0')).data;
      expect(data.results).toEqual([]);
      expect(data.total).toBe(0);
      expect(json(await similar(bobKey, theirs.id, 'threshold=0')).data.results).toEqual([]);
      // In the other workspace Alice's id is missing too.
      expect((await similar(key, mine.id, '', { 'x-workspace-id': 'w2' })).statusCode).toBe(404);
    });

    it('scores and thresholds on the calibrated scale, as G1 search does (docs/api.md, "Scores")', async () => {
      // A model with a measured calibration, whose relevant cosine lies below 0.4: a cosine between the two scores
      // at least 0.7 calibrated but less as (1 + cosine) / 2, so the two scales disagree on it at the threshold 0.7.
      const modelId = 'local:use-lite-512';
      const calibration = calibrationFor(modelId);
      const between = (calibration.relevantCosine + 0.4) / 2;
      expect(calibration.score(between)).toBeGreaterThan(0.7);
      expect((1 + between) / 2).toBeLessThan(0.7);
      const below = calibration.relevantCosine - 0.05;
      // Each text is embedded by its first line (a memory's title): unit vectors at the chosen cosines to `Base`.
      const byTitle: Record<string, number[]> = {
        Base: [1, 0, 0, 0],
        Between: [between, Math.sqrt(1 - between ** 2), 0, 0],
        Below: [below, 0, Math.sqrt(1 - below ** 2), 0],
      };
      const embedder: Embedder = {
        modelId, dimensions: 4, close: async () => {},
        embed: async (texts) => texts.map((text) => Float32Array.from(byTitle[text.split('\n')[0]!] ?? [0, 0, 0, 1])),
      };
      const own = await createTestApp({ overrides: { embedder } });
      try {
        const ownKey = await own.key({ tenant: uniqueTenant('calibrated') });
        const client = g1(own.app, ownKey);
        const ids = new Map<string, string>();
        for (const title of Object.keys(byTitle)) ids.set(title, json(await client.create({ title, content: `${title} memory` })).data.id);
        const base = ids.get('Base')!;
        const near = json(await own.app.inject({
          method: 'GET', url: `/api/v1/memories/${base}/similar?threshold=0.7`, headers: { 'x-api-key': ownKey },
        }));
        const searched = json(await client.search({ query: 'Base', threshold: 0.7 })).data;
        expect(near.data.results.map((r: { id: string }) => r.id)).toEqual([ids.get('Between')]);
        expect(near.data.total).toBe(1);
        expect(near.data.results[0].similarity_score).toBeCloseTo(calibration.score(between), 5);
        // The same memory, the same score and the same threshold as a search by the base memory's vector.
        expect(searched.results.map((r: { id: string }) => r.id)).toEqual([base, ids.get('Between')]);
        expect(searched.results[1].similarity_score).toBe(near.data.results[0].similarity_score);
      } finally {
        await own.close();
      }
    });
  });
});
