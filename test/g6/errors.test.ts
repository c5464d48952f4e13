import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.ts';
import { createTestApp, g1, json, sharedTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { batchClient } from './client.ts';

function expectG6Error(res: { statusCode: number; json: () => unknown }, status: number, code: string): Json {
  expect(res.statusCode).toBe(status);
  const body = res.json() as Json;
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.details).toBe('object');
  return body.error.details as Json;
}

describe('G6 batch: failures, retries, timeouts and atomicity', () => {
  let t: TestApp;
  let provider: EmbeddingsServer | undefined;
  // Tests that need nothing special share one app (a fresh tenant each); those with their own configuration, clock or
  // embedder build their own, closed after them.
  const fileApp = sharedTestApp();
  afterAll(() => fileApp.close());
  afterEach(async () => {
    if (!fileApp.owns(t)) await t?.close();
    await provider?.close();
    provider = undefined;
  });

  it('stops at the first failure when continue_on_error is false; later operations do not run', async () => {
    t = await fileApp();
    const key = await t.key();
    const res = await batchClient(t.app, key)({
      operations: [
        { type: 'create', data: { content: 'before the failure' } },
        { type: 'read', id: '00000000-0000-4000-8000-000000000000' },
        { type: 'create', data: { content: 'after the failure' } },
      ],
    });
    expect(res.statusCode).toBe(207);
    const data = json(res).data;
    expect(data).toMatchObject({ processed: 1, failed: 2, total: 3 });
    expect(data.operations.map((o: Json) => o.error?.code ?? o.status)).toEqual(['success', 'MEMORY_NOT_FOUND', 'NOT_EXECUTED']);
    const titles = json(await g1(t.app, key).list()).data.map((m: Json) => m.content);
    expect(titles).toEqual(['before the failure']);
  });

  it('goes on after failures when continue_on_error is true, and a failed write leaves nothing behind', async () => {
    t = await createTestApp({ env: { MNEMO_MAX_CONTENT_BYTES: '100' } });
    const key = await t.key();
    const res = await batchClient(t.app, key)({
      operations: [
        { type: 'create', data: { content: 'x'.repeat(101), tags: ['too-big'] } },
        { type: 'create', data: { content: 'fine', memory_type: 'Not Valid' } },
        { type: 'frobnicate' },
        'not an object',
        { type: 'create', data: { content: 'fine' } },
      ],
      options: { continue_on_error: true },
    });
    expect(res.statusCode).toBe(207);
    const ops = json(res).data.operations as Json[];
    expect(ops.map((o) => o.error?.code ?? o.status)).toEqual(['CONTENT_TOO_LARGE', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'success']);
    expect(ops[2]!.type).toBe('frobnicate');
    const all = json(await g1(t.app, key).list()).data;
    expect(all.map((m: Json) => m.content)).toEqual(['fine']);
    expect(json(await g1(t.app, key).list('tags=too-big')).pagination.total).toBe(0);
  });

  it('retries a failing operation up to max_retries', async () => {
    provider = await startEmbeddingsServer();
    t = await createTestApp({ overrides: { embedder: provider.embedder } });
    const batch = batchClient(t.app, await t.key());
    provider.failNext(2);
    const retried = json(await batch({ operations: [{ type: 'create', data: { content: 'third time lucky' } }], options: { max_retries: 2 } })).data;
    expect(retried.operations[0]).toMatchObject({ status: 'success', attempts: 3 });
    provider.failNext(2);
    const gaveUp = json(await batch({ operations: [{ type: 'create', data: { content: 'not this time' } }], options: { max_retries: 1 } })).data;
    expect(gaveUp.operations[0]).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'EMBEDDING_FAILED' } });
    // A bad request is never retried.
    const before = provider.requests();
    const invalid = json(await batch({ operations: [{ type: 'read', id: '00000000-0000-4000-8000-000000000000' }], options: { max_retries: 3 } })).data;
    expect(invalid.operations[0]).toMatchObject({ attempts: 1, error: { code: 'MEMORY_NOT_FOUND' } });
    expect(provider.requests()).toBe(before);
  });

  it('times out: no operation starts after the deadline, and those never happen', async () => {
    provider = await startEmbeddingsServer();
    t = await createTestApp({ overrides: { embedder: provider.embedder } });
    const key = await t.key();
    provider.setDelay(150);
    const operations = Array.from({ length: 6 }, (_, i) => ({ type: 'create', data: { content: `slow ${i}` } }));
    const res = await batchClient(t.app, key)({ operations, options: { timeout: 400, parallel: false, continue_on_error: true } });
    expect(res.statusCode).toBe(207);
    const ops = json(res).data.operations as Json[];
    const done = ops.filter((o) => o.status === 'success');
    const late = ops.filter((o) => o.error?.code === 'BATCH_TIMEOUT');
    expect(done.length).toBeGreaterThanOrEqual(1);
    expect(late.length).toBeGreaterThanOrEqual(1);
    expect(done.length + late.length).toBe(6);
    expect(json(await g1(t.app, key).list()).pagination.total).toBe(done.length);
  });

  it('atomic: one failure undoes every write', async () => {
    t = await fileApp();
    const key = await t.key();
    const api = g1(t.app, key);
    const { id } = json(await api.create({ title: 't', content: 'untouched' })).data;
    const res = await batchClient(t.app, key)({
      operations: [
        { type: 'create', data: { content: 'rolled back' } },
        { type: 'update', id, data: { content: 'changed' } },
        { type: 'delete', id: '00000000-0000-4000-8000-000000000000' },
      ],
      options: { atomic: true },
    });
    expect(res.statusCode).toBe(207);
    expect(json(res).data.operations.map((o: Json) => o.error.code)).toEqual(['ROLLED_BACK', 'ROLLED_BACK', 'MEMORY_NOT_FOUND']);
    expect(json(await api.list()).data.map((m: Json) => m.content)).toEqual(['untouched']);
    const search = await batchClient(t.app, key)({ operations: [{ type: 'search', query: 'x' }], options: { atomic: true } });
    expect(json(search).data.operations[0].error.code).toBe('VALIDATION_ERROR');
  });

  it('rejects malformed batches with the spec codes', async () => {
    t = await fileApp();
    const batch = batchClient(t.app, await t.key());
    expect(expectG6Error(await batch({}), 400, 'INVALID_BATCH_REQUEST')).toMatchObject({ field: 'operations', reason: 'operations_array_required' });
    expect(expectG6Error(await batch({ operations: 'x' }), 400, 'INVALID_BATCH_REQUEST')).toMatchObject({ reason: 'operations_array_required' });
    expect(expectG6Error(await batch({ operations: [] }), 400, 'INVALID_BATCH_REQUEST')).toMatchObject({ reason: 'operations_array_required' });
    const many = Array.from({ length: 101 }, () => ({ type: 'read', id: 'x' }));
    expect(expectG6Error(await batch({ operations: many }), 413, 'BATCH_TOO_LARGE')).toEqual({ max_operations: 100, provided_operations: 101 });
    for (const options of [{ timeout: 60_001 }, { timeout: 'soon' }, { max_retries: -1 }, { parallel: 'yes' }, 'fast']) {
      expectG6Error(await batch({ operations: [{ type: 'read', id: 'x' }], options }), 400, 'INVALID_BATCH_REQUEST');
    }
    const big = { operations: [{ type: 'create', data: { content: 'x'.repeat(10 * 1024 * 1024) } }] };
    expect(expectG6Error(await batch(big), 413, 'BATCH_TOO_LARGE')).toMatchObject({ max_bytes: 10 * 1024 * 1024 });
  });

  it('answers malformed JSON, content type and auth errors in the envelope', async () => {
    t = await fileApp();
    const key = await t.key();
    const post = (payload: string, headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/api/v1/batch', payload, headers });
    expect(expectG6Error(await post('{"operations": [', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }), 400, 'INVALID_BATCH_REQUEST')).toMatchObject({ reason: 'invalid_json' });
    expectG6Error(await post('operations', { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(expectG6Error(await post('{}', { 'content-type': 'application/json' }), 401, 'UNAUTHORIZED')).toMatchObject({ reason: 'invalid_api_key' });
    expectG6Error(await post('{}', { authorization: `Basic ${key}`, 'content-type': 'application/json' }), 401, 'UNAUTHORIZED');
    const reader = await t.key({ scopes: ['memories:read'] });
    expectG6Error(await batchClient(t.app, reader)({ operations: [{ type: 'create', data: { content: 'x' } }] }), 403, 'PERMISSION_DENIED');
  });

  it('allows 10 batch requests a minute per key', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    t = await createTestApp({ overrides: { clock } });
    const batch = batchClient(t.app, await t.key({ tier: 'enterprise' }));
    const ops = { operations: [{ type: 'search', query: 'anything', options: { threshold: 0 } }] };
    for (let i = 0; i < 10; i++) expect((await batch(ops)).statusCode).toBe(200);
    const limited = await batch(ops);
    expect(expectG6Error(limited, 429, 'RATE_LIMITED')).toMatchObject({ limit: 10, remaining: 0 });
    expect(Number(limited.headers['retry-after'])).toBe(60);
    clock.advance(60_000);
    expect((await batch(ops)).statusCode).toBe(200);
  });
});
