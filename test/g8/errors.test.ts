import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

const SSE = { accept: 'text/event-stream' };

/** The G8 error envelope, exactly. */
function expectG8Error(res: LightMyRequestResponse, status: number, code: string): Json {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Json;
  expect(Object.keys(body).sort()).toEqual(['error', 'success']);
  expect(body.success).toBe(false);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Array.isArray(body.error.details)).toBe(true);
  expect(body.error.request_id).toBe(res.headers['x-request-id']);
  return body.error as Json;
}

describe('G8 event stream: errors before the stream opens', () => {
  let t: TestApp;
  let key: string;
  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...SSE, ...headers } });

  beforeAll(async () => {
    t = await createTestApp();
    key = await t.key();
  });
  afterAll(() => t.close());

  it('401 in the JSON envelope without a key or with a bad key', async () => {
    for (const headers of [{}, { authorization: 'Bearer mnemo_live_nope' }, { 'x-api-key': 'mnemo_live_nope' }]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/stream', headers: { ...SSE, ...headers } });
      expectG8Error(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });

  it('406 when Accept does not include text/event-stream (after authentication)', async () => {
    for (const accept of ['application/json', '*/*', 'text/html']) {
      const e = expectG8Error(await get('/api/v1/stream', { accept }), 406, 'NOT_ACCEPTABLE');
      expect(e.details).toEqual([{ field: 'Accept', message: 'must include text/event-stream' }]);
    }
    expectG8Error(await t.app.inject({ method: 'GET', url: '/api/v1/stream', headers: { authorization: `Bearer ${key}` } }), 406, 'NOT_ACCEPTABLE');
    // Without a key the 401 comes first.
    expectG8Error(await t.app.inject({ method: 'GET', url: '/api/v1/stream', headers: { accept: 'application/json' } }), 401, 'UNAUTHORIZED');
  });

  it('400 for an unknown event type, naming it', async () => {
    const e = expectG8Error(await get('/api/v1/stream?events=memory.created,memory.exploded'), 400, 'VALIDATION_ERROR');
    expect(e.details).toHaveLength(1);
    expect(e.details[0]).toMatchObject({ field: 'events', message: expect.stringContaining('memory.exploded') });
    expectG8Error(await get('/api/v1/stream?events=memory.created&events=transfer.completed'), 400, 'VALIDATION_ERROR');
    expectG8Error(await get('/api/v1/stream?events=,'), 400, 'VALIDATION_ERROR');
  });

  it('400 for bad filters, heartbeat values and workspaces, every problem at once', async () => {
    const e = expectG8Error(await get('/api/v1/stream?filters[bad key!]=x&filters[tags]=&heartbeat=soon', { 'x-workspace-id': '../etc' }), 400, 'VALIDATION_ERROR');
    expect(e.details.map((d: Json) => d.field).sort()).toEqual(['X-Workspace-ID', 'filters[bad key!]', 'filters[tags]', 'heartbeat']);
    expectG8Error(await get('/api/v1/stream?heartbeat=-5'), 400, 'VALIDATION_ERROR');
    const tooLong = expectG8Error(await get('/api/v1/stream?heartbeat=3601'), 400, 'VALIDATION_ERROR');
    expect(tooLong.details[0].message).toContain('3600');
  });

  it('403 for a key without memories:read', async () => {
    const writeOnly = await t.key({ scopes: ['memories:write'] });
    expectG8Error(await t.app.inject({ method: 'GET', url: '/api/v1/stream', headers: { authorization: `Bearer ${writeOnly}`, ...SSE } }), 403, 'PERMISSION_DENIED');
  });

  it('404 in the G8 envelope for unknown paths under /api/v1/stream', async () => {
    expectG8Error(await get('/api/v1/stream/nope'), 404, 'NOT_FOUND');
  });
});
