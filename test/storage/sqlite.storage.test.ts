import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/adapters/storage/sqlite/migrations.ts';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { createSqliteStorage, type SqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { LIFECYCLE_SQL } from '../../src/adapters/storage/sqlite/sqlite-memory.repository.ts';
import { SqliteKeywordLengths } from '../../src/adapters/storage/sqlite/sqlite-keyword-lengths.ts';
import { type Posting, SqliteKeywordPostings } from '../../src/adapters/storage/sqlite/sqlite-keyword-postings.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer } from '../../src/app/container.ts';
import { createAuditHeadSigner } from '../../src/core/audit/audit.head.ts';
import { createAuditService } from '../../src/core/audit/audit.service.ts';
import { verifyAuditChains } from '../../src/core/audit/audit.verifier.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createStorage } from '../../src/app/storage.factory.ts';
import { TRANSFER_TABLES } from '../../src/core/storage-transfer.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { describeStorageContract } from './storage.contract.ts';

/** Who deleted, when and why (the tombstone a delete leaves). */
const DELETION = { at: new Date(Date.UTC(2026, 0, 2)), by: 'user-1', reason: 'test' };

const dir = mkdtempSync(join(tmpdir(), 'mnemo-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

// A real file per test, as `npm start` uses: WAL, migrations and all; the second connection is another handle on
// that file, as the CLI opens beside the server.
const contractFile = () => join(dir, `contract-${n}.db`);
/** Runs `fn` on a handle of its own to the contract's current file, as someone with the file in hand could. */
function onFile(fn: (db: Database.Database) => void): void {
  const db = new Database(contractFile());
  try {
    fn(db);
  } finally {
    db.close();
  }
}
describeStorageContract('sqlite', async () => {
  n++;
  return createSqliteStorage({ file: contractFile() });
}, {
  openSecond: async () => createSqliteStorage({ file: contractFile() }),
  audit: {
    sql: async (statement, params = []) => onFile((db) => db.prepare(statement).run(...params)),
    liftAppendOnlyGuard: async () => onFile((db) => db.exec('DROP TRIGGER audit_logs_no_update; DROP TRIGGER audit_logs_no_delete')),
  },
});

describe('sqlite specifics', () => {
  it('copies every table with `mnemo migrate`, except those rebuilt from the copied rows', async () => {
    const file = join(dir, 'tables.db');
    await (createSqliteStorage({ file })).close();
    const db = new Database(file, { readonly: true });
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    db.close();
    // Each left out for a reason: derived from memories (the FTS index and its shadow tables, the tag and metadata
    // indexes, the workspace versions the vector and filter caches compare and the filter changes' log), the store's own bookkeeping (migrations, AUTOINCREMENT), or the
    // record of a reindex run on the source (a run resumes on the target from the copied vectors and records itself),
    // or the source's persisted vector codes (files beside the source store; the target writes its own).
    const rebuilt = ['memories_fts', 'memories_fts_config', 'memories_fts_data', 'memories_fts_docsize', 'memories_fts_idx', 'memory_tags',
      'workspace_versions', 'schema_migrations', 'sqlite_sequence', 'reindex_progress', 'memory_metadata', 'workspace_filter_versions',
      'workspace_filter_changes', 'vector_snapshots'];
    expect(tables.filter((t) => !rebuilt.includes(t)).sort()).toEqual(TRANSFER_TABLES.map((t) => t.name).sort());
  });

  it('gives audit chains written before signed heads an unsigned head, which the next start signs at the chain\'s end', async () => {
    const file = join(dir, 'audit-heads-upgrade.db');
    const keyring = { activeId: 'mk_upgrade', keys: new Map([['mk_upgrade', randomBytes(32)]]) };
    const signer = createAuditHeadSigner(keyring);
    const before = createSqliteStorage({ file });
    const audit = createAuditService({ audit: before.audit, clock: new ManualClock(Date.UTC(2026, 0, 1)), heads: signer });
    const owners = [{ tenantId: 'a', mode: 'live' }, { tenantId: 'a', mode: 'test' }] as const;
    const last = [];
    for (const owner of owners) {
      for (let i = 0; i < 3; i++) {
        const row = await audit.record({ owner, actor: { userId: 'u', keyId: null }, action: 'secret.read', resource: 'secret:x', outcome: 'success', status: 200 });
        if (i === 2) last.push(row);
      }
    }
    await before.close();
    // The store as the previous version left it: no heads, the migration not yet run.
    const raw = new Database(file);
    raw.exec("DROP TABLE audit_heads; DELETE FROM schema_migrations WHERE name = 'audit chain heads, signed'");
    raw.close();
    const upgraded = createSqliteStorage({ file });
    expect(await upgraded.audit.heads(null, 10)).toEqual(last.map((r) => ({ owner: r.owner, seq: 3, hash: r.hash, keyId: null, signedAt: null, mac: null })));
    expect(await verifyAuditChains(upgraded.audit, signer)).toMatchObject({ ok: false, broken: [{ reason: 'head_missing' }, { reason: 'head_missing' }] });
    // The server's start signs them, then verify passes.
    const config = loadConfig({ MNEMO_DATA_DIR: join(dir, 'audit-heads-upgrade'), MNEMO_EMBEDDINGS: 'hashing' });
    const container = await createContainer(config, { storage: upgraded, keyring, clock: new ManualClock(Date.UTC(2026, 0, 2)) });
    expect(await upgraded.audit.heads(null, 10)).toEqual(last.map((r) => signer.sign(r.owner, r, new Date(Date.UTC(2026, 0, 2)))));
    expect((await container.audit.verify(owners[1])).ok).toBe(true);
    expect((await verifyAuditChains(upgraded.audit, signer)).ok).toBe(true);
    await container.close();
  });

  it('syncs every commit by default (synchronous=FULL in WAL mode), NORMAL only when configured', async () => {
    const file = join(dir, 'durable.db');
    const byDefault = openSqlite(file);
    expect(byDefault.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(byDefault.pragma('synchronous', { simple: true })).toBe(2);
    byDefault.close();
    const fast = openSqlite(file, { synchronous: 'normal' });
    expect(fast.pragma('synchronous', { simple: true })).toBe(1);
    fast.close();
    // The same setting reaches the store the server and the CLI open from the configuration.
    for (const [value, expected] of [[undefined, 'full'], ['full', 'full'], ['normal', 'normal']] as const) {
      const env = { MNEMO_DATA_DIR: join(dir, 'configured'), ...(value ? { MNEMO_SQLITE_SYNCHRONOUS: value } : {}) };
      const storage = await createStorage(loadConfig(env));
      expect(storage.kind).toBe('sqlite');
      expect((storage as SqliteStorage).synchronous, value).toBe(expected);
      await storage.close();
    }
  });

  it('reopens a file with its data and schema intact', async () => {
    const file = join(dir, 'reopen.db');
    const first = createSqliteStorage({ file });
    const m = makeMemory(scopeA);
    await first.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    await first.close();
    const second = createSqliteStorage({ file });
    expect(await second.memories.findById(scopeA, m.id)).toEqual(m);
    await second.close();
  });

  it('sees vectors written by another connection to the same file', async () => {
    const file = join(dir, 'two-writers.db');
    const server = createSqliteStorage({ file });
    const cli = createSqliteStorage({ file });
    const query = { vector: axisVector(4, 2), modelId: 'm', limit: 5, minCosine: 0.8, filter: {} };
    expect((await server.memories.searchSimilar(scopeA, query)).total).toBe(0);
    await cli.memories.insert(makeMemory(scopeA), { modelId: 'm', vector: axisVector(4, 2) });
    expect((await server.memories.searchSimilar(scopeA, query)).total).toBe(1);
    await server.close();
    await cli.close();
  });

  it('scores keywords as SQLite\'s own bm25() does when the file holds a single scope', async () => {
    const file = join(dir, 'bm25.db');
    const server = createSqliteStorage({ file });
    const cli = createSqliteStorage({ file });
    const vector = { modelId: 'm', vector: axisVector(4, 0) };
    const rows = [
      makeMemory(scopeA, { title: 'Deploy guide', content: 'How we deploy services: a quick deploy, then checks', tags: ['deploy', 'ops'] }),
      makeMemory(scopeA, { title: 'Notes', content: 'Lunch, then a quick deploy, then pasta and more lunch' }),
      makeMemory(scopeA, { title: 'Pasta', content: `Pasta with tomatoes. ${'Stir and wait. '.repeat(30)}`, tags: ['food'] }),
      makeMemory(scopeA, { title: 'Résumé', content: 'Quick notes on my résumé, deployed to the site' }),
      makeMemory(scopeA, { title: 'Travel', content: 'Train to Lyon on Friday' }),
    ];
    for (const m of rows) await server.memories.insert(m, vector);
    // "quick deploy" is a phrase (two tokens in a row), "deploying" and "resume" meet the stemmer and the diacritics.
    const terms = ['deploying', 'quick deploy', 'pasta', 'resume', 'tomato'];
    const sqlite = new Database(file, { readonly: true });
    const reference = () => sqlite.prepare<[string], { id: string; score: number }>(
      `SELECT m.id, -bm25(memories_fts, 2.0, 1.0, 1.5) AS score FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
       WHERE memories_fts MATCH ? ORDER BY score DESC, m.seq`,
    ).all(terms.map((t) => `"${t}"`).join(' OR '));
    const expectSameAsSqlite = async () => {
      const expected = reference();
      const { hits, total } = await server.memories.searchKeyword(scopeA, { terms, limit: 10, filter: {} });
      expect(hits.map((h) => h.memory.id)).toEqual(expected.map((r) => r.id));
      expect(total).toBe(expected.length);
      hits.forEach((h, i) => expect(h.relevance).toBeCloseTo(expected[i]!.score, 12));
    };

    await expectSameAsSqlite();
    expect(reference().length).toBe(4);
    // Kept in step with this process's writes, and with another process's.
    await server.memories.update(scopeA, rows[4]!.id, { content: 'Train to Lyon, then a quick deploy of pasta' }, new Date(), 'u', null);
    await server.memories.delete(scopeA, rows[0]!.id, DELETION);
    await expectSameAsSqlite();
    await cli.memories.insert(makeMemory(scopeA, { title: 'Quick deploy', content: `quick deploy ${'and more '.repeat(40)}` }), vector);
    await expectSameAsSqlite();
    sqlite.close();
    await server.close();
    await cli.close();
  });

  it('keeps its keyword posting lists in step with every kind of write it makes, in each scope', async () => {
    const file = join(dir, 'postings.db');
    const server = createSqliteStorage({ file });
    const watcher = new Database(file, { readonly: true });
    const dataVersion = watcher.prepare('PRAGMA data_version').pluck();
    const vector = { modelId: 'm', vector: axisVector(4, 0) };
    const terms = ['deploy', 'pasta', 'tomato', 'lunch', 'okapi'];
    const search = (storage: SqliteStorage, scope: typeof scopeA, cap?: number) =>
      storage.memories.searchKeyword(scope, { terms, limit: 50, filter: {}, candidatesPerTerm: cap })
        .then(({ hits, total }) => ({ total, hits: hits.map((h) => [h.memory.title, h.relevance]) }));
    // The server's answers (its lists read once, then kept in step) against a fresh connection's (read from the index
    // now). The fresh one must commit nothing: a commit would make the server drop its lists and prove nothing.
    const expectSameAsFresh = async () => {
      for (const scope of [scopeA, scopeB]) {
        for (const cap of [undefined, 2]) {
          const before = dataVersion.get();
          const fresh = createSqliteStorage({ file });
          const expected = await search(fresh, scope, cap);
          await fresh.close();
          expect(dataVersion.get()).toBe(before);
          expect(await search(server, scope, cap), `${scope.tenantId} cap ${cap}`).toEqual(expected);
        }
      }
    };
    const inA = Array.from({ length: 6 }, (_, i) => makeMemory(scopeA, {
      title: `A${i} ${i % 2 ? 'deploy' : 'pasta'}`, content: `${'deploy lunch '.repeat(i)}tomato ${i}`, tags: i % 3 ? [] : ['pasta'],
    }));
    const inB = Array.from({ length: 3 }, (_, i) => makeMemory(scopeB, { title: `B${i} deploy`, content: 'pasta deploy' }));
    for (const m of [...inA, ...inB]) await server.memories.insert(m, vector);
    await expectSameAsFresh();

    await server.memories.insert(makeMemory(scopeA, { title: 'A6 okapi', content: 'deploy deploy tomato' }), vector);
    await expectSameAsFresh();
    await server.memories.update(scopeA, inA[1]!.id, { content: 'nothing of the words' }, new Date(), 'u', null);
    await server.memories.update(scopeA, inA[2]!.id, { tags: ['okapi', 'lunch'] }, new Date(), 'u', null);
    await server.memories.update(scopeA, inA[4]!.id, { title: 'A4 tomato tomato' }, new Date(), 'u', null);
    await expectSameAsFresh();
    await server.memories.delete(scopeA, inA[3]!.id, DELETION);
    await server.memories.delete(scopeB, inB[0]!.id, DELETION);
    await expectSameAsFresh();
    const late = makeMemory(scopeA, { title: 'A7 lunch', content: 'pasta okapi' });
    await server.memories.applyAtomically(scopeA, [
      { kind: 'insert', memory: late, vector },
      { kind: 'update', id: late.id, patch: { content: 'pasta okapi okapi deploy' }, at: new Date(), by: 'u', vector: null },
      { kind: 'update', id: inA[0]!.id, patch: { title: 'A0 okapi' }, at: new Date(), by: 'u', vector: null },
      { kind: 'delete', id: inA[5]!.id, deletion: DELETION },
    ]);
    await server.memories.importMemories([{ memory: makeMemory(scopeA, { title: 'A8 imported deploy', content: 'lunch' }), vectors: [] }]);
    await expectSameAsFresh();
    // The newest memory of A deleted, then a memory of B given the same seq (SQLite reuses the largest rowid).
    const newest = makeMemory(scopeA, { title: 'A9 deploy pasta' });
    await server.memories.insert(newest, vector);
    await expectSameAsFresh();
    await server.memories.delete(scopeA, newest.id, DELETION);
    await server.memories.insert(makeMemory(scopeB, { title: 'B3 deploy pasta tomato' }), vector);
    await expectSameAsFresh();
    watcher.close();
    await server.close();
  });

  it('reads a token again, exactly, after its posting list was evicted', async () => {
    const file = join(dir, 'evict.db');
    const writer = createSqliteStorage({ file });
    const words = ['alpha', 'beta', 'gamma', 'delta'];
    for (let i = 0; i < 40; i++) {
      await writer.memories.insert(makeMemory(i % 4 === 3 ? scopeB : scopeA, {
        title: `t${i} ${words[i % 4]}`, content: words.map((w, k) => `${w} `.repeat((i + k) % 3)).join('') + 'end',
      }), { modelId: 'm', vector: axisVector(4, 0) });
    }
    await writer.close();
    const db = openSqlite(file);
    const lengths = new SqliteKeywordLengths(db);
    const bounded = new SqliteKeywordPostings(db, 30); // less than one list: each call evicts every other list
    const unbounded = new SqliteKeywordPostings(db);
    // Seq, frequency and the memory's length as the posting holds them.
    const contents = (p: Posting) => {
      const run = p.newest(p.size);
      return Array.from({ length: p.size }, (_, i) => [run.seqs[i], run.frequencies[i], run.lengths[i]]);
    };
    const firstRead = new Map<string, { bounded: Posting; unbounded: Posting }>();
    for (let round = 0; round < 3; round++) {
      for (const scope of [scopeA, scopeB]) {
        for (const word of words) {
          const members = lengths.get(scope).bySeq;
          const kept = unbounded.lists(scope, [word], members)[0]!;
          const reread = bounded.lists(scope, [word], members)[0]!;
          const expected = contents(kept);
          expect(expected.length).toBeGreaterThan(0);
          // Each posting carries its memory's length as the scope's lengths have it.
          for (const [seq, , length] of expected) expect(length).toBe(members.get(seq!));
          expect(contents(reread), `${scope.tenantId} ${word}`).toEqual(expected);
          // The bound really evicted: the bounded store read the list again, the unbounded one kept its first read.
          const key = `${scope.tenantId} ${word}`;
          const first = firstRead.get(key);
          if (!first) firstRead.set(key, { bounded: reread, unbounded: kept });
          else {
            expect(reread).not.toBe(first.bounded);
            expect(kept).toBe(first.unbounded);
          }
        }
      }
    }
    db.close();
  });

  it('reads a scope\'s lists again when its lengths were reloaded (a commit elsewhere between the two caches\' checks)', async () => {
    const file = join(dir, 'lengths-race.db');
    const writer = createSqliteStorage({ file });
    const m = makeMemory(scopeA, { title: 'alpha', content: 'short' });
    await writer.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    const db = openSqlite(file);
    const lengths = new SqliteKeywordLengths(db);
    const postings = new SqliteKeywordPostings(db);
    const lengthHeld = (members: ReadonlyMap<number, number>) => {
      const run = postings.lists(scopeA, ['alpha'], members)[0]!.newest(1000);
      return { seq: run.seqs[run.start]!, length: run.lengths[run.start]! };
    };
    // A search reads the lengths; another connection commits; the same search then reads the lists (which see the
    // commit and read the index again, but with the lengths from before it).
    const before = lengths.get(scopeA).bySeq;
    await writer.memories.update(scopeA, m.id, { content: 'much longer content now, with many more words in it' }, new Date(), 'u', null);
    lengthHeld(before);
    // The next search reloads the lengths: the lists must follow them.
    const now = lengths.get(scopeA).bySeq;
    expect(now).not.toBe(before);
    const held = lengthHeld(now);
    expect(held.length).toBe(now.get(held.seq));
    expect(held.length).toBeGreaterThan(before.get(held.seq)!);
    db.close();
    await writer.close();
  });

  it('finds the memories not valid at a moment through the bounded partial index alone', async () => {
    const file = join(dir, 'validity-plans.db');
    const storage = createSqliteStorage({ file });
    const at = Date.UTC(2027, 0, 10);
    for (let i = 0; i < 50; i++) {
      const createdAt = new Date(at - (i + 1) * 60_000);
      await storage.memories.insert(makeMemory(scopeA, { createdAt, updatedAt: createdAt, validFrom: createdAt,
        validUntil: i % 10 === 0 ? new Date(at - 1) : null, supersededBy: i % 10 === 0 ? 'successor' : null }), { modelId: 'm', vector: axisVector(4, 0) });
    }
    await storage.close();
    const db = new Database(file);
    const plan = (sql: string, params: unknown[]) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
      .map((r) => r.detail).join('\n');
    const sp = [scopeA.tenantId, scopeA.mode, scopeA.workspace];
    try {
      // Without statistics (as a fresh file) and with them (after ANALYZE), alike.
      for (const analyzed of [false, true]) {
        if (analyzed) db.exec('ANALYZE');
        const excluded = plan(LIFECYCLE_SQL.excludedAt, [...sp, at, at]);
        expect(excluded, `analyzed: ${analyzed}`).toMatch(/SEARCH m USING INDEX memories_scope_bounded \(tenant_id=\? AND mode=\? AND workspace=\?\)/);
        expect(excluded).not.toMatch(/SCAN/);
        expect(plan(LIFECYCLE_SQL.supersededBy, [...sp, 'successor']), `analyzed: ${analyzed}`)
          .toMatch(/USING INDEX memories_scope_superseded_by \(tenant_id=\? AND mode=\? AND workspace=\? AND superseded_by=\?\)/);
      }
      expect(db.prepare(LIFECYCLE_SQL.excludedAt).pluck().all(...sp, at, at)).toHaveLength(5);
      expect(db.prepare(LIFECYCLE_SQL.excludedAt).pluck().all(...sp, at - 2, at - 2)).toHaveLength(0);
      // Memories valid from their creation are never excluded, even at a moment before it (as_of adds createdTo).
      expect(db.prepare(LIFECYCLE_SQL.excludedAt).pluck().all(...sp, at - 10 * 60_000 - 1, at - 10 * 60_000 - 1)).toHaveLength(0);
    } finally {
      db.close();
    }
  });

  it('leaves memories not valid out of capped keyword candidates: hits only valid ones, the total at least a word\'s valid count', async () => {
    const storage = createSqliteStorage({ file: join(dir, 'validity-cap.db') });
    const at = new Date(Date.UTC(2027, 0, 10));
    const memories = Array.from({ length: 30 }, (_, i) => {
      const createdAt = new Date(at.getTime() - (30 - i) * 60_000);
      // Five of the ten newest have expired.
      return makeMemory(scopeA, { content: `plum pie number ${i}`, createdAt, updatedAt: createdAt, validFrom: createdAt,
        validUntil: i >= 20 && i % 2 === 0 ? new Date(at.getTime() - 1) : null });
    });
    for (const m of memories) await storage.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    const expired = new Set(memories.filter((m) => m.validUntil !== null).map((m) => m.id));
    for (const terms of [['plum'], ['plum pie'], ['plum', 'pie']]) {
      for (const candidatesPerTerm of [10, 1000]) {
        const found = await storage.memories.searchKeyword(scopeA, { terms, limit: 8, filter: { validAt: at }, candidatesPerTerm });
        const label = `${terms.join('+')} cap ${candidatesPerTerm}`;
        expect(found.hits.filter((h) => expired.has(h.memory.id)), label).toEqual([]);
        // Capped at the ten newest, five of them expired: five candidates; the total counts the word's 25 valid ones.
        expect(found.hits, label).toHaveLength(candidatesPerTerm === 10 ? 5 : 8);
        expect(found.total, label).toBe(25);
        const ranked = await storage.memories.rankKeyword(scopeA, { terms, limit: 8, filter: { validAt: at }, candidatesPerTerm });
        expect(ranked.total, label).toBe(25);
        expect(ranked.hits.map((h) => h.relevance), label).toEqual(found.hits.map((h) => h.relevance));
        // Without validAt: every one.
        expect((await storage.memories.searchKeyword(scopeA, { terms, limit: 8, filter: {}, candidatesPerTerm })).total, label).toBe(30);
      }
    }
    await storage.close();
  });

  it('writes nothing when part of an insert fails', async () => {
    const storage = createSqliteStorage({ file: join(dir, 'atomic.db') });
    const m = makeMemory(scopeA, { tags: ['t'] });
    await storage.memories.insert(m, { modelId: 'm', vector: axisVector(4, 0) });
    // A broken vector fails after the row and its tags were written inside the transaction: all must roll back.
    const broken = makeMemory(scopeA, { tags: ['u'] });
    await expect(storage.memories.insert(broken, { modelId: 'm', vector: null as unknown as Float32Array }))
      .rejects.toThrow();
    expect(await storage.memories.findById(scopeA, broken.id)).toBeNull();
    const list = await storage.memories.list(scopeA, { filter: { tagsAny: ['u'] }, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' });
    expect(list.total).toBe(0);
    await storage.close();
  });

  it('gives API keys made before names and rotation the default name, no successor, and a place in their owner\'s pages', async () => {
    const file = join(dir, 'keys-before-names.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    // Every migration before the one that adds names (found by name: versions are renumbered when branches merge).
    for (const m of MIGRATIONS.slice(0, MIGRATIONS.findIndex((x) => x.name.startsWith('api keys: names')))) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    }
    raw.prepare(`INSERT INTO api_keys (id, tenant_id, user_id, tier, mode, scopes, display_prefix, digest, created_at, expires_at, revoked_at)
      VALUES ('key_old', 't', 'u', 'pro', 'test', '["secrets:read"]', 'mnemo_test_AbCd', ?, 1000, NULL, NULL)`).run('a'.repeat(64));
    raw.close();
    const storage = createSqliteStorage({ file });
    const expected = {
      id: 'key_old', tenantId: 't', userId: 'u', name: 'API key', tier: 'pro', mode: 'test', scopes: ['secrets:read'],
      displayPrefix: 'mnemo_test_AbCd', digest: 'a'.repeat(64), createdAt: new Date(1000), expiresAt: null, revokedAt: null, replacedBy: null,
    };
    expect(await storage.apiKeys.findById('key_old')).toEqual(expected);
    expect(await storage.apiKeys.listPage({ tenantId: 't', mode: 'test' }, { limit: 10, after: null })).toEqual({ items: [expected], total: 1 });
    await storage.close();
  });

  it('keeps every vector when the table is rebuilt for vectors of several models per memory', async () => {
    const file = join(dir, 'vectors-upgrade.db');
    const raw = new Database(file);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of MIGRATIONS.slice(0, MIGRATIONS.findIndex((x) => x.name === 'vectors of several models per memory'))) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
    }
    raw.prepare(`INSERT INTO memories (id, tenant_id, mode, workspace, title, content, memory_type, tags, metadata, created_at,
      updated_at, created_by, updated_by) VALUES ('m1', ?, ?, ?, 'T', 'C', 'context', '[]', '{}', 1, 1, 'u', 'u')`).run(scopeA.tenantId, scopeA.mode, scopeA.workspace);
    raw.prepare("INSERT INTO memory_vectors (memory_seq, model_id, dims, vector) VALUES (1, 'old:4', 4, ?)").run(Buffer.from(axisVector(4, 2).buffer));
    raw.close();
    const m = { id: 'm1', title: 'T', content: 'C' };
    const after = createSqliteStorage({ file });
    expect((await after.memories.vectorsOf(scopeA, [m.id], 'old:4')).get(m.id)).toEqual(axisVector(4, 2));
    expect(await after.memories.putVectors([{ scope: scopeA, id: m.id, title: m.title, content: m.content, vector: { modelId: 'new:2', vector: axisVector(2, 1) } }])).toBe(1);
    expect((await after.memories.vectorCoverage({})).models.map((x) => x.modelId)).toEqual(['new:2', 'old:4']);
    await after.close();
  });
});
