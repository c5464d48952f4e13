import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';
import { g11, ISO } from './client.ts';

describe('G11 secrets: happy paths', () => {
  let t: TestApp;
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  beforeAll(async () => { t = await createTestApp({ overrides: { clock } }); });
  afterAll(() => t.close());

  it('creates a secret (version 1) and reads it back by name', async () => {
    const s = g11(t.app, await t.freshTenant());
    const created = await s.create({ name: 'stripe-key', value: 'sk_live_123', tags: ['payments', 'prod'], expiresIn: '30d' });
    expect(created.statusCode, created.body).toBe(201);
    const body = json(created);
    expect(body).toEqual({
      id: expect.stringMatching(/^sec_[A-Za-z0-9]{24}$/), name: 'stripe-key', value: 'sk_live_123', version: 1, tags: ['payments', 'prod'],
      createdAt: '2026-06-01T12:00:00.000Z', updatedAt: '2026-06-01T12:00:00.000Z', expiresAt: '2026-07-01T12:00:00.000Z',
    });
    const read = await s.get('stripe-key');
    expect(read.statusCode).toBe(200);
    expect(json(read)).toEqual(body);
    expect(read.headers['x-ratelimit-limit']).toBe('100000');
    expect(Number(read.headers['x-ratelimit-remaining'])).toBeLessThan(100000);
    expect(Number(read.headers['x-ratelimit-reset'])).toBe(Math.ceil(Date.UTC(2026, 5, 1, 13) / 1000));
  });

  it('writes new versions with PUT and reads older ones with ?version=N', async () => {
    const s = g11(t.app, await t.freshTenant());
    await s.create({ name: 'db-password', value: 'one' });
    clock.advance(1000);
    const v2 = await s.update('db-password', { value: 'two', tags: ['db'] });
    expect(v2.statusCode, v2.body).toBe(200);
    expect(json(v2)).toMatchObject({ name: 'db-password', value: 'two', version: 2, tags: ['db'], expiresAt: null, updatedAt: expect.stringMatching(ISO) });
    expect(json(v2).updatedAt).not.toBe(json(v2).createdAt);
    expect(json(await s.get('db-password'))).toMatchObject({ value: 'two', version: 2 });
    expect(json(await s.get('db-password', 'version=1'))).toMatchObject({ value: 'one', version: 1 });
    // The tags stay when a PUT leaves them out.
    expect(json(await s.update('db-password', { value: 'three' }))).toMatchObject({ version: 3, tags: ['db'] });
  });

  it('keeps the last 10 versions', async () => {
    const s = g11(t.app, await t.freshTenant());
    await s.create({ name: 'rotating', value: 'v1' });
    for (let v = 2; v <= 12; v++) expect((await s.update('rotating', { value: `v${v}` })).statusCode).toBe(200);
    for (let v = 3; v <= 12; v++) expect(json(await s.get('rotating', `version=${v}`)).value).toBe(`v${v}`);
    const gone = await s.get('rotating', 'version=2');
    expect(gone.statusCode).toBe(404);
    expect(json(gone).error).toMatchObject({ code: 'RESOURCE_NOT_FOUND', message: 'Version 2 of secret "rotating" is not kept' });
  });

  it('lists names without values, filtered by tags, a page at a time', async () => {
    const s = g11(t.app, await t.freshTenant());
    for (const [name, tags] of [['c-key', ['prod']], ['a-key', ['dev']], ['b-key', ['prod', 'db']], ['d-key', []]] as const) {
      expect((await s.create({ name, value: `value of ${name}`, tags })).statusCode).toBe(201);
    }
    const first = json(await s.list('limit=2'));
    expect(first.data.map((x: { name: string }) => x.name)).toEqual(['a-key', 'b-key']);
    expect(first.data[0]).not.toHaveProperty('value');
    expect(first.pagination).toEqual({ cursor: expect.any(String), hasMore: true, totalCount: 4 });
    const second = json(await s.list(`limit=2&cursor=${encodeURIComponent(first.pagination.cursor)}`));
    expect(second.data.map((x: { name: string }) => x.name)).toEqual(['c-key', 'd-key']);
    expect(second.pagination).toEqual({ cursor: null, hasMore: false, totalCount: 4 });
    const prod = json(await s.list('tags=prod'));
    expect(prod.data.map((x: { name: string }) => x.name)).toEqual(['b-key', 'c-key']);
    expect(prod.pagination.totalCount).toBe(2);
  });

  it('deletes a secret and every version of it; its name can be used again', async () => {
    const s = g11(t.app, await t.freshTenant());
    await s.create({ name: 'temp', value: 'x' });
    await s.update('temp', { value: 'y' });
    const deleted = await s.delete('temp');
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await s.get('temp')).statusCode).toBe(404);
    expect((await s.get('temp', 'version=1')).statusCode).toBe(404);
    expect(json(await s.create({ name: 'temp', value: 'z' }))).toMatchObject({ version: 1, value: 'z' });
  });

  it('never returns an expired secret; a new secret may take its name', async () => {
    const s = g11(t.app, await t.freshTenant());
    await s.create({ name: 'short-lived', value: 'soon gone', expiresIn: '90m' });
    clock.advance(89 * 60_000);
    expect((await s.get('short-lived')).statusCode).toBe(200);
    clock.advance(60_000);
    const expired = await s.get('short-lived');
    expect(expired.statusCode).toBe(404);
    expect(json(expired).error.code).toBe('RESOURCE_NOT_FOUND');
    expect((await s.get('short-lived', 'version=1')).statusCode).toBe(404);
    expect((await s.update('short-lived', { value: 'revive' })).statusCode).toBe(404);
    expect(json(await s.list()).pagination.totalCount).toBe(0);
    expect(json(await s.create({ name: 'short-lived', value: 'again' }))).toMatchObject({ version: 1, value: 'again', expiresAt: null });
  });

  it('records X-Region on writes, and lists by it', async () => {
    const s = g11(t.app, await t.freshTenant());
    expect((await s.create({ name: 'eu-key', value: 'v' }, { 'x-region': 'eu-west-1' })).statusCode).toBe(201);
    const stored = await t.container.storage.secrets.find({ tenantId: t.tenant, mode: 'live' }, 'eu-key');
    expect(stored!.secret.region).toBe('eu-west-1');
    await s.create({ name: 'us-key', value: 'v', tags: ['db'] }, { 'x-region': 'us-east-1' });
    await s.create({ name: 'no-region', value: 'v', tags: ['db'] });
    const names = async (query: string) => json(await s.list(query)).data.map((x: { name: string }) => x.name);
    expect(await names('region=eu-west-1')).toEqual(['eu-key']);
    expect(json(await s.list('region=eu-west-1')).pagination.totalCount).toBe(1);
    expect(await names('region=us-east-1&tags=db')).toEqual(['us-key']);
    expect(await names('region=ap-south-1')).toEqual([]);
    // A later write's region is the secret's region from then on; a write without one keeps it.
    await s.update('us-key', { value: 'v2' }, { 'x-region': 'eu-west-1' });
    await s.update('eu-key', { value: 'v2' });
    expect(await names('region=eu-west-1')).toEqual(['eu-key', 'us-key']);
    expect(await names('')).toEqual(['eu-key', 'no-region', 'us-key']);
  });

  it('documents the G11 routes in /openapi.json with Bearer security', async () => {
    const spec = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/v1/security/secrets', '/v1/security/secrets/{name}']));
    expect(spec.paths['/v1/security/secrets'].post.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(spec.paths['/v1/security/secrets/{name}'].delete.responses)).toEqual(expect.arrayContaining(['204', '403', '404']));
  });
});
