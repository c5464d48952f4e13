import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, json, uniqueTenant, type TestApp } from '../support/test-app.ts';
import { g5, G5_URL } from './client.ts';

/** Everything a client sees of an answer. */
const visible = (res: LightMyRequestResponse): string => `${JSON.stringify(res.headers)}\n${res.body}`;

describe('G5 security', () => {
  let t: TestApp;
  let clock: ManualClock;
  let aliceCo: string, bobCo: string;
  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    t = await createTestApp({ overrides: { clock } });
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 0, 1, 12, 0, 0)); // each test starts at the same time, as with an app of its own
    await t.freshTenant();
    aliceCo = uniqueTenant('alice-co');
    bobCo = uniqueTenant('bob-co');
  });

  it('never shows the API key, in any answer', async () => {
    const key = await t.key({ tier: 'free' });
    const secretPart = key.slice('mnemo_live_'.length);
    const api = g5(t.app, key);
    const answers: LightMyRequestResponse[] = [
      await api.embed({ input: 'hello world' }),
      await api.embed({ input: ['a', 'b'], model: 'mnemo-embed-768' }),
      await api.embed({}),
      await api.embed({ input: 'x', model: 'nope' }),
      await api.raw('{', 'application/json'),
      await api.raw('x', 'text/plain'),
      await t.app.inject({ method: 'POST', url: `${G5_URL}/nope`, headers: { authorization: `Bearer ${key}` } }),
      // The key sent the wrong way, or mangled.
      await g5(t.app, undefined).embed({ input: 'x' }, { 'x-api-key': key }),
      await g5(t.app, undefined).embed({ input: 'x' }, { authorization: key }),
      await g5(t.app, `${key}x`).embed({ input: 'x' }),
    ];
    // The gateway's 429.
    for (let i = 0; i < 60; i++) await api.embed({ input: 'x' });
    answers.push(await api.embed({ input: 'x' }));
    expect(answers.at(-1)!.statusCode).toBe(429);
    // Revoked.
    const record = (await t.container.apiKeys.list(t.tenant)).find((r) => key.startsWith(r.displayPrefix) && r.tier === 'free');
    await t.container.apiKeys.revoke(record!.id);
    clock.advance(1);
    answers.push(await api.embed({ input: 'x' }));
    expect(answers.at(-1)!.statusCode).toBe(401);

    expect(new Set(answers.map((r) => r.statusCode))).toEqual(new Set([200, 400, 401, 404, 415, 429]));
    for (const res of answers) {
      expect(visible(res)).not.toContain(secretPart);
      expect(visible(res)).not.toContain(key.slice(0, 20));
    }
  });

  it('does not echo the texts or the model name in error answers', async () => {
    const api = g5(t.app, await t.key());
    const secret = 'the launch code is 0000 hunter2';
    for (const res of [
      await api.embed({ input: [secret, ''] }),
      await api.embed({ input: secret, model: `model-${secret}` }),
      await api.embed({ input: `${secret} `.repeat(2000) }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.body).not.toContain('hunter2');
    }
  });

  it('writes nothing: no memories, no search log, for the caller or anyone', async () => {
    const key = await t.key({ tenant: t.tenant });
    const api = g5(t.app, key);
    for (const input of ['remember this: the door code is 4242', ['note one', 'note two']]) {
      expect((await api.embed({ input })).statusCode).toBe(200);
    }
    expect((await api.embed({ input: 'x', model: 'mnemo-embed-1536' })).statusCode).toBe(200);
    await t.container.search.flushLog(); // the search log is written in batches: an empty log must mean nothing was queued
    const scopes: Scope[] = [
      { tenantId: t.tenant, mode: 'live', workspace: 'default' },
      { tenantId: t.tenant, mode: 'test', workspace: 'default' },
    ];
    for (const scope of scopes) {
      const { items, total } = await t.container.storage.memories.list(scope, {
        filter: {}, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'desc',
      });
      expect(items).toEqual([]);
      expect(total).toBe(0);
      expect(await t.container.storage.searchLog.suggestQueries(scope, 'remember', 10)).toEqual([]);
      expect(await t.container.storage.searchLog.suggestQueries(scope, 'note', 10)).toEqual([]);
    }
  });

  it('gives the same vectors to every tenant and mode: nothing per caller leaks into them', async () => {
    const a = g5(t.app, await t.key({ tenant: aliceCo }));
    const b = g5(t.app, await t.key({ tenant: bobCo, mode: 'test' }));
    const input = ['shared text', 'another'];
    const fromA = json(await a.embed({ input }));
    const fromB = json(await b.embed({ input }));
    expect(fromA).toEqual(fromB);
  });

  it('ignores X-API-Key when a Bearer key is given, and a Bearer key of another kind is refused', async () => {
    const key = await t.key();
    const res = await g5(t.app, key).embed({ input: 'x' }, { 'x-api-key': 'not-a-key' });
    expect(res.statusCode).toBe(200);
    const { key: testKey } = await t.container.apiKeys.create({ tenantId: t.tenant, userId: 'u', tier: 'free', mode: 'test' });
    expect((await g5(t.app, testKey).embed({ input: 'x' })).statusCode).toBe(200);
    expect((await g5(t.app, testKey.replace('mnemo_test_', 'mnemo_live_')).embed({ input: 'x' })).statusCode).toBe(401);
  });
});
