import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** One read per surface that needs a key (the SSE and WebSocket routes are covered in test/streams). */
const READS: [surface: string, url: string][] = [
  ['G1', '/api/v1/memories'],
  ['G1 topics', '/api/v1/topics'],
  ['G2', '/api/v1/memory/no-such-id'],
  ['G4', '/v1/search?q=deploy'],
  ['G4 suggestions', '/v1/search/suggestions?q=dep'],
  ['G9', '/api/v1/webhooks'],
  ['G10', '/v1/webhooks'],
];
const WRITES: [surface: string, url: string, body: object][] = [
  ['G3', '/api/v1/search', { query: 'deploy' }],
  ['G5', '/api/v1/embeddings', { input: 'deploy' }],
  ['G6', '/api/v1/batch', { operations: [{ type: 'search', data: { query: 'deploy' } }] }],
];

describe('credentials: every surface takes X-API-Key and Authorization: Bearer', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => {
    t = await createTestApp();
    key = await t.key();
  });
  afterAll(() => t.close());

  const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: object) =>
    t.app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
  const requests = (headers: Record<string, string>) => [
    ...READS.map(([surface, url]) => [surface, call('GET', url, headers)] as const),
    ...WRITES.map(([surface, url, body]) => [surface, call('POST', url, headers, body)] as const),
  ];
  const authorized = (status: number) => status !== 401 && status !== 403;

  it('authenticates with either header on every surface', async () => {
    for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }] as Record<string, string>[]) {
      for (const [surface, pending] of requests(headers)) {
        const res = await pending;
        expect(authorized(res.statusCode), `${surface} ${JSON.stringify(Object.keys(headers))}: ${res.body}`).toBe(true);
        expect(res.statusCode, surface).toBeLessThan(500);
      }
    }
  });

  it("uses the surface's own header when both are sent", async () => {
    const bearerSurfaces = await call('GET', '/api/v1/webhooks', { authorization: `Bearer ${key}`, 'x-api-key': 'mnemo_live_forged' });
    expect(bearerSurfaces.statusCode).toBe(200);
    const apiKeySurfaces = await call('GET', '/api/v1/memories', { 'x-api-key': key, authorization: 'Bearer mnemo_live_forged' });
    expect(apiKeySurfaces.statusCode).toBe(200);
    const wrongPreferred = await call('GET', '/api/v1/memories', { 'x-api-key': 'mnemo_live_forged', authorization: `Bearer ${key}` });
    expect(wrongPreferred.statusCode).toBe(401);
  });

  it('answers a request without a usable key with a 401 that names both headers, on every surface', async () => {
    for (const headers of [{}, { authorization: `Basic ${key}` }, { 'x-api-key': '' }] as Record<string, string>[]) {
      for (const [surface, pending] of requests(headers)) {
        const res = await pending;
        expect(res.statusCode, surface).toBe(401);
        expect(res.body, surface).toMatch(/X-API-Key: <key> or Authorization: Bearer <key>/);
      }
    }
  });
});
