import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';
import { expectG2Error, g2 } from './client.ts';

/**
 * The lifecycle (docs/memory-lifecycle.md) where a surface has no field of its own for it: G2 through
 * `metadata.valid_from` / `valid_until` / `supersedes` (never stored as metadata, shown back on reads), G6 batch
 * operations (supersedes atomic with the create), and the memory.superseded type on G9 webhooks.
 */
describe('lifecycle through G2 metadata, G6 batches and G9 webhooks', () => {
  let t: TestApp;
  let key: string;
  let legacy: ReturnType<typeof g2>;
  let api: ReturnType<typeof g1>;
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 8, 0, 0));
  const batch = (operations: unknown[], options: object = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: { authorization: `Bearer ${key}` }, payload: { operations, options } });

  beforeAll(async () => {
    t = await createTestApp({ overrides: { clock } });
    key = await t.freshTenant();
    legacy = g2(t.app, key);
    api = g1(t.app, key);
  });
  afterAll(() => t.close());

  describe('G2', () => {
    it('reads metadata.valid_from / valid_until as the validity, keeps them out of the stored metadata, shows them on reads', async () => {
      const res = await legacy.create({ text: 'Support hours are 9 to 5', metadata: { type: 'knowledge', source: 'wiki', valid_from: '2026-01-01', valid_until: '2026-12-31T00:00:00Z' } });
      expect(res.statusCode, res.body).toBe(201);
      const id = json(res).id as string;
      const got = json(await legacy.get(id));
      expect(got.metadata).toEqual({
        type: 'knowledge', tags: [], source: 'wiki', valid_from: '2026-01-01T00:00:00.000Z', valid_until: '2026-12-31T00:00:00.000Z',
      });
      const onG1 = json(await api.get(id.slice(4))).data;
      expect(onG1.metadata).toEqual({ source: 'wiki' });
      expect(onG1).toMatchObject({ valid_from: '2026-01-01T00:00:00.000Z', valid_until: '2026-12-31T00:00:00.000Z' });

      // A memory written without them reads exactly as before: no lifecycle key in its metadata.
      const plain = json(await legacy.create({ text: 'Plain memory', metadata: { source: 'chat' } })).id as string;
      expect(json(await legacy.get(plain)).metadata).toEqual({ type: 'context', tags: [], source: 'chat' });

      // Update: valid_until moves, null reopens; absent leaves it as it is.
      clock.advance(1000);
      expect((await legacy.update(id, { metadata: { type: 'knowledge', source: 'wiki', valid_until: null } })).statusCode).toBe(200);
      expect(json(await legacy.get(id)).metadata).not.toHaveProperty('valid_until');
      expect((await legacy.update(id, { metadata: { type: 'knowledge', source: 'intranet' } })).statusCode).toBe(200);
      expect(json(await legacy.get(id)).metadata).toMatchObject({ source: 'intranet', valid_from: '2026-01-01T00:00:00.000Z' });

      const bad = expectG2Error(await legacy.create({ text: 'x', metadata: { valid_from: 'soon', supersedes: 'abc' } }), 400, 'INVALID_REQUEST');
      expect(bad.details.invalid_fields.map((f: Json) => f.field).sort()).toEqual(['metadata.supersedes', 'metadata.valid_from']);
      const onUpdate = expectG2Error(await legacy.update(id, { metadata: { supersedes: [plain] } }), 400, 'INVALID_REQUEST');
      expect(onUpdate.details.invalid_fields.map((f: Json) => f.field)).toEqual(['metadata.supersedes']);
    });

    it('metadata.supersedes (any G2 id) replaces memories on create; list and search then leave them out', async () => {
      clock.advance(60_000);
      expect((await legacy.create({ id: 'addr-1', text: 'The office is at 12 Elm Street', metadata: { tags: ['office'] } })).statusCode).toBe(201);
      clock.advance(60_000);
      const next = await legacy.create({ id: 'addr-2', text: 'The office is at 40 Oak Avenue', metadata: { tags: ['office'], supersedes: ['addr-1'] } });
      expect(next.statusCode, next.body).toBe(201);
      expect(json(next).metadata).not.toHaveProperty('supersedes');
      const newId = json(await legacy.get('addr-2')).metadata;
      expect(newId).toEqual({ type: 'context', tags: ['office'] });
      const old = json(await legacy.get('addr-1'));
      expect(old.metadata).toMatchObject({ superseded_by: expect.stringMatching(/^mem_[0-9a-f-]{36}$/), valid_until: json(next).created_at });

      const listed = json(await t.app.inject({ method: 'GET', url: '/api/v1/memory?tags=office', headers: { authorization: `Bearer ${key}` } }));
      expect(listed.data.map((m: Json) => m.id)).toEqual(['addr-2']);
      const found = json(await t.app.inject({ method: 'POST', url: '/api/v1/memory/search', headers: { authorization: `Bearer ${key}` }, payload: { query: 'The office is at', threshold: 0.3 } }));
      expect(found.results.map((m: Json) => m.id)).toContain('addr-2');
      expect(found.results.map((m: Json) => m.id)).not.toContain('addr-1');

      // An unknown id in supersedes: 404, and nothing is written.
      expectG2Error(await legacy.create({ id: 'addr-3', text: 'Somewhere else', metadata: { supersedes: ['no-such-memory'] } }), 404, 'NOT_FOUND');
      expectG2Error(await legacy.get('addr-3'), 404, 'NOT_FOUND');
    });
  });

  describe('G6', () => {
    it('a create with supersedes is atomic with the batch: a bad id fails every operation, a good one supersedes', async () => {
      clock.advance(60_000);
      const old = json(await api.create({ title: 'Price', content: 'The basic plan costs 10 euros' })).data;
      clock.advance(60_000);
      const failed = await batch([
        { type: 'create', data: { title: 'Price', content: 'The basic plan costs 12 euros', supersedes: [old.id] } },
        { type: 'create', data: { content: 'Unrelated', supersedes: ['00000000-0000-4000-8000-000000000000'] } },
      ], { atomic: true });
      expect(failed.statusCode, failed.body).toBe(207);
      const [first, second] = json(failed).data.operations as Json[];
      expect(first).toMatchObject({ status: 'failed', error: { code: 'ROLLED_BACK' } });
      expect(second).toMatchObject({ status: 'failed', error: { code: 'MEMORY_NOT_FOUND' } });
      expect(json(await api.get(old.id)).data.superseded_by).toBeNull();

      const ok = await batch([
        { type: 'create', data: { title: 'Price', content: 'The basic plan costs 12 euros', supersedes: [old.id], valid_until: '2027-01-01' } },
        { type: 'update', id: old.id, data: { tags: ['pricing'] } },
      ], { atomic: true });
      expect(ok.statusCode, ok.body).toBe(200);
      const created = json(ok).data.operations[0].result.id as string;
      expect(json(await api.get(old.id)).data).toMatchObject({ superseded_by: created, tags: ['pricing'] });
      expect(json(await api.get(created)).data.valid_until).toBe('2027-01-01T00:00:00.000Z');

      const searched = await batch([
        { type: 'search', query: 'The basic plan costs 10 euros', options: { threshold: 0.5 } },
        { type: 'search', query: 'The basic plan costs 10 euros', options: { threshold: 0.5, include_expired: true } },
        { type: 'search', query: 'x', options: { as_of: 'later' } },
        { type: 'read', id: old.id },
      ], { continue_on_error: true });
      const [plain, all, bad, read] = json(searched).data.operations as Json[];
      expect(plain!.result.results.map((r: Json) => r.id)).not.toContain(old.id);
      expect(all!.result.results.find((r: Json) => r.id === old.id)).toMatchObject({ validity: 'superseded' });
      expect(bad).toMatchObject({ status: 'failed', error: { code: 'VALIDATION_ERROR', details: { fields: [{ field: 'options.as_of' }] } } });
      expect(read!.result).toMatchObject({ id: old.id, superseded_by: created, version: 2 });
    });
  });

  it('G9 webhooks and the G8 stream accept memory.superseded', async () => {
    const hook = await t.app.inject({
      method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` },
      payload: { url: 'https://hooks.example.com/mnemo', events: ['memory.superseded'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    expect(json(hook).data.events).toEqual(['memory.superseded']);
    // G8 (a stream of memory.superseded is opened in test/g1/supersede-history.test.ts): only the unknown type is refused.
    const stream = await t.app.inject({
      method: 'GET', url: '/api/v1/stream?events=memory.superseded,memory.bogus', headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    });
    expect(stream.statusCode).toBe(400);
    const details = json(stream).error.details as Json[];
    expect(details).toHaveLength(1);
    expect(details[0]!.message).toContain('memory.bogus');
  });
});
