import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, json, type Json, type TestApp } from '../support/test-app.ts';

/** What a surface accepts as metadata reads back on every surface whose shape has metadata. */
describe('metadata reads back on every surface', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    const key = await t.key();
    headers = { authorization: `Bearer ${key}` };
  });
  afterAll(() => t.close());

  const text = 'Quarterly roadmap review with the platform team';
  const query = 'quarterly roadmap review platform';
  const search = {
    g3: async () => json(await t.app.inject({ method: 'POST', url: '/api/v1/search', headers, payload: { query, threshold: 0 } })).matches as Json[],
    g4: async () => json(await t.app.inject({ method: 'GET', url: `/v1/search?q=${encodeURIComponent(query)}&similarity_threshold=0`, headers })).data.results as Json[],
  };

  it('G2 metadata {type, tags, source, project} comes back whole from G2, G3 and G4, and as fields on G1 and a G6 read', async () => {
    const metadata = { type: 'project', tags: ['planning', 'q3'], source: 'meeting-notes', project: 'atlas' };
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/memory', headers, payload: { text, metadata } });
    expect(created.statusCode, created.body).toBe(201);
    const legacyId = json(created).id as string;
    const id = legacyId.replace(/^mem_/, '');

    expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/memory/${legacyId}`, headers })).metadata).toEqual(metadata);
    expect((await search.g3()).find((m) => m.id === id)?.metadata).toEqual(metadata);
    expect((await search.g4()).find((m) => m.id === id)?.metadata).toEqual(metadata);

    const g1 = json(await t.app.inject({ method: 'GET', url: `/api/v1/memories/${id}`, headers })).data;
    expect(g1).toMatchObject({ memory_type: 'project', tags: ['planning', 'q3'], metadata: { source: 'meeting-notes', project: 'atlas' } });
    const batchRead = json(await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers, payload: { operations: [{ type: 'read', id }] } }));
    expect(batchRead.data.operations[0].result).toMatchObject({ memory_type: 'project', tags: ['planning', 'q3'], metadata: { source: 'meeting-notes', project: 'atlas' } });
  });

  it("a G1 memory's type and tags read back inside metadata on G2, G3 and G4", async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers, payload: {
      title: 'Roadmap', content: `${text} again`, memory_type: 'workflow', tags: ['ops'], metadata: { owner: 'kim' },
    } });
    const id = json(res).data.id as string;
    const expected = { owner: 'kim', type: 'workflow', tags: ['ops'] };
    expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/memory/${id}`, headers })).metadata).toEqual(expected);
    expect((await search.g3()).find((m) => m.id === id)?.metadata).toEqual(expected);
    expect((await search.g4()).find((m) => m.id === id)?.metadata).toEqual(expected);
  });
});
