import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWs, startLiveApp, type LiveApp } from '../streams/support.ts';
import type { Json } from '../support/test-app.ts';

/**
 * `__proto__` as a filter key: in a plain object it is the prototype, not a key, so a filter built with it used to
 * drop the condition and match everything. Every surface that takes filters refuses it with a 400 (docs/api.md).
 */
const PROTO_FILTER = '{"__proto__":["no-such-value"]}';
const NESTED_PROTO_FILTER = '{"team.__proto__":"x"}';

/** A 400 with the surface's validation code; returns the error object (wherever the envelope keeps it). */
function expect400(res: LightMyRequestResponse, code: string): Json {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json() as Json;
  const error = (typeof body.error === 'object' ? body.error : body) as Json;
  expect(error.code ?? error.error, res.body).toBe(code);
  return error;
}
const fieldsOf = (error: Json): string[] => (error.details as { field: string }[]).map((d) => d.field).sort();

describe('filters naming __proto__ are refused on every filtering surface', () => {
  let t: LiveApp;
  let key: string;
  let bearer: Record<string, string>;

  const json = (method: 'GET' | 'POST' | 'PUT', url: string, payload: string) =>
    t.app.inject({ method, url, headers: { ...bearer, 'content-type': 'application/json' }, payload });
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers: { ...bearer, ...headers } });
  const qs = (params: Record<string, string>) => new URLSearchParams(params).toString();

  beforeAll(async () => {
    t = await startLiveApp(); // listening: the live search is a WebSocket
    key = await t.key();
    bearer = { authorization: `Bearer ${key}` };
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/memories', headers: { 'x-api-key': key },
      payload: { title: 'Deploy runbook', content: 'deploy runbook', metadata: { team: 'ops' } },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
  afterAll(async () => { await t?.close(); });

  it('G4 GET /v1/search: metadata_filter in the query string or the GET body', async () => {
    for (const filter of [PROTO_FILTER, NESTED_PROTO_FILTER]) {
      const key0 = Object.keys(JSON.parse(filter) as object)[0]!;
      const fromQuery = expect400(await get(`/v1/search?${qs({ q: 'deploy', similarity_threshold: '0', metadata_filter: filter })}`), 'VALIDATION_ERROR');
      expect(fieldsOf(fromQuery)).toEqual([`metadata_filter.${key0}`]);
      const fromBody = expect400(await json('GET', `/v1/search?${qs({ q: 'deploy', similarity_threshold: '0' })}`, `{"metadata_filter":${filter}}`), 'VALIDATION_ERROR');
      expect(fieldsOf(fromBody)).toEqual([`metadata_filter.${key0}`]);
    }
  });

  // A stream that wrongly opens never ends: the short timeouts make such a failure quick.
  it('G4 GET /v1/search/stream: refused before streaming, in the G4 envelope', { timeout: 5000 }, async () => {
    const e = expect400(await get(`/v1/search/stream?${qs({ q: 'deploy', metadata_filter: PROTO_FILTER })}`, { accept: 'text/event-stream' }), 'VALIDATION_ERROR');
    expect(fieldsOf(e)).toEqual(['metadata_filter.__proto__']);
  });

  it('G4 POST /v1/search/vector, G3 /search, /hybrid, /batch, G6 and G9: a JSON body holding __proto__ is refused', async () => {
    const vector = JSON.stringify(Array.from({ length: 1536 }, (_, i) => (i === 0 ? 1 : 0)));
    expect400(await json('POST', '/v1/search/vector', `{"vector":${vector},"metadata_filter":${PROTO_FILTER}}`), 'VALIDATION_ERROR');
    expect400(await json('POST', '/api/v1/search', `{"query":"deploy","filters":${PROTO_FILTER}}`), 'VALIDATION_ERROR');
    expect400(await json('POST', '/api/v1/search/hybrid', `{"query":"deploy","filters":${PROTO_FILTER}}`), 'VALIDATION_ERROR');
    expect400(await json('POST', '/api/v1/search/batch', `{"searches":[{"query":"deploy","filters":${PROTO_FILTER}}]}`), 'VALIDATION_ERROR');
    expect400(await json('POST', '/api/v1/batch', `{"operations":[{"type":"search","query":"deploy","options":{"filters":${PROTO_FILTER}}}]}`), 'INVALID_BATCH_REQUEST');
    expect400(await json('POST', '/api/v1/webhooks', `{"url":"https://example.com/hook","events":["memory.created"],"filters":${PROTO_FILTER}}`), 'VALIDATION_ERROR');
  });

  it('G8 GET /api/v1/stream: filters[__proto__] and a dotted __proto__ segment', { timeout: 5000 }, async () => {
    const e = expect400(await get('/api/v1/stream?filters[__proto__]=x&filters[team.__proto__]=y', { accept: 'text/event-stream' }), 'VALIDATION_ERROR');
    expect(fieldsOf(e)).toEqual(['filters[__proto__]', 'filters[team.__proto__]']);
  });

  it('G4 WebSocket /v1/search/live: a subscribe whose filters hold another key than tags', async () => {
    const ws = await openWs(`${t.wsUrl}/v1/search/live`, bearer);
    try {
      ws.send(`{"type":"subscribe","query":"deploy","filters":{"__proto__":{"tags":["ops"]}}}`);
      const error = await ws.waitFor((m) => m.type === 'error' || m.type === 'subscribed');
      expect(error).toMatchObject({ type: 'error', code: 'INVALID_FILTER' });
      ws.send({ type: 'subscribe', query: 'deploy', filters: { tags: ['ops'] } });
      expect(await ws.waitFor((m) => m.type === 'subscribed')).toMatchObject({ filters: { tags: ['ops'] } });
    } finally {
      ws.close();
    }
  });
});
