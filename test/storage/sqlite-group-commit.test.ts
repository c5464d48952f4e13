import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { SqliteGroupCommit } from '../../src/adapters/storage/sqlite/sqlite-group-commit.ts';
import { createSqliteMemoryRepository } from '../../src/adapters/storage/sqlite/sqlite-memory.repository.ts';
import { SqliteOutbox } from '../../src/adapters/storage/sqlite/sqlite-outbox.ts';
import { SqliteVectorCache } from '../../src/adapters/storage/sqlite/sqlite-vector-cache.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { DomainError } from '../../src/core/errors.ts';
import type { NewEvent } from '../../src/core/events/event.types.ts';
import { axisVector, makeMemory, scopeA } from '../support/fixtures.ts';

/** Who deleted, when and why (the tombstone a delete leaves). */
const DELETION = { at: new Date(Date.UTC(2026, 0, 2)), by: 'user-1', reason: 'test' };

const dir = mkdtempSync(join(tmpdir(), 'mnemo-group-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = () => join(dir, `g-${n++}.db`);
const vec = (axis: number) => ({ modelId: 'test-model', vector: axisVector(8, axis % 8) });
const created = (id: string): NewEvent[] => [{
  id: `evt_${id}`, type: 'memory.created', scope: { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: scopeA.workspace },
  data: { id }, createdAt: new Date(),
}];

describe('SQLite group commit of single-memory writes', () => {
  it('lands every concurrent create, with its event, in fewer COMMITs than creates', async () => {
    const storage = createSqliteStorage({ file: file() });
    try {
      const ms = Array.from({ length: 40 }, (_, i) => makeMemory(scopeA, { content: `content ${i}` }));
      await Promise.all(ms.map((m, i) => storage.memories.insert(m, vec(i), (x) => created(x.id))));
      for (const m of ms) expect((await storage.memories.findById(scopeA, m.id))?.content).toBe(m.content);
      const stats = storage.memories.groupCommit;
      expect(stats.writes).toBe(40);
      expect(stats.commits).toBeGreaterThanOrEqual(1);
      expect(stats.commits).toBeLessThan(40);
      // The outbox rows committed with their memories.
      expect(await storage.events.latestSeq()).toBe(40);
      // Read-your-writes: the in-memory vector matrix warmed before the writes follows each acknowledged one.
      await storage.memories.searchSimilar(scopeA, { vector: vec(0).vector, modelId: 'test-model', limit: 1, minCosine: -1, filter: {} });
      const more = Array.from({ length: 8 }, (_, i) => makeMemory(scopeA, { content: `more ${i}` }));
      await Promise.all(more.map((m) => storage.memories.insert(m, vec(3))));
      const { total } = await storage.memories.searchSimilar(scopeA,
        { vector: vec(3).vector, modelId: 'test-model', limit: 100, minCosine: -1, filter: {} });
      expect(total).toBe(48);
    } finally {
      await storage.close();
    }
  });

  it('fails one bad create of a group alone, with its own error, and keeps the others', async () => {
    const storage = createSqliteStorage({ file: file() });
    try {
      const first = makeMemory(scopeA, { clientId: 'same-id', content: 'first' });
      await storage.memories.insert(first, vec(0));
      const others = Array.from({ length: 10 }, (_, i) => makeMemory(scopeA, { content: `other ${i}` }));
      const clash = makeMemory(scopeA, { clientId: 'same-id', content: 'clash' });
      const before = storage.memories.groupCommit.commits;
      const results = await Promise.allSettled([
        ...others.slice(0, 5).map((m, i) => storage.memories.insert(m, vec(i))),
        storage.memories.insert(clash, vec(1)),
        ...others.slice(5).map((m, i) => storage.memories.insert(m, vec(i))),
      ]);
      expect(storage.memories.groupCommit.commits - before).toBe(1);
      const rejected = results.filter((r) => r.status === 'rejected');
      expect(rejected).toHaveLength(1);
      const err = (rejected[0] as PromiseRejectedResult).reason as DomainError;
      expect(err).toBeInstanceOf(DomainError);
      expect(err.code).toBe('CONFLICT');
      expect(results[5]!.status).toBe('rejected');
      for (const m of others) expect(await storage.memories.findById(scopeA, m.id)).not.toBeNull();
      expect(await storage.memories.findById(scopeA, clash.id)).toBeNull();
      expect((await storage.memories.findByClientId(scopeA, 'same-id'))?.content).toBe('first');
    } finally {
      await storage.close();
    }
  });

  it('stores one content once when racing deduplicated creates share a group', async () => {
    const storage = createSqliteStorage({ file: file() });
    try {
      const ms = Array.from({ length: 6 }, () => makeMemory(scopeA, { content: 'the same words' }));
      const results = await Promise.all(ms.map((m) => storage.memories.insertUnlessDuplicate(m, vec(0))));
      expect(results.filter((r) => r === null)).toHaveLength(1);
      const winner = ms[results.indexOf(null)]!;
      for (const r of results) if (r) expect(r.id).toBe(winner.id);
      expect(storage.memories.groupCommit.commits).toBe(1);
    } finally {
      await storage.close();
    }
  });

  it('acknowledges nothing before the COMMIT: a COMMIT that fails rejects every write of the group', async () => {
    const db = openSqlite(file());
    const group = new SqliteGroupCommit(db);
    const memories = createSqliteMemoryRepository(db, new SqliteOutbox(db), undefined, new SqliteVectorCache(db), group);
    try {
      const ms = Array.from({ length: 5 }, (_, i) => makeMemory(scopeA, { content: `doomed ${i}` }));
      const writes = ms.map((m, i) => memories.insert(m, vec(i)));
      // A real SQLite condition that only fails at COMMIT: a deferred foreign-key violation in the same group.
      const orphan = group.run(() => {
        db.pragma('defer_foreign_keys = ON');
        db.prepare('INSERT INTO memory_tags (memory_seq, tag) VALUES (?, ?)').run(999_999, 'orphan');
      });
      const results = await Promise.allSettled([...writes, orphan]);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect(String((r as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
      }
      expect(group.stats.failedCommits).toBe(1);
      expect(group.stats.commits).toBe(0);
      for (const m of ms) expect(await memories.findById(scopeA, m.id)).toBeNull();
      expect(db.inTransaction).toBe(false);
      // The connection is usable again afterwards.
      const later = makeMemory(scopeA, { content: 'later' });
      await memories.insert(later, vec(0));
      expect(await memories.findById(scopeA, later.id)).not.toBeNull();
    } finally {
      await memories.close();
      db.close();
    }
  });

  it('resolves a failed write without touching the others when the group is larger than one transaction', async () => {
    const db = openSqlite(file());
    const group = new SqliteGroupCommit(db, 4);
    db.exec('CREATE TABLE t (v INTEGER PRIMARY KEY)');
    const runs = Array.from({ length: 10 }, (_, i) => group.run(() => db.prepare('INSERT INTO t VALUES (?)').run(i % 9)));
    const results = await Promise.allSettled(runs);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[9]!.status).toBe('rejected');
    expect((db.prepare('SELECT COUNT(*) FROM t').pluck().get() as number)).toBe(9);
    expect(group.stats.commits).toBe(3);
    db.close();
  });
  it('commits the writes still queued when the store is closed (graceful shutdown), and refuses later ones clearly', async () => {
    const f = file();
    const storage = createSqliteStorage({ file: f });
    const kept = makeMemory(scopeA, { content: 'kept' });
    const gone = makeMemory(scopeA, { content: 'to delete' });
    await storage.memories.insert(kept, vec(0));
    await storage.memories.insert(gone, vec(1));
    // Queued in this turn of the event loop, not yet committed when close() is called.
    const ms = Array.from({ length: 5 }, (_, i) => makeMemory(scopeA, { content: `queued ${i}` }));
    const writes = [
      ...ms.map((m, i) => storage.memories.insert(m, vec(i), (x) => created(x.id))),
      storage.memories.update(scopeA, kept.id, { content: 'kept, edited' }, new Date(), 'u', null),
      storage.memories.delete(scopeA, gone.id, DELETION),
    ];
    const commitsBefore = storage.memories.groupCommit.commits;
    await storage.close();
    const results = await Promise.allSettled(writes);
    expect(results.map((r) => r.status)).toEqual(Array(7).fill('fulfilled'));
    expect(storage.memories.groupCommit.commits - commitsBefore).toBe(1);
    // After close: a clear error, not SQLite's "connection is not open".
    const late = storage.memories.insert(makeMemory(scopeA), vec(0));
    await expect(late).rejects.toThrow(/store is closed/);
    // A domain error every surface answers with its 503 envelope, not an unexpected error (500).
    await expect(late).rejects.toMatchObject({ code: 'OVERLOADED' });
    await expect(storage.memories.delete(scopeA, kept.id, DELETION)).rejects.toThrow(/store is closed/);

    const reopened = createSqliteStorage({ file: f });
    try {
      for (const m of ms) expect((await reopened.memories.findById(scopeA, m.id))?.content).toBe(m.content);
      expect((await reopened.memories.findById(scopeA, kept.id))?.content).toBe('kept, edited');
      expect(await reopened.memories.findById(scopeA, gone.id)).toBeNull();
      expect(await reopened.events.latestSeq()).toBe(5);
    } finally {
      await reopened.close();
    }
  });
});
