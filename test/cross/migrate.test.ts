import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import { CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromFile } from '../../src/adapters/secrets/master-keyring.ts';
import { CliError } from '../../src/app/cli.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createStorage } from '../../src/app/storage.factory.ts';
import { open } from '../../src/core/secrets/envelope.ts';
import { memoryDeleted, memorySuperseded } from '../../src/core/events/memory-events.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { fileDatabase, useFreshSchema, type FileDatabase } from '../support/pglite.ts';
import { makeIngestion, makeMemory } from '../support/fixtures.ts';
import { servePglite, type SharedPglite } from '../support/pglite-server.ts';
import { createTestApp, json } from '../support/test-app.ts';
import { mnemo } from '../support/cli.ts';

/** The hashing embedder's model id in the test app (256 dimensions). */
const MODEL = 'hashing:v1-256';

/**
 * `mnemo migrate` copies a SQLite store filled through the HTTP surfaces into PostgreSQL (PGlite with pgvector, served
 * on loopback by pglite-socket and reached through `pg`), stopped half-way and run again; the server then answers
 * from PostgreSQL as it did from SQLite, with the same key.
 */
describe('mnemo migrate --from sqlite:DIR --to postgres://…', () => {
  const dirs: string[] = [];
  const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-migrate-')); dirs.push(d); return d; };
  let pglite: PGlite;
  let database: FileDatabase | undefined;
  let server: SharedPglite;
  let url: string;
  const cliEnv = { MNEMO_DATABASE_POOL_SIZE: '4' };

  beforeAll(async () => {
    database = await fileDatabase();
    pglite = database.pglite;
    server = await servePglite(pglite);
    url = server.url;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await database?.release();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('copies every table, resumes after an interruption, verifies the counts, and the copy serves the same answers', async () => {
    // The source: a SQLite data directory filled through the surfaces.
    const source = tempDir();
    const before = await createTestApp({ env: { MNEMO_DATA_DIR: source } });
    const key = await before.key();
    const xKey = { 'x-api-key': key };
    const bearer = { authorization: `Bearer ${key}` };
    const topic = json(await before.app.inject({ method: 'POST', url: '/api/v1/topics', headers: xKey, payload: { name: 'Ops' } })).data.id as string;
    const ids: string[] = [];
    for (const [title, content] of [['Deploy notes', 'We deploy with blue/green on Fridays'], ['Lunch', 'Pasta at noon'], ['Travel', 'Train to Lyon']]) {
      const res = await before.app.inject({ method: 'POST', url: '/api/v1/memories', headers: xKey, payload: { title, content, tags: ['t'], topic_id: topic } });
      expect(res.statusCode, res.body).toBe(201);
      ids.push(json(res).data.id as string);
    }
    const hook = await before.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: bearer, payload: { url: 'https://example.com/hook', events: ['memory.created'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const g10 = await before.app.inject({ method: 'POST', url: '/v1/webhooks', headers: xKey, payload: { url: 'https://example.com/g10', events: ['wallet.created'] } });
    expect(g10.statusCode, g10.body).toBe(201);
    const published = await before.app.inject({ method: 'POST', url: '/v1/events', headers: { ...xKey, 'idempotency-key': 'once' }, payload: { type: 'wallet.created', data: { n: 1 } } });
    expect(published.statusCode, published.body).toBe(201);
    const found = json(await before.app.inject({ method: 'POST', url: '/api/v1/memories/search', headers: xKey, payload: { query: 'deploy blue green fridays', threshold: 0 } }));
    await before.container.search.flushLog(); // the search's log row and event are written in batches
    const sourceStore = await createStorage(loadConfig({ MNEMO_DATA_DIR: source }));
    const scope = { tenantId: before.tenant, mode: 'live' as const, workspace: 'default' };
    const sourceEvents = await sourceStore.events.readAfter({ ...scope, afterSeq: 0, limit: 100 });
    const sourceVectors = await sourceStore.memories.vectorsOf(scope, ids, MODEL);
    await sourceStore.close();
    await before.close();
    expect(sourceEvents.length).toBeGreaterThanOrEqual(4);
    expect(sourceVectors.size).toBe(3);

    // Interrupted after a few rows: it says so and fails; run again, it finishes and verifies the counts.
    const from = `sqlite:${source}`;
    const partial = await mnemo(cliEnv, 'migrate', '--from', from, '--to', url, '--max-rows', '4', '--page-size', '2');
    expect(partial.error).toBeInstanceOf(CliError);
    expect((partial.error as Error).message).toMatch(/stopped after --max-rows 4 rows \(4 new\); run the command again/);
    expect(partial.stderr).toContain('postgres://postgres:***@127.0.0.1');
    expect(partial.stderr).not.toContain('secret');
    expect(partial.stderr).toMatch(/migrate 1\/\d+ rows \(api_keys\)/);
    const done = await mnemo(cliEnv, 'migrate', '--from', from, '--to', url, '--page-size', '2');
    expect(done.error).toBeUndefined();
    expect(done.stdout).toMatch(/^memories\s+3\s+3$/m);
    expect(done.stdout).toMatch(/^memory_vectors\s+3\s+3$/m);
    expect(done.stdout).not.toContain('MISMATCH');
    expect(done.stdout).toMatch(/migrated: \d+ rows copied, counts verified/);
    const again = await mnemo(cliEnv, 'migrate', '--from', from, '--to', url);
    expect(again.error).toBeUndefined();
    expect(again.stdout).toContain('migrated: 0 rows copied, counts verified');

    // The target answers as the source did: the same key, memories with their vectors, search, webhooks, events.
    // The copy holds the source's sealed secrets: it is served with the source's master key (its master.key).
    const after = await createTestApp({ env: { MNEMO_DATABASE_URL: url, MNEMO_DATABASE_POOL_SIZE: '1', MNEMO_DATA_DIR: source } });
    try {
      expect(await after.container.storage.memories.vectorsOf(scope, ids, MODEL)).toEqual(sourceVectors);
      expect(await after.container.storage.events.readAfter({ ...scope, afterSeq: 0, limit: 100 })).toEqual(sourceEvents);
      const one = await after.app.inject({ method: 'GET', url: `/api/v1/memories/${ids[0]}`, headers: xKey });
      expect(one.statusCode, one.body).toBe(200);
      expect(json(one).data).toMatchObject({ title: 'Deploy notes', tags: ['t'], topic_id: topic });
      const search = json(await after.app.inject({ method: 'POST', url: '/api/v1/memories/search', headers: xKey, payload: { query: 'deploy blue green fridays', threshold: 0 } }));
      expect(search.data.results.map((r: { id: string }) => r.id)).toEqual(found.data.results.map((r: { id: string }) => r.id));
      const hooks = json(await after.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: bearer }));
      expect(hooks.data.webhooks.map((w: { id: string }) => w.id)).toEqual([json(hook).data.id]);
      // With its secret, sealed, which signs the deliveries and is never shown again: the source's master key opens it.
      const sealed = (await after.container.storage.webhooks.sealedSecrets(null, 100)).find((r) => r.context.at(-1) === json(hook).data.id);
      expect(open(keyringFromFile(source).keyring, sealed!.context, sealed!.sealed)).toBe(json(hook).data.secret);
      expect(json(await after.app.inject({ method: 'GET', url: '/v1/webhooks', headers: xKey })).data.webhooks.map((w: { id: string }) => w.id)).toEqual([json(g10).data.id]);
      // The same Idempotency-Key is answered from the copied record.
      const replay = await after.app.inject({ method: 'POST', url: '/v1/events', headers: { ...xKey, 'idempotency-key': 'once' }, payload: { type: 'wallet.created', data: { n: 1 } } });
      expect(json(replay).data.id).toBe(json(published).data.id);
      // Requests append events of their own (user.activity, search.performed): after the copied ones, in order.
      const events = await after.container.storage.events.readAfter({ ...scope, afterSeq: 0, limit: 100 });
      expect(events.slice(0, sourceEvents.length)).toEqual(sourceEvents);
      expect(events.length).toBeGreaterThan(sourceEvents.length);
      expect(events.map((e) => e.seq)).toEqual(events.map((e) => e.seq).sort((x, y) => x - y));
    } finally {
      await after.close();
    }
  });

  it('refuses a missing source, bad store names, and ends non-zero when the counts differ', async () => {
    const nothing = join(tempDir(), 'nothing');
    const missing = await mnemo(cliEnv, 'migrate', '--from', `sqlite:${nothing}`, '--to', url);
    expect((missing.error as Error).message).toMatch(/^no database at .*nothing\/mnemo\.db$/);
    expect(existsSync(nothing)).toBe(false);
    const bad = await mnemo(cliEnv, 'migrate', '--from', 'mysql://x', '--to', url);
    expect(bad.error).toBeInstanceOf(CommanderError);
    expect(bad.stderr).toContain('use sqlite:DIR');

    // Back from PostgreSQL into a SQLite directory that already holds a key of its own: the key tables differ.
    const target = tempDir();
    expect((await mnemo({ MNEMO_DATA_DIR: target }, 'keys', 'create', '--tenant', 'local')).error).toBeUndefined();
    const back = await mnemo(cliEnv, 'migrate', '--from', url, '--to', `sqlite:${target}`);
    expect(back.error).toBeInstanceOf(CliError);
    expect((back.error as Error).message).toBe('row counts differ in api_keys (was the target empty?)');
    expect(back.stdout).toMatch(/^api_keys\s+1\s+2 {2}MISMATCH$/m); // the key of the first test, and the local one
    expect(back.stdout).toMatch(/^memories\s+(\d+)\s+\1$/m);
  });

  it('carries validity, a supersession chain, kept versions, tombstones and ingestion jobs, to PostgreSQL and back to SQLite', async () => {
    // The source: a SQLite store written through the storage port (the lifecycle's own writes: supersession, updates
    // that keep versions, a delete that leaves a tombstone), with the events those writes emit.
    const source = tempDir();
    const scope = { tenantId: 'lifecycle', mode: 'live' as const, workspace: 'default' };
    const day = (d: number): Date => new Date(Date.UTC(2027, 0, d));
    const vector = (axis: number) => ({ modelId: 'test:axis-4', vector: Float32Array.from([0, 1, 2, 3], (i) => (i === axis ? 1 : 0)) });
    const memory = (title: string, created: number, over: Parameters<typeof makeMemory>[1] = {}) =>
      makeMemory(scope, { id: randomUUID(), title, content: `${title} content`, createdAt: day(created), updatedAt: day(created), validFrom: day(created), ...over });
    // first <- second <- third: each superseded by the next; third is bounded and was updated twice; gone was
    // updated, then deleted; later holds from day 40 only.
    const first = memory('first', 1);
    const second = memory('second', 3);
    const third = memory('third', 5, { validUntil: day(30) });
    const gone = memory('gone', 2);
    const later = memory('later', 6, { validFrom: day(40) });
    const sourceStore = await createStorage(loadConfig({ MNEMO_DATA_DIR: source }));
    const supersede = (old: typeof first, by: typeof first, at: Date) => ({
      kind: 'supersede' as const, id: old.id, by: by.id, validUntil: by.validFrom, events: (m: typeof first) => [memorySuperseded(m, by.id, at, 'alice')],
    });
    await sourceStore.memories.insert(first, vector(0));
    await sourceStore.memories.insert(gone, vector(1));
    await sourceStore.memories.insert(later, vector(2));
    await sourceStore.memories.applyAtomically(scope, [{ kind: 'insert', memory: second, vector: vector(0) }, supersede(first, second, day(3))]);
    await sourceStore.memories.applyAtomically(scope, [{ kind: 'insert', memory: third, vector: vector(0) }, supersede(second, third, day(5))]);
    await sourceStore.memories.update(scope, third.id, { content: 'third, corrected' }, day(7), 'bob', null);
    await sourceStore.memories.update(scope, third.id, { title: 'third (final)', validUntil: day(31) }, day(8), 'carol', null);
    await sourceStore.memories.update(scope, gone.id, { content: 'gone, edited' }, day(9), 'bob', null);
    expect(await sourceStore.memories.delete(scope, gone.id, { at: day(10), by: 'eve', reason: 'user_request' },
      (m) => [memoryDeleted(m, day(10), 'eve', 'user_request')])).toBe(true);
    // An ingestion job whose proposal (superseding third) waits for a review.
    const job = makeIngestion(scope, { createdAt: day(11), updatedAt: day(11) });
    await sourceStore.ingestions.insert(job);
    const leased = (await sourceStore.ingestions.claimNext(day(11), 60_000, 5))!;
    expect(await sourceStore.ingestions.finish(job.id, leased.lease, {
      state: 'pending_review', usage: { model: 'm', modelCalls: 1, promptTokens: 12, completionTokens: 3 }, error: null, promptVersion: 'v1',
      updatedAt: day(12), finishedAt: null, proposals: [{
        id: 'p1', action: 'supersede', content: 'third, for good', supersedes: [third.id], duplicateOf: null, sources: [0, 1],
        reason: 'newer', status: 'pending', memoryId: null, decidedBy: null, decidedAt: null,
      }],
    })).toBe(true);

    const ids = [first, second, third, gone, later].map((m) => m.id);
    /** What the lifecycle left in a store, read through the port. */
    const lifecycleOf = async (store: Storage) => ({
      memories: await Promise.all(ids.map((id) => store.memories.findById(scope, id))),
      histories: await Promise.all(ids.map((id) => store.memories.history(scope, id, { limit: 10, offset: 0 }))),
      supersededBy: await Promise.all(ids.map(async (id) => (await store.memories.findSupersededBy(scope, id)).map((m) => m.id))),
      tombstones: await Promise.all(ids.map((id) => store.memories.tombstoneOf(scope, id))),
      validAt: await Promise.all([2, 4, 6, 35, 45].map(async (d) =>
        (await store.memories.list(scope, { filter: { validAt: day(d), createdTo: day(d) }, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' }))
          .items.map((m) => m.title))),
      ingestions: await store.ingestions.list(scope, { limit: 10, offset: 0 }),
    });
    const expected = await lifecycleOf(sourceStore);
    await sourceStore.close();
    // What the source holds, so that the comparisons below compare something.
    expect(expected.memories.map((m) => m && { title: m.title, version: m.version, supersededBy: m.supersededBy, validUntil: m.validUntil })).toEqual([
      { title: 'first', version: 1, supersededBy: second.id, validUntil: day(3) },
      { title: 'second', version: 1, supersededBy: third.id, validUntil: day(5) },
      { title: 'third (final)', version: 3, supersededBy: null, validUntil: day(31) },
      null,
      { title: 'later', version: 1, supersededBy: null, validUntil: null },
    ]);
    expect(expected.histories.map((h) => h.versions.map((v) => `${v.version}:${v.title}:${v.replacedBy}`))).toEqual(
      [[], [], ['2:third:carol', '1:third:bob'], [], []]);
    expect(expected.supersededBy).toEqual([[], [first.id], [second.id], [], []]);
    expect(expected.tombstones[3]).toEqual({ memoryId: gone.id, scope, deletedAt: day(10), deletedBy: 'eve', reason: 'user_request' });
    expect(expected.validAt).toEqual([['first'], ['second'], ['third (final)'], [], ['later']]);
    expect(expected.ingestions.items).toMatchObject([{ id: job.id, state: 'pending_review', revision: 2, messages: job.messages, proposals: [{ supersedes: [third.id] }] }]);
    /** Each event's id and the memory it is about (events.memory_id), in order. */
    const sqliteEventMemories = (dir: string) => {
      const db = new Database(join(dir, 'mnemo.db'), { readonly: true });
      try {
        return db.prepare('SELECT id, memory_id FROM events WHERE tenant_id = ? ORDER BY seq').all(scope.tenantId);
      } finally {
        db.close();
      }
    };
    const eventMemories = sqliteEventMemories(source);
    expect(eventMemories).toEqual([
      { id: expect.any(String), memory_id: first.id }, { id: expect.any(String), memory_id: second.id }, { id: expect.any(String), memory_id: gone.id },
    ]);

    // Into an empty PostgreSQL database (a new schema of the served PGlite), then back into a new SQLite directory.
    await useFreshSchema(pglite);
    const there = await mnemo(cliEnv, 'migrate', '--from', `sqlite:${source}`, '--to', url);
    expect(there.error).toBeUndefined();
    expect(there.stdout).toMatch(/^memories\s+4\s+4$/m);
    expect(there.stdout).toMatch(/^memory_versions\s+2\s+2$/m);
    expect(there.stdout).toMatch(/^memory_tombstones\s+1\s+1$/m);
    expect(there.stdout).toMatch(/^ingestions\s+1\s+1$/m);
    const postgresStore = await createStorage(loadConfig({ MNEMO_DATABASE_URL: url, MNEMO_DATABASE_POOL_SIZE: '1' }));
    try {
      expect(await lifecycleOf(postgresStore)).toEqual(expected);
    } finally {
      await postgresStore.close();
    }
    const pgEvents = await pglite.query('SELECT id, memory_id FROM events WHERE tenant_id = $1 ORDER BY seq', [scope.tenantId]);
    expect(pgEvents.rows).toEqual(eventMemories);

    const back = tempDir();
    const home = await mnemo(cliEnv, 'migrate', '--from', url, '--to', `sqlite:${back}`);
    expect(home.error).toBeUndefined();
    expect(home.stdout).toMatch(/^memory_versions\s+2\s+2$/m);
    expect(home.stdout).toMatch(/^memory_tombstones\s+1\s+1$/m);
    expect(home.stdout).toMatch(/^ingestions\s+1\s+1$/m);
    const backStore = await createStorage(loadConfig({ MNEMO_DATA_DIR: back }));
    try {
      expect(await lifecycleOf(backStore)).toEqual(expected);
    } finally {
      await backStore.close();
    }
    expect(sqliteEventMemories(back)).toEqual(eventMemories);
  });

  it('has --help', async () => {
    const { stdout, error } = await mnemo({}, 'migrate', '--help');
    expect((error as CommanderError).exitCode).toBe(0);
    expect(stdout).toContain('Usage: mnemo migrate');
    expect(stdout).toContain('--max-rows');
  });
});
