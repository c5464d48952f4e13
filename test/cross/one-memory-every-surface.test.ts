import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';

/** One record behind every generation: written on one surface, read, searched and deleted on the others. */
describe('one memory, every surface', () => {
  let t: TestApp;
  let key: string;
  const bearer = () => ({ authorization: `Bearer ${key}` });
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  beforeEach(async () => { key = await t.freshTenant(); });

  it('created by a G6 batch, read on G1 and G2, found on G1, G3 and G4, updated on G2, deleted on G1', async () => {
    const batch = await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: bearer(), payload: {
      operations: [{ type: 'create', data: { content: 'Lighthouse keepers log the weather every night', tags: ['coast'], metadata: { region: 'north' } } }],
    } });
    const id = json(batch).data.operations[0].result.id as string;

    expect(json(await g1(t.app, key).get(id)).data).toMatchObject({ title: 'Lighthouse keepers log the weather every night', tags: ['coast'], metadata: { region: 'north' } });
    const legacy = json(await t.app.inject({ method: 'GET', url: `/api/v1/memory/mem_${id}`, headers: bearer() }));
    expect(legacy).toMatchObject({ id: `mem_${id}`, text: 'Lighthouse keepers log the weather every night', metadata: { tags: ['coast'], region: 'north' } });

    const query = 'lighthouse keepers weather';
    const ids = (items: Json[]) => items.map((m) => m.id);
    expect(ids(json(await g1(t.app, key).search({ query, threshold: 0.6 })).data.results)).toEqual([id]);
    expect(ids(json(await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: bearer(), payload: { query, threshold: 0.6, filters: { region: 'north' } } })).matches)).toEqual([id]);
    expect(ids(json(await t.app.inject({ method: 'POST', url: '/api/v1/search/hybrid', headers: bearer(), payload: { query } })).matches)).toContain(id);
    expect(ids(json(await t.app.inject({ method: 'GET', url: `/v1/search?q=${encodeURIComponent(query)}&similarity_threshold=0.6&tags=coast`, headers: bearer() })).data.results)).toEqual([id]);

    const put = json(await t.app.inject({ method: 'PUT', url: `/api/v1/memory/mem_${id}`, headers: bearer(), payload: { text: 'Lighthouse keepers now log tides too' } }));
    expect(put).toMatchObject({ status: 'updated', embedding_regenerated: true });
    expect(json(await g1(t.app, key).get(id.slice(0, 8))).data.content).toBe('Lighthouse keepers now log tides too');

    expect((await g1(t.app, key).delete(id)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/memory/mem_${id}`, headers: bearer() })).statusCode).toBe(404);
    expect(json(await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: bearer(), payload: { query, threshold: 0 } })).matches).toEqual([]);
    const read = json(await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: bearer(), payload: { operations: [{ type: 'read', id }] } }));
    expect(read.data.operations[0].error.code).toBe('MEMORY_NOT_FOUND');
  });
});
