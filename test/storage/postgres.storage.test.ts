import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteExecutor, type PgExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { migratePostgres, PG_MIGRATIONS } from '../../src/adapters/storage/postgres/pg-migrations.ts';
import { createPostgresStorage, type PostgresStorageOptions } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { createAuditHeadSigner, signUnsignedAuditHeads } from '../../src/core/audit/audit.head.ts';
import { createAuditService } from '../../src/core/audit/audit.service.ts';
import { verifyAuditChains } from '../../src/core/audit/audit.verifier.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { emptiedSchema, fileDatabase, type FileDatabase, useFreshSchema } from '../support/pglite.ts';
import { longTests } from '../support/test-depth.ts';
import { describeStorageContract } from './storage.contract.ts';

// The worker's in-process PostgreSQL (PGlite with pgvector, shared with the worker's other files: support/pglite.ts):
// the contract's stores share one schema of this file, emptied before each test; the specifics below, which migrate,
// get fresh schemas. All are dropped after the file.
let pglite: PGlite;
let database: FileDatabase | undefined;
beforeAll(async () => { database = await fileDatabase(); pglite = database.pglite; }, 60_000);
afterAll(async () => { await database?.release(); });

/** An executor on a fresh schema of the shared PGlite; closing it leaves the database open for the next test. */
async function freshSchema(): Promise<PgExecutor> {
  await useFreshSchema(pglite);
  return { ...pgliteExecutor(pglite), close: async () => undefined };
}
const openPostgres = async (options?: PostgresStorageOptions) => createPostgresStorage(await freshSchema(), options);

let emptied: (() => Promise<string>) | undefined;
/** The contract's fresh, empty store: one migrated schema for the file, emptied before each test (support/pglite.ts). */
async function emptyStore() {
  emptied ??= emptiedSchema(pglite);
  await emptied();
  return createPostgresStorage({ ...pgliteExecutor(pglite), close: async () => undefined });
}

// Every section of the contract runs: memories, keyword search and filters, topics, atomic groups, events and
// webhook deliveries, usage figures, api keys, ping.
/** Raw SQL on the shared PGlite (its search_path is the current contract schema), as someone with database access. */
const auditSql = {
  sql: async (statement: string, params: unknown[] = []) => {
    let i = 0;
    await pglite.query(statement.replace(/\?/g, () => `$${++i}`), params);
  },
  liftAppendOnlyGuard: async () => { await pglite.exec('ALTER TABLE audit_logs DISABLE TRIGGER USER'); },
};

// The contract through this in-process executor (one session: PgExecutor.sessions 'one') is `npm run test:long`'s. In
// `npm test` it runs in postgres-socket.storage.test.ts on the same PGlite, adapter and assertions, through the `pg`
// driver and pool that production uses; the single-session path is what the `postgres` project's every app runs on
// (test/support/test-store.ts), and the specifics below keep this executor.
if (longTests()) describeStorageContract('postgres (PGlite + pgvector)', emptyStore, { audit: auditSql });

describe('postgres specifics', () => {
  it('copies every table with `mnemo migrate`, except those rebuilt from the copied rows', async () => {
    const db = await freshSchema();
    await migratePostgres(db);
    const rows = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'", []);
    const tables = rows.map((r) => r.table_name);
    // Left out for a reason: the workspace versions (derived from memories), the migrations' own bookkeeping, the
    // record of a reindex run on the source (a run resumes on the target from the copied vectors and records itself),
    // the vector change log (its triggers write it as the copied vectors load) and the keyword statistics (their
    // triggers count the copied memories).
    const rebuilt = ['workspace_versions', 'schema_migrations', 'reindex_progress', 'vector_versions', 'vector_changes',
      'memory_keyword_stats'];
    expect(tables.filter((t) => !rebuilt.includes(t)).sort()).toEqual(TRANSFER_TABLES.map((t) => t.name).sort());
  });

  it('migrates once: a second open applies nothing and keeps the data', async () => {
    const db = await freshSchema();
    expect(await migratePostgres(db)).toEqual(PG_MIGRATIONS.map((m) => m.version));
    const storage = await createPostgresStorage(db);
    const m = makeMemory(scopeA);
    await storage.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    expect(await migratePostgres(db)).toEqual([]);
    expect(await storage.memories.findById(scopeA, m.id)).toEqual(m);
    const versions = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(versions.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  it('answers similarity search from the HNSW index above the exact-scan size: best first, filtered, in scope', async () => {
    // Scored in SQL with exactScanBelow 0: every search takes the index path (iterative scan), checked against a
    // brute-force oracle.
    const storage = await openPostgres({ vectorScan: 'database', exactScanBelow: 0 });
    const rows = Array.from({ length: 40 }, (_, i) => ({
      memory: makeMemory(i % 4 === 0 ? scopeB : scopeA, { tags: i % 3 === 0 ? ['three'] : [] }),
      vector: axisVector(8, i % 8, (i + 3) % 8, (i % 5) / 10),
    }));
    for (const r of rows) await storage.memories.insert(r.memory, { modelId: 'm8', vector: r.vector });
    const probe = axisVector(8, 2, 3, 0.2);
    const cosine = (a: Float32Array, b: Float32Array) => {
      let dot = 0; let na = 0; let nb = 0;
      a.forEach((x, i) => { dot += x * b[i]!; na += x * x; nb += b[i]! * b[i]!; });
      return dot / Math.sqrt(na * nb);
    };
    const expected = rows.filter((r) => r.memory.scope.tenantId === scopeA.tenantId && r.memory.tags.includes('three'))
      .map((r) => ({ id: r.memory.id, cosine: cosine(r.vector, probe) }))
      .sort((a, b) => b.cosine - a.cosine);
    const found = await storage.memories.searchSimilar(scopeA, { vector: probe, modelId: 'm8', limit: 5, minCosine: -1, filter: { tagsAny: ['three'] } });
    // From the index, total is a lower bound: one more than asked tells "there is more" without counting the scope.
    expect(expected.length).toBeGreaterThan(6);
    expect(found.total).toBe(6);
    expect(found.hits).toHaveLength(5);
    found.hits.forEach((h, i) => expect(h.cosine).toBeCloseTo(expected[i]!.cosine, 5));
    const everything = await storage.memories.searchSimilar(scopeA, { vector: probe, modelId: 'm8', limit: 50, minCosine: -1, filter: { tagsAny: ['three'] } });
    expect(everything.hits.map((h) => h.memory.id)).toEqual(expected.map((e) => e.id));
    expect(everything.total).toBe(expected.length);

    // The plan really uses the partial HNSW index of the model when the query is written as the adapter writes it.
    // SET LOCAL: the PGlite session is shared with the worker's next files.
    const plan = await pglite.transaction(async (tx) => {
      await tx.exec('SET LOCAL enable_seqscan = off');
      return tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT v.memory_seq FROM memory_vectors v
        WHERE v.model_id = 'm8' AND v.dims = 8 ORDER BY v.embedding::vector(8) <=> '[${Array.from(probe).join(',')}]'::vector(8) LIMIT 5`);
    });
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/memory_vectors_hnsw_/);
    await storage.close();
  });

  it('ranks keyword phrases within one field, and ignores stop words between their words', async () => {
    const storage = await openPostgres();
    const vec = { modelId: 'm', vector: axisVector(4, 0) };
    const phrase = makeMemory(scopeA, { title: 'Notes', content: 'a quick deploy today' });
    const split = makeMemory(scopeA, { title: 'Quick', content: 'deploy later' });
    const apart = makeMemory(scopeA, { title: 'Other', content: 'deploy, then quick lunch' });
    for (const m of [phrase, split, apart]) await storage.memories.insert(m, vec);
    const found = await storage.memories.searchKeyword(scopeA, { terms: ['quick deploy'], limit: 10, filter: {} });
    expect(found.hits.map((h) => h.memory.id)).toEqual([phrase.id]);
    const withStopWord = await storage.memories.searchKeyword(scopeA, { terms: ['the quick deploy'], limit: 10, filter: {} });
    expect(withStopWord.hits.map((h) => h.memory.id)).toEqual([phrase.id]);
  });
  it('keeps each scope\'s keyword statistics (BM25\'s N and total length) equal to a count over its memories', async () => {
    const db = await freshSchema();
    const storage = await createPostgresStorage(db);
    const vec = { modelId: 'm', vector: axisVector(4, 0) };
    const counted = () => db.query<{ tenant_id: string; workspace: string; documents: string; total_length: string }>(
      `SELECT tenant_id, workspace, COUNT(*)::text AS documents, SUM(keyword_length)::text AS total_length FROM memories
       GROUP BY 1, 2 ORDER BY 1, 2`);
    const kept = () => db.query<{ tenant_id: string; workspace: string; documents: string; total_length: string }>(
      `SELECT tenant_id, workspace, documents::text, total_length::text FROM memory_keyword_stats WHERE documents <> 0
       ORDER BY 1, 2`);
    const a = [makeMemory(scopeA, { title: 'Deploy notes', content: 'ship it on friday' }), makeMemory(scopeA, { content: 'one' })];
    await storage.memories.insert(a[0]!, vec);
    await storage.memories.applyAtomically(scopeA, [{ kind: 'insert', memory: a[1]!, vector: vec }]);
    await storage.memories.applyAtomically(scopeB, [1, 2, 3].map((i) => ({
      kind: 'insert' as const, memory: makeMemory(scopeB, { content: `memory number ${i} of scope b` }), vector: vec,
    })));
    expect((await kept()).length).toBe(2);
    expect(await kept()).toEqual(await counted());
    // Re-measured by a new text, unchanged by a read's access count, lowered by a forget.
    await storage.memories.update(scopeA, a[0]!.id, { content: 'ship it on friday after the review, then tell the team' },
      new Date(), 'u', null);
    await storage.memories.recordAccess(scopeA, a[1]!.id, new Date());
    await storage.memories.delete(scopeA, a[1]!.id, { at: new Date(), by: 'u', reason: 'test' });
    expect(await kept()).toEqual(await counted());
    const ranked = await storage.memories.searchKeyword(scopeA, { terms: ['friday'], limit: 5, filter: {} });
    expect(ranked.hits.map((h) => h.memory.id)).toEqual([a[0]!.id]);

    // Memories stored before the statistics existed are counted by the migration.
    await db.exec(`DROP TABLE memory_keyword_stats; DROP FUNCTION memory_keyword_stats_changed() CASCADE;
      DROP FUNCTION add_keyword_stats; DELETE FROM schema_migrations WHERE version = 24`);
    expect(await migratePostgres(db)).toEqual([24]);
    expect(await kept()).toEqual(await counted());
  });

  it('stores text PostgreSQL cannot hold (NUL, lone surrogates) as U+FFFD instead of failing the statement', async () => {
    // SQLite keeps both; PostgreSQL text refuses NUL and jsonb refuses the \u0000 and lone-surrogate escapes.
    const storage = await openPostgres();
    const m = makeMemory(scopeA, {
      title: 'a\u0000b', content: 'c\u0000d', tags: ['t\u0000u'], metadata: { 'k\udfff': 'v\u0000w', keep: 'x\\u0000y' },
    });
    await storage.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    expect(await storage.memories.findById(scopeA, m.id)).toEqual({
      ...m, title: 'a\ufffdb', content: 'c\ufffdd', tags: ['t\ufffdu'], metadata: { 'k\ufffd': 'v\ufffdw', keep: 'x\\u0000y' },
    });
    expect(await storage.memories.findById(scopeA, 'no\u0000such')).toBeNull();
    await storage.searchLog.appendMany([{
      scope: scopeA, userId: 'u', surface: 'g1', kind: 'semantic', query: 'q\u0000', resultsCount: 0, executionMs: 1,
      avgScore: null, filters: { tags: ['x\udfffy'] }, at: new Date(),
    }]);
    expect((await storage.searchLog.suggestQueries(scopeA, 'q', 5)).length).toBe(1);
    await storage.close();
  });

  it('gives audit chains written before signed heads an unsigned head at their last row, which signing at start signs', async () => {
    const db = await freshSchema();
    const signer = createAuditHeadSigner({ activeId: 'mk_upgrade', keys: new Map([['mk_upgrade', randomBytes(32)]]) });
    const before = await createPostgresStorage(db);
    const audit = createAuditService({ audit: before.audit, clock: new ManualClock(Date.UTC(2026, 0, 1)), heads: signer });
    const last = [];
    for (const owner of [{ tenantId: 'b', mode: 'live' }, { tenantId: 'a', mode: 'test' }, { tenantId: 'b', mode: 'live' }] as const) {
      last.push(await audit.record({ owner, actor: { userId: 'u', keyId: null }, action: 'secret.read', resource: 'secret:x', outcome: 'success', status: 200 }));
    }
    await before.close();
    // The store as the previous version left it: no heads, the migration not yet run.
    await db.exec("DROP TABLE audit_heads; DELETE FROM schema_migrations WHERE name = 'audit chain heads, signed'");
    const upgraded = await createPostgresStorage(db);
    expect(await upgraded.audit.heads(null, 10)).toEqual([last[1]!, last[2]!].map((r) => ({ owner: r.owner, seq: r.seq, hash: r.hash, keyId: null, signedAt: null, mac: null })));
    const at = new Date(Date.UTC(2026, 0, 2));
    expect(await signUnsignedAuditHeads(upgraded.audit, signer, at)).toEqual([last[1]!.owner, last[2]!.owner]);
    expect(await upgraded.audit.heads(null, 10)).toEqual([last[1]!, last[2]!].map((r) => signer.sign(r.owner, r, at)));
    expect((await verifyAuditChains(upgraded.audit, signer)).ok).toBe(true);
    await upgraded.close();
  });

  it('gives API keys made before names and rotation the default name, no successor, and a place in their owner\'s pages', async () => {
    const db = await freshSchema();
    // Every migration before the one that adds names (found by name: versions are renumbered when branches merge).
    await migratePostgres(db, PG_MIGRATIONS.slice(0, PG_MIGRATIONS.findIndex((x) => x.name.startsWith('api keys: names'))));
    await db.query(`INSERT INTO api_keys (id, tenant_id, user_id, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at)
      VALUES ('key_old', 't', 'u', 'pro', 'test', '["secrets:read"]', 'mnemo_test_AbCd', $1, $2, NULL, NULL)`, ['a'.repeat(64), new Date(1000).toISOString()]);
    const storage = await createPostgresStorage(db);
    const expected = {
      id: 'key_old', tenantId: 't', userId: 'u', name: 'API key', tier: 'pro', mode: 'test', scopes: ['secrets:read'],
      displayPrefix: 'mnemo_test_AbCd', digest: 'a'.repeat(64), createdAt: new Date(1000), expiresAt: null, revokedAt: null, replacedBy: null,
    };
    expect(await storage.apiKeys.findById('key_old')).toEqual(expected);
    expect(await storage.apiKeys.listPage({ tenantId: 't', mode: 'test' }, { limit: 10, after: null })).toEqual({ items: [expected], total: 1 });
    await storage.close();
  });
});
