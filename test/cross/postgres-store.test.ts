import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { createStorage } from '../../src/app/storage.factory.ts';
import { mnemo } from '../support/cli.ts';
import { fileDatabase, type FileDatabase } from '../support/pglite.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { createTestApp, json, type TestApp } from '../support/test-app.ts';

/**
 * MNEMO_DATABASE_URL selects the PostgreSQL adapter for the server and the CLI: the real `pg` driver against PGlite
 * (with pgvector) served on loopback by pglite-socket to a pool of four connections.
 */
describe('the HTTP surfaces and the CLI on PostgreSQL (MNEMO_DATABASE_URL)', () => {
  let pglite: PGlite;
  let database: FileDatabase | undefined;
  let server: SharedPglite;
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await fileDatabase();
    pglite = database.pglite;
    server = await servePglite(pglite);
    // One master key for the server and the CLI (which signs and checks the audit chains' heads), none on disk.
    env = {
      MNEMO_DATABASE_URL: server.url.replace(':postgres@', ':secret@'), MNEMO_DATABASE_POOL_SIZE: '4',
      MNEMO_MASTER_KEY: randomBytes(32).toString('base64'),
    };
    t = await createTestApp({ env });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await server?.stop();
    await database?.release();
  });

  it('says so in /health and serves G1, G2, G3 and G6 from the database', async () => {
    expect(json(await t.app.inject({ method: 'GET', url: '/health' })).storage).toMatchObject({ kind: 'postgres', ok: true });
    const key = await t.key();
    const h = { 'x-api-key': key };
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/memories', headers: h, payload: { title: 'Deploy notes', content: 'We deploy with blue/green on Fridays', tags: ['ops'] } });
    expect(created.statusCode, created.body).toBe(201);
    const id = json(created).data.id as string;
    expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/memories/${id.slice(0, 8)}`, headers: h })).data.content).toBe('We deploy with blue/green on Fridays');
    const found = json(await t.app.inject({ method: 'POST', url: '/api/v1/memories/search', headers: h, payload: { query: 'deploy blue green fridays', threshold: 0 } }));
    expect(found.data.results.map((r: { id: string }) => r.id)).toEqual([id]);
    const hybrid = json(await t.app.inject({ method: 'POST', url: '/api/v1/search/hybrid', headers: h, payload: { query: 'deploy fridays' } }));
    expect(hybrid.matches.map((m: { id: string }) => m.id)).toContain(id);
    const legacy = await t.app.inject({ method: 'POST', url: '/api/v1/memory', headers: h, payload: { text: 'Lunch is at noon', metadata: { source: 'chat' } } });
    expect(legacy.statusCode, legacy.body).toBe(201);
    expect(json(await t.app.inject({ method: 'GET', url: `/api/v1/memory/${json(legacy).id as string}`, headers: h })).metadata).toMatchObject({ source: 'chat' });
    const batch = json(await t.app.inject({ method: 'POST', url: '/api/v1/batch', headers: h, payload: { operations: [{ type: 'read', id }, { type: 'delete', id }] } }));
    expect(batch.data.operations.map((o: { status: string }) => o.status)).toEqual(['success', 'success']);
    expect((await t.app.inject({ method: 'GET', url: `/api/v1/memories/${id}`, headers: h })).statusCode).toBe(404);
  });

  it('prepares the statements that repeat unless MNEMO_DATABASE_PREPARED_STATEMENTS=off', async () => {
    const prepared = async (flag: string) => {
      await pglite.exec('DEALLOCATE ALL');
      const storage = await createStorage({ ...loadConfig({ ...env, MNEMO_DATABASE_PREPARED_STATEMENTS: flag }), databaseUrl: env.MNEMO_DATABASE_URL! });
      try {
        const query = { vector: new Float32Array([1, 0, 0, 0]), modelId: 'm', limit: 1, minCosine: 0, filter: {} };
        for (let i = 0; i < 3; i++) await storage.memories.rankSimilar({ tenantId: 'nobody', mode: 'live', workspace: 'default' }, query);
        return (await pglite.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0]!.n;
      } finally {
        await storage.close();
      }
    };
    expect(await prepared('on')).toBeGreaterThan(0);
    expect(await prepared('off')).toBe(0);
  });

  it('creates a key from the CLI on the same database, which the server then accepts, and never prints the password', async () => {
    const { stdout, stderr, error } = await mnemo({ ...env, MNEMO_DATA_DIR: '/nonexistent-mnemo-dir' }, 'keys', 'create', '--tenant', 'cli-pg', '--json');
    expect(error).toBeUndefined();
    expect(stderr).toMatch(/^mnemo: database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres\n$/);
    const { key } = JSON.parse(stdout) as { key: string };
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/memories', headers: { 'x-api-key': key } })).statusCode).toBe(200);
  });

  it('records G11 requests in the database, whose chains `mnemo audit verify` checks', async () => {
    const auth = { authorization: `Bearer ${await t.key({ tenant: 'audited' })}` };
    await t.app.inject({ method: 'POST', url: '/v1/security/secrets', headers: auth, payload: { name: 'pg-secret', value: 'v' } });
    await t.app.inject({ method: 'GET', url: '/v1/security/secrets/pg-secret', headers: auth });
    const logs = json(await t.app.inject({ method: 'GET', url: '/v1/security/audit-logs', headers: auth }));
    expect(logs.data.map((r: { action: string }) => r.action)).toEqual(['secret.read', 'secret.create']);
    const { stdout, error } = await mnemo({ ...env, MNEMO_DATA_DIR: '/nonexistent-mnemo-dir' }, 'audit', 'verify');
    expect(error).toBeUndefined();
    expect(stdout).toMatch(/^audit log intact: 3 rows in 1 chain\n {2}audited\/live {2}3 rows {2}head 3 [0-9a-f]{64}\n$/);
  });
});
