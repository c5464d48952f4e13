import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/core/json-limits.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';

/** JSON text of an object exactly `depth` levels deep: 1 is `{}`, 2 is `{"k":{}}`. Built as text: JSON.stringify
 * itself overflows the stack on the deepest cases. */
const nested = (depth: number): string => `${'{"k":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
/** The same depth made of arrays inside an object: `{"k":[[...]]}`. */
const nestedArrays = (depth: number): string => `{"k":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

const DEPTH_MESSAGE = new RegExp(`at most ${MAX_JSON_DEPTH} levels`);

type Problem = { field: string; message: string };

/** Each surface's validation answer, reduced to its problems after checking the envelope exactly. */
const envelopes = {
  g1(res: LightMyRequestResponse): Problem[] {
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json() as Json;
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.request_id).toBe(res.headers['x-request-id']);
    expect(body.error.timestamp).toMatch(/Z$/);
    return body.error.details as Problem[];
  },
  g2(res: LightMyRequestResponse): Problem[] {
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json() as Json;
    expect(body.error).toBe('INVALID_REQUEST');
    expect(body.request_id).toBe(res.headers['x-request-id']);
    expect(body.details.missing_fields).toEqual([]);
    return body.details.invalid_fields as Problem[];
  },
  /** G6 validates each operation on its own: the bad one fails in its slot (documented), the request is a 207. */
  g6(res: LightMyRequestResponse): Problem[] {
    expect(res.statusCode, res.body).toBe(207);
    const body = res.json() as Json;
    expect(body.success).toBe(false);
    const [op] = body.data.operations as Json[];
    expect(op!.status).toBe('failed');
    expect(op!.error.code).toBe('VALIDATION_ERROR');
    return op!.error.details.fields as Problem[];
  },
  g10(res: LightMyRequestResponse): Problem[] {
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json() as Json;
    expect(Object.keys(body).sort()).toEqual(['error', 'success']);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.request_id).toBe(res.headers['x-request-id']);
    return body.error.details as Problem[];
  },
};

describe(`caller JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused on every route that stores it`, () => {
  let t: TestApp;
  let apiKey: Record<string, string>;
  let bearer: Record<string, string>;
  let memoryId: string;
  let topicId: string;

  const send = (method: 'POST' | 'PUT', url: string, headers: Record<string, string>, payload: string) =>
    t.app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload });

  beforeAll(async () => {
    t = await createTestApp();
    const key = await t.key();
    apiKey = { 'x-api-key': key };
    bearer = { authorization: `Bearer ${key}` };
    const memory = await send('POST', '/api/v1/memories', apiKey, '{"title":"Target","content":"an existing memory","metadata":{"v":1}}');
    expect(memory.statusCode, memory.body).toBe(201);
    memoryId = (memory.json() as Json).data.id as string;
    const topic = await send('POST', '/api/v1/topics', apiKey, '{"name":"Target topic","metadata":{"v":1}}');
    expect(topic.statusCode, topic.body).toBe(201);
    topicId = (topic.json() as Json).data.id as string;
  });
  afterAll(async () => { await t?.close(); });

  /** Every route that keeps a caller's free-form JSON: the request with `json` in that place, and where it is named. */
  const routes: { name: string; field: string; envelope: keyof typeof envelopes; send: (json: string) => Promise<LightMyRequestResponse> }[] = [
    { name: 'G1 POST /api/v1/memories', field: 'metadata', envelope: 'g1',
      send: (json) => send('POST', '/api/v1/memories', apiKey, `{"title":"t","content":"c","metadata":${json}}`) },
    { name: 'G1 POST /api/v1/store (deprecated)', field: 'metadata', envelope: 'g1',
      send: (json) => send('POST', '/api/v1/store', apiKey, `{"title":"t","content":"c","metadata":${json}}`) },
    { name: 'G1 PUT /api/v1/memories/{id}', field: 'metadata', envelope: 'g1',
      send: (json) => send('PUT', `/api/v1/memories/${memoryId}`, apiKey, `{"metadata":${json}}`) },
    { name: 'G1 POST /api/v1/topics', field: 'metadata', envelope: 'g1',
      send: (json) => send('POST', '/api/v1/topics', apiKey, `{"name":"deep","metadata":${json}}`) },
    { name: 'G1 PUT /api/v1/topics/{id}', field: 'metadata', envelope: 'g1',
      send: (json) => send('PUT', `/api/v1/topics/${topicId}`, apiKey, `{"metadata":${json}}`) },
    { name: 'G2 POST /api/v1/memory', field: 'metadata', envelope: 'g2',
      send: (json) => send('POST', '/api/v1/memory', bearer, `{"text":"some text","metadata":{"deep":${json}}}`) },
    { name: 'G2 PUT /api/v1/memory/{id}', field: 'metadata', envelope: 'g2',
      send: (json) => send('PUT', `/api/v1/memory/mem_${memoryId}`, bearer, `{"metadata":{"deep":${json}}}`) },
    { name: 'G6 create operation', field: 'metadata', envelope: 'g6',
      send: (json) => send('POST', '/api/v1/batch', bearer, `{"operations":[{"type":"create","data":{"content":"c","metadata":${json}}}]}`) },
    { name: 'G6 update operation', field: 'metadata', envelope: 'g6',
      send: (json) => send('POST', '/api/v1/batch', bearer, `{"operations":[{"type":"update","id":"${memoryId}","data":{"metadata":${json}}}]}`) },
    { name: 'G10 POST /v1/events', field: 'data', envelope: 'g10',
      send: (json) => send('POST', '/v1/events', apiKey, `{"type":"transfer.initiated","data":${json}}`) },
  ];

  // G2 wraps the value in {"deep": ...}: one level more than the others.
  const depthFor = (route: (typeof routes)[number], depth: number) => (route.envelope === 'g2' ? depth - 1 : depth);

  for (const route of routes) {
    it(`${route.name}: 1,000 and 10,000 levels answer 400 in the surface's envelope, naming the limit`, async () => {
      for (const depth of [1_000, 10_000]) {
        const problems = envelopes[route.envelope](await route.send(nested(depthFor(route, depth))));
        expect(problems, `${depth} levels`).toEqual([{ field: route.field, message: expect.stringMatching(DEPTH_MESSAGE) }]);
      }
    });

    it(`${route.name}: ${MAX_JSON_DEPTH} levels are stored, ${MAX_JSON_DEPTH + 1} (objects or arrays) are not`, async () => {
      const accepted = await route.send(nested(depthFor(route, MAX_JSON_DEPTH)));
      expect(accepted.statusCode, accepted.body).toBeLessThan(300);
      for (const json of [nested(depthFor(route, MAX_JSON_DEPTH + 1)), nestedArrays(depthFor(route, MAX_JSON_DEPTH + 1))]) {
        const problems = envelopes[route.envelope](await route.send(json));
        expect(problems).toEqual([{ field: route.field, message: expect.stringMatching(DEPTH_MESSAGE) }]);
      }
    });
  }

  it('stores nothing from a refused request', async () => {
    const memory = await t.app.inject({ method: 'GET', url: `/api/v1/memories/${memoryId}`, headers: apiKey });
    expect(memory.statusCode).toBe(200);
    // The last accepted write (the 16-level G6 update) is what the memory holds: no refused one came after it.
    expect(JSON.stringify((memory.json() as Json).data.metadata)).toBe(nested(MAX_JSON_DEPTH));
    const list = await t.app.inject({ method: 'GET', url: '/api/v1/memories?limit=100', headers: apiKey });
    // The target, plus one accepted create per creating route (G1, store alias, G2, G6).
    expect((list.json() as Json).pagination.total).toBe(5);
  });
});
