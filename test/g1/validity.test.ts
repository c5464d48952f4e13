import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';

/**
 * Validity on the REST surfaces (docs/memory-lifecycle.md): valid_from / valid_until written through G1 and read back;
 * a memory past its valid_until is left out of G1 list and search, G3 semantic / hybrid / batch, G2's keyword search and
 * G4 search and suggestions, and comes back with include_expired (marked `validity`) or an as_of when it held. One app,
 * one manual clock, one tenant: the steps build on each other.
 */
describe('validity: valid_from, valid_until, as_of and include_expired on G1-G4', () => {
  let t: TestApp;
  let key: string;
  let api: ReturnType<typeof g1>;
  const clock = new ManualClock(Date.UTC(2026, 0, 10, 12, 0, 0));
  const T0 = '2026-01-10T12:00:00.000Z';
  const HOUR = 3_600_000;
  const PARKING = 'Visitors park in lot B behind the warehouse';
  let parking: string;
  let lunch: string;
  const bearer = () => ({ authorization: `Bearer ${key}` });
  const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, headers: bearer(), payload });
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer() });
  const idsOf = (items: Json[]) => items.map((i) => i.id as string);

  beforeAll(async () => {
    t = await createTestApp({ overrides: { clock } });
    key = await t.freshTenant();
    api = g1(t.app, key);
    const a = await api.create({ title: 'Parking rule', content: PARKING, tags: ['parking'], valid_until: '2026-01-10T13:00:00Z' });
    expect(a.statusCode, a.body).toBe(201);
    parking = json(a).data.id as string;
    clock.advance(1000);
    const b = await api.create({ title: 'Lunch', content: 'Lunch is served at noon in the canteen', valid_from: '2026-01-01' });
    expect(b.statusCode, b.body).toBe(201);
    lunch = json(b).data.id as string;
  });
  afterAll(() => t.close());

  it('round-trips valid_from and valid_until; a plain create is valid from its creation, open-ended, version 1', async () => {
    const got = json(await api.get(parking)).data;
    expect(got).toMatchObject({ valid_from: T0, valid_until: '2026-01-10T13:00:00.000Z', superseded_by: null, version: 1 });
    expect(json(await api.get(lunch)).data).toMatchObject({ valid_from: '2026-01-01T00:00:00.000Z', valid_until: null, version: 1 });
    const listed = json(await api.list()).data as Json[];
    expect(listed.find((m) => m.id === parking)).toMatchObject({ valid_until: '2026-01-10T13:00:00.000Z', superseded_by: null, version: 1 });
    expect(listed[0]).not.toHaveProperty('validity');
  });

  it('refuses bad bounds and a bad as_of with 400 VALIDATION_ERROR naming the field', async () => {
    const fieldsOf = (res: { body: string }) => (JSON.parse(res.body).error.details as Json[]).map((d) => d.field);
    const badFrom = await api.create({ title: 'x', content: 'y', valid_from: 'yesterday' });
    expect(badFrom.statusCode).toBe(400);
    expect(json(badFrom).error.code).toBe('VALIDATION_ERROR');
    expect(fieldsOf(badFrom)).toContain('valid_from');
    const backwards = await api.create({ title: 'x', content: 'y', valid_from: '2026-02-01', valid_until: '2026-01-01' });
    expect(backwards.statusCode).toBe(400);
    expect(fieldsOf(backwards)).toContain('valid_until');
    const badAsOf = await api.list('as_of=last-week');
    expect(badAsOf.statusCode).toBe(400);
    expect(fieldsOf(badAsOf)).toEqual(['as_of']);
    const g3 = await post('/api/v1/search', { query: 'parking', as_of: 'soon' });
    expect(g3.statusCode).toBe(400);
    expect(json(g3).error.details.map((d: Json) => d.field)).toEqual(['as_of']);
    const g4 = await get('/v1/search?q=parking&include_expired=maybe');
    expect(g4.statusCode).toBe(400);
    expect(json(g4).error.code).toBe('VALIDATION_ERROR');
  });

  it('leaves an expired memory out of G1 list and search; include_expired marks it; as_of answers the past', async () => {
    clock.set(Date.parse(T0) + 2 * HOUR);
    const now = json(await api.list());
    expect(idsOf(now.data)).toEqual([lunch]);
    expect(now.pagination.total).toBe(1);

    const all = json(await api.list('include_expired=true')).data as Json[];
    expect(Object.fromEntries(all.map((m) => [m.id, m.validity]))).toEqual({ [parking]: 'expired', [lunch]: 'valid' });

    // As of 12:30 the parking rule held; as of 5 January neither memory existed yet (the "existed then" rule).
    expect(idsOf(json(await api.list('as_of=2026-01-10T12:30:00Z')).data).sort()).toEqual([lunch, parking].sort());
    expect(json(await api.list('as_of=2026-01-05')).pagination.total).toBe(0);
    const marked = json(await api.list('as_of=2026-01-05&include_expired=true')).data as Json[];
    expect(marked.every((m) => m.validity === 'not_yet_valid')).toBe(true);

    const search = (extra: object = {}) => api.search({ query: PARKING, threshold: 0.5, ...extra });
    expect(idsOf(json(await search()).data.results)).not.toContain(parking);
    const expired = json(await search({ include_expired: true })).data.results as Json[];
    expect(expired.find((r) => r.id === parking)).toMatchObject({ validity: 'expired', valid_until: '2026-01-10T13:00:00.000Z' });
    expect(idsOf(json(await search({ as_of: '2026-01-10T12:30:00Z' })).data.results)).toContain(parking);
  });

  it('applies to G3 semantic, hybrid and batch search, G2 keyword search and G4 search and suggestions', async () => {
    clock.set(Date.parse(T0) + 3 * HOUR);
    const matchIds = async (url: string, body: object) => {
      const res = await post(url, body);
      expect(res.statusCode, res.body).toBe(200);
      return json(res);
    };
    // G3 semantic: gone; include_expired brings it back marked, with its lifecycle fields.
    expect(idsOf((await matchIds('/api/v1/search', { query: PARKING })).matches)).not.toContain(parking);
    const semantic = (await matchIds('/api/v1/search', { query: PARKING, include_expired: true })).matches as Json[];
    expect(semantic.find((m) => m.id === parking)).toMatchObject({
      validity: 'expired', valid_from: T0, valid_until: '2026-01-10T13:00:00.000Z', superseded_by: null, version: 1,
    });
    // G3 hybrid: gone now, there as of 12:30 (no marker without include_expired).
    expect(idsOf((await matchIds('/api/v1/search/hybrid', { query: 'visitors park warehouse', threshold: 0 })).matches)).not.toContain(parking);
    const past = (await matchIds('/api/v1/search/hybrid', { query: 'visitors park warehouse', threshold: 0, as_of: '2026-01-10T12:30:00Z' })).matches as Json[];
    expect(past.find((m) => m.id === parking)).not.toHaveProperty('validity');
    expect(idsOf(past)).toContain(parking);
    // G3 batch: the batch-wide include_expired, and an item's own as_of.
    const batch = await matchIds('/api/v1/search/batch', {
      include_expired: true,
      searches: [{ query: PARKING }, { query: PARKING, include_expired: false }, { query: PARKING, as_of: '2026-01-10T12:30:00Z', include_expired: false }],
    });
    const [marked, plain, then] = (batch.results as Json[]).map((r) => r.matches as Json[]);
    expect(marked!.find((m) => m.id === parking)?.validity).toBe('expired');
    expect(idsOf(plain!)).not.toContain(parking);
    expect(idsOf(then!)).toContain(parking);
    // Keyword search (G2's search_mode text) goes through the same core: gone by default.
    const text = await matchIds('/api/v1/memory/search', { query: 'warehouse', search_mode: 'text' });
    expect(text.results.map((r: Json) => r.id)).not.toContain(`mem_${parking}`);
    const lunchByText = await matchIds('/api/v1/memory/search', { query: 'canteen', search_mode: 'text' });
    expect(lunchByText.results.map((r: Json) => r.id)).toContain(`mem_${lunch}`);

    // G4 search: the spec's item unchanged by default; with include_expired, marked with its lifecycle fields.
    const g4 = json(await get(`/v1/search?q=${encodeURIComponent(PARKING)}&similarity_threshold=0.5`)).data.results as Json[];
    expect(idsOf(g4)).not.toContain(parking);
    for (const item of g4) expect(item).not.toHaveProperty('valid_from');
    const g4All = json(await get(`/v1/search?q=${encodeURIComponent(PARKING)}&similarity_threshold=0.5&include_expired=true`)).data.results as Json[];
    expect(g4All.find((i) => i.id === parking)).toMatchObject({ validity: 'expired', valid_until: '2026-01-10T13:00:00.000Z' });
    // G4 suggestions of titles and tags: only from memories valid now, unless include_expired or an as_of when it held.
    const suggest = async (query: string) => (json(await get(`/v1/search/suggestions?${query}`)).data.suggestions as Json[]).map((s) => s.text);
    expect(await suggest('q=Park&type=title')).toEqual([]);
    expect(await suggest('q=Park&type=title&include_expired=true')).toEqual(['Parking rule']);
    expect(await suggest('q=park&type=tag&as_of=2026-01-10T12:30:00Z')).toEqual(['parking']);
  });

  it('update moves the bounds: valid_until null reopens a memory (a new version)', async () => {
    const reopened = await api.update(parking, { valid_until: null });
    expect(reopened.statusCode, reopened.body).toBe(200);
    expect(json(reopened).data).toMatchObject({ valid_until: null, version: 2 });
    expect(idsOf(json(await api.list()).data).sort()).toEqual([lunch, parking].sort());
    const closed = await api.update(lunch, { valid_until: '2026-01-10T14:00:00Z' });
    expect(json(closed).data).toMatchObject({ valid_from: '2026-01-01T00:00:00.000Z', valid_until: '2026-01-10T14:00:00.000Z' });
    expect(idsOf(json(await api.list()).data)).toEqual([parking]);
  });
});
