import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../support/test-app.ts';
import { bearer, g1Http, openStream, startLiveApp, type LiveApp } from './support.ts';

describe('G4 GET /v1/search/stream', () => {
  let t: LiveApp;
  let key: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startLiveApp();
    key = await t.key();
    const api = g1Http(t.url, key);
    ids.checklist = (await api.create({ title: 'Deploy checklist', content: 'Run the deploy pipeline and watch the deploy dashboard', tags: ['ops'] })).id as string;
    ids.rollback = (await api.create({ title: 'Deploy rollback', content: 'How to roll back a failed deploy pipeline', tags: ['ops', 'oncall'] })).id as string;
    ids.lunch = (await api.create({ title: 'Lunch', content: 'Sandwich shop on the corner has good soup', tags: ['food'] })).id as string;
  });
  afterAll(() => t.close());

  it('streams one result frame per result, best first with its rank, then done', async () => {
    const s = await openStream(`${t.url}/v1/search/stream?q=deploy%20pipeline&similarity_threshold=0.55`, bearer(key));
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
    await s.ended;
    const frames = s.events();
    expect(frames.map((f) => f.event)).toEqual(['result', 'result', 'done']);
    const results = frames.filter((f) => f.event === 'result').map((f) => f.data as Json);
    expect(results.map((r) => r.id).sort()).toEqual([ids.checklist, ids.rollback].sort());
    expect(results.map((r) => r.rank)).toEqual([1, 2]);
    expect(results[0]!.similarity_score).toBeGreaterThanOrEqual(results[1]!.similarity_score);
    expect(Object.keys(results[0]!).sort()).toEqual(
      ['content_preview', 'created_at', 'highlights', 'id', 'metadata', 'rank', 'similarity_score', 'tags', 'title', 'updated_at']);
    expect(results[0]!.highlights.join(' ')).toContain('<mark>');
    expect(frames.at(-1)!.data).toEqual({
      query: 'deploy pipeline', total: 2, returned: 2, query_time_ms: expect.any(Number), embedding_model: 'hashing:v1-256', embedding_dimensions: 256,
    });
  });

  it('takes the same filters and limits as GET /v1/search', async () => {
    const s = await openStream(`${t.url}/v1/search/stream?q=deploy%20pipeline&similarity_threshold=0.55&tags=oncall&limit=1&include_content=true`, bearer(key));
    await s.ended;
    const results = s.events('result').map((f) => f.data as Json);
    expect(results.map((r) => r.id)).toEqual([ids.rollback]);
    expect(results[0]!.content).toBe('How to roll back a failed deploy pipeline');
    expect(s.events('done')[0]!.data).toMatchObject({ total: 1, returned: 1 });
  });

  it('answers a search with no results with done alone', async () => {
    const s = await openStream(`${t.url}/v1/search/stream?q=quantum%20chromodynamics&similarity_threshold=0.95`, bearer(key));
    await s.ended;
    expect(s.events().map((f) => f.event)).toEqual(['done']);
    expect(s.events()[0]!.data).toMatchObject({ total: 0, returned: 0 });
  });

  const g4Error = async (url: string, headers: Record<string, string>, status: number, code: string) => {
    const s = await openStream(url, headers);
    expect(s.status).toBe(status);
    expect(s.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(await s.body()) as Json;
    expect(Object.keys(body).sort()).toEqual(['error', 'meta', 'success']);
    expect(body).toMatchObject({ success: false, error: { code }, meta: { request_id: s.headers['x-request-id'] } });
    return body.error as Json;
  };

  it('refuses bad requests before streaming, in the G4 envelope', async () => {
    const e = await g4Error(`${t.url}/v1/search/stream?q=%20%20&similarity_threshold=2&limit=0`, bearer(key), 400, 'INVALID_QUERY');
    expect(e.details.map((d: Json) => d.field).sort()).toEqual(['limit', 'q', 'similarity_threshold']);
    await g4Error(`${t.url}/v1/search/stream?q=x&similarity_threshold=1.5`, bearer(key), 400, 'SIMILARITY_THRESHOLD_INVALID');
    await g4Error(`${t.url}/v1/search/stream`, bearer(key), 400, 'INVALID_QUERY');
    await g4Error(`${t.url}/v1/search/stream?q=x&created_after=yesterday`, bearer(key), 400, 'VALIDATION_ERROR');
    await g4Error(`${t.url}/v1/search/stream?q=x`, {}, 401, 'UNAUTHORIZED');
    await g4Error(`${t.url}/v1/search/stream?q=x`, { ...bearer(key), accept: 'application/json' }, 406, 'NOT_ACCEPTABLE');
    await g4Error(`${t.url}/v1/search/stream?q=x`, bearer(await t.key({ scopes: ['memories:write'] })), 403, 'PERMISSION_DENIED');
  });

  it('notes user.activity for the caller, as for every other authenticated request (no stream session needed)', async () => {
    const watcher = await openStream(`${t.url}/api/v1/stream?events=user.activity`, bearer(await t.key({ user: 'watcher' })));
    const s = await openStream(`${t.url}/v1/search/stream?q=deploy%20pipeline`, bearer(await t.key({ user: 'sam' })));
    await s.ended;
    const frame = await watcher.waitFor((f) => f.event === 'user.activity' && f.data?.user_id === 'sam');
    expect(frame.data).toMatchObject({ user_id: 'sam', surface: 'g4', workspace: 'default' });
    watcher.close();
  });

  it('does not find another tenant\'s memories', async () => {
    const s = await openStream(`${t.url}/v1/search/stream?q=deploy%20pipeline&similarity_threshold=0.55`, bearer(await t.key({ tenant: 'globex' })));
    await s.ended;
    expect(s.events().map((f) => f.event)).toEqual(['done']);
  });
});
