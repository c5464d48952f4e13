/**
 * The storage contract's lifecycle section (docs/memory-lifecycle.md): validity in time, supersession, history and
 * tombstones. Called from describeStorageContract, so every adapter runs it unchanged.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/core/events/event.types.ts';
import { AtomicStepFailed, type Deletion } from '../../src/core/memories/memory.repository.ts';
import type { ListQuery, Memory, MemoryFilter } from '../../src/core/memories/memory.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';

const MODEL = 'test:axis-8';
const DIMS = 8;
const vec = (axis: number, other = -1, weight = 0) => ({ modelId: MODEL, vector: axisVector(DIMS, axis, other, weight) });
/** A moment of the test's own calendar (2027, far from the fixtures' clock): day `d`, hour `h`. */
const day = (d: number, h = 0): Date => new Date(Date.UTC(2027, 0, d, h));
const listQuery = (filter: MemoryFilter, over: Partial<ListQuery> = {}): ListQuery => ({
  filter, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'asc', ...over,
});
const sorted = (ids: readonly string[]): string[] => [...ids].sort();
const deletion = (over: Partial<Deletion> = {}): Deletion => ({ at: day(20), by: 'eve', reason: 'user request', ...over });

export function describeMemoryLifecycleContract(current: () => Storage): void {
  describe('memory lifecycle (validity, supersession, history, tombstones)', () => {
    /**
     * Five memories of scope A, all holding the word "kiwi", the tag `fruit` and a vector near axis 0:
     *
     * As of a day (`asOf`: validAt and createdTo, what the core asks for `as_of`):
     *
     * | name      | created | valid_from | valid_until | valid at day 5 | valid at day 10 |
     * |-----------|---------|------------|-------------|----------------|-----------------|
     * | open      | 1       | 1          | -           | yes            | yes             |
     * | expired   | 1       | 1          | 3           | no             | no              |
     * | future    | 1       | 9          | -           | no             | yes             |
     * | late      | 7       | 7          | -           | no (created)   | yes             |
     * | endsLater | 2       | 2          | 8           | yes            | no              |
     *
     * validAt alone (what the core asks for "now") refuses only time-bounded memories: `late`, valid from its creation,
     * is valid at day 5 too (a reader whose clock is behind the writer's still sees it).
     *
     * `late` has memory_type `project`, the others `context` (for the filtered paths). Scope B holds a bounded
     * (expired) memory with the same word, tag and vector.
     */
    async function seedValidity() {
      const repo = current().memories;
      const base = { content: 'kiwi and more', tags: ['fruit'] };
      const open = makeMemory(scopeA, { ...base, title: 'Open kiwi', tags: ['fruit', 'alpha'], createdAt: day(1), updatedAt: day(1), validFrom: day(1) });
      const expired = makeMemory(scopeA, {
        ...base, title: 'Expired kiwi', tags: ['fruit', 'alpha', 'gone'], createdAt: day(1, 1), updatedAt: day(1, 1), validFrom: day(1, 1), validUntil: day(3),
      });
      const future = makeMemory(scopeA, { ...base, title: 'Future kiwi', createdAt: day(1, 2), updatedAt: day(1, 2), validFrom: day(9) });
      const late = makeMemory(scopeA, { ...base, title: 'Late kiwi', memoryType: 'project', createdAt: day(7), updatedAt: day(7), validFrom: day(7) });
      const endsLater = makeMemory(scopeA, {
        ...base, title: 'Ends kiwi', createdAt: day(2), updatedAt: day(2), validFrom: day(2), validUntil: day(8),
      });
      const foreign = makeMemory(scopeB, { ...base, title: 'Foreign kiwi', createdAt: day(1), updatedAt: day(1), validFrom: day(1), validUntil: day(2) });
      // Slightly different vectors, so the similarity order is fixed: open, expired, future, late, endsLater.
      const all = [open, expired, future, late, endsLater];
      for (const [i, m] of all.entries()) await repo.insert(m, vec(0, 1, 0.1 * i));
      await repo.insert(foreign, vec(0));
      return { open, expired, future, late, endsLater, foreign, all };
    }

    const similar = (filter: MemoryFilter, limit = 10) => ({
      vector: axisVector(DIMS, 0), modelId: MODEL, limit, minCosine: 0.5, filter,
    });
    const keyword = (filter: MemoryFilter, limit = 10) => ({ terms: ['kiwi'], limit, filter });
    /** What the core asks for `as_of`: valid then, and recorded by then (core/memories/validity.ts). */
    const asOf = (at: Date): MemoryFilter => ({ validAt: at, createdTo: at });

    it('stores validity, supersession and version with the memory and reads them back', async () => {
      const repo = current().memories;
      const m = makeMemory(scopeA, { validFrom: day(2), validUntil: day(4), supersededBy: 'successor-id', version: 3 });
      await repo.insert(m, vec(0));
      expect(await repo.findById(scopeA, m.id)).toEqual(m);
      const fresh = makeMemory(scopeA);
      expect(await repo.insertUnlessDuplicate({ ...fresh, content: 'unique text', validUntil: day(30) }, vec(1))).toBeNull();
      expect((await repo.findById(scopeA, fresh.id))!.validUntil).toEqual(day(30));
      // Imported memories keep theirs too.
      const imported = makeMemory(scopeA, { validFrom: day(1), validUntil: day(2), supersededBy: m.id, version: 5 });
      await repo.importMemories([{ memory: imported, vectors: [vec(2)] }]);
      expect(await repo.findById(scopeA, imported.id)).toEqual(imported);
    });

    it('lists only the memories valid at validAt, with an exact total; without validAt, every one', async () => {
      const repo = current().memories;
      const s = await seedValidity();
      const listed = async (filter: MemoryFilter, over: Partial<ListQuery> = {}) => {
        const { items, total } = await repo.list(scopeA, listQuery(filter, over));
        return { ids: items.map((m) => m.id), total };
      };
      expect(await listed({ ...asOf(day(5)) })).toEqual({ ids: [s.open.id, s.endsLater.id], total: 2 });
      expect(await listed({ validAt: day(5) })).toEqual({ ids: [s.open.id, s.endsLater.id, s.late.id], total: 3 });
      expect(await listed({ validAt: day(5) }, { limit: 1, offset: 2 })).toEqual({ ids: [s.late.id], total: 3 });
      expect(await listed({ ...asOf(day(10)) })).toEqual({ ids: [s.open.id, s.future.id, s.late.id], total: 3 });
      expect(await listed({})).toEqual({ ids: [s.open.id, s.expired.id, s.future.id, s.endsLater.id, s.late.id], total: 5 });
      // Pages keep the total.
      expect(await listed({ ...asOf(day(10)) }, { limit: 1, offset: 1 })).toEqual({ ids: [s.future.id], total: 3 });
      // Bounds: valid_from is inclusive, valid_until exclusive, created_at inclusive.
      expect((await listed({ ...asOf(day(3)) })).ids).toEqual([s.open.id, s.endsLater.id]);
      expect((await listed({ ...asOf(new Date(day(3).getTime() - 1)) })).ids).toEqual([s.open.id, s.expired.id, s.endsLater.id]);
      expect((await listed({ ...asOf(day(9)) })).ids).toEqual([s.open.id, s.future.id, s.late.id]);
      expect((await listed({ ...asOf(day(7)) })).ids).toEqual([s.open.id, s.endsLater.id, s.late.id]);
      expect((await listed({ ...asOf(new Date(day(7).getTime() - 1)) })).ids).toEqual([s.open.id, s.endsLater.id]);
      // Before anything existed: nothing.
      expect(await listed({ ...asOf(day(0)) })).toEqual({ ids: [], total: 0 });
      // With another filter too.
      expect(await listed({ ...asOf(day(10)), types: ['context'] })).toEqual({ ids: [s.open.id, s.future.id], total: 2 });
      expect(await listed({ ...asOf(day(5)), tagsAny: ['alpha'] })).toEqual({ ids: [s.open.id], total: 1 });
      // Scope B's bounded memory: excluded in B, and nothing of it reaches A.
      expect((await repo.list(scopeB, listQuery({ ...asOf(day(5)) }))).total).toBe(0);
      expect((await repo.list(scopeB, listQuery({ ...asOf(day(1)) }))).total).toBe(1);
    });

    it('ranks by similarity only the memories valid at validAt, totals exact (searchSimilar and rankSimilar)', async () => {
      const repo = current().memories;
      const s = await seedValidity();
      const check = async (filter: MemoryFilter, expected: Memory[], limit = 10) => {
        const found = await repo.searchSimilar(scopeA, similar(filter, limit));
        const ids = expected.map((m) => m.id);
        expect(found.hits.map((h) => h.memory.id)).toEqual(ids.slice(0, limit));
        expect(found.total).toBe(expected.length);
        const ranked = await repo.rankSimilar(scopeA, similar(filter, limit));
        expect(ranked.total).toBe(expected.length);
        expect(ranked.hits.map((h) => h.cosine)).toEqual(found.hits.map((h) => h.cosine));
        const rows = await repo.findByRefs(scopeA, ranked.hits.map((h) => h.ref));
        expect(ranked.hits.map((h) => rows.get(h.ref)?.id)).toEqual(ids.slice(0, limit));
      };
      await check({}, [s.open, s.expired, s.future, s.late, s.endsLater]);
      await check({ ...asOf(day(5)) }, [s.open, s.endsLater]);
      await check({ validAt: day(5) }, [s.open, s.late, s.endsLater]);
      await check({ validAt: day(5) }, [s.open, s.late, s.endsLater], 2);
      await check({ ...asOf(day(10)) }, [s.open, s.future, s.late]);
      await check({ ...asOf(day(10)) }, [s.open, s.future, s.late], 1);
      await check({ ...asOf(day(0)) }, []);
      // With another filter (the SQL-filtered path).
      await check({ ...asOf(day(10)), types: ['context'] }, [s.open, s.future]);
      await check({ ...asOf(day(5)), types: ['context'] }, [s.open, s.endsLater]);
      await check({ ...asOf(day(10)), tagsAll: ['fruit'] }, [s.open, s.future, s.late], 2);
      // Scope B: its own bounded memory is excluded there, included without validAt.
      expect((await repo.searchSimilar(scopeB, similar({ ...asOf(day(5)) }))).total).toBe(0);
      expect((await repo.searchSimilar(scopeB, similar({}))).hits.map((h) => h.memory.id)).toEqual([s.foreign.id]);
    });

    it('ranks by keyword only the memories valid at validAt, totals exact (searchKeyword and rankKeyword)', async () => {
      const repo = current().memories;
      const s = await seedValidity();
      const check = async (filter: MemoryFilter, expected: Memory[], limit = 10) => {
        const found = await repo.searchKeyword(scopeA, keyword(filter, limit));
        expect(found.hits).toHaveLength(Math.min(limit, expected.length));
        for (const h of found.hits) expect(expected.map((m) => m.id)).toContain(h.memory.id);
        if (limit >= expected.length) expect(sorted(found.hits.map((h) => h.memory.id))).toEqual(sorted(expected.map((m) => m.id)));
        expect(found.total).toBe(expected.length);
        const ranked = await repo.rankKeyword(scopeA, keyword(filter, limit));
        expect(ranked.total).toBe(expected.length);
        expect(ranked.hits.map((h) => h.relevance)).toEqual(found.hits.map((h) => h.relevance));
        const rows = await repo.findByRefs(scopeA, ranked.hits.map((h) => h.ref));
        expect(ranked.hits.map((h) => rows.get(h.ref)?.id)).toEqual(found.hits.map((h) => h.memory.id));
      };
      await check({}, [s.open, s.expired, s.future, s.late, s.endsLater]);
      await check({ ...asOf(day(5)) }, [s.open, s.endsLater]);
      await check({ validAt: day(5) }, [s.open, s.late, s.endsLater]);
      await check({ ...asOf(day(10)) }, [s.open, s.future, s.late]);
      await check({ ...asOf(day(10)) }, [s.open, s.future, s.late], 1);
      await check({ ...asOf(day(0)) }, []);
      await check({ ...asOf(day(10)), types: ['context'] }, [s.open, s.future]);
      await check({ ...asOf(day(5)), tagsAny: ['fruit'] }, [s.open, s.endsLater]);
      // Two words, one of them only in an excluded memory.
      const gone = await repo.searchKeyword(scopeA, { terms: ['kiwi', 'expired'], limit: 10, filter: { ...asOf(day(5)) } });
      expect(sorted(gone.hits.map((h) => h.memory.id))).toEqual(sorted([s.open.id, s.endsLater.id]));
      expect(gone.total).toBe(2);
      expect((await repo.searchKeyword(scopeA, { terms: ['expired'], limit: 10, filter: { ...asOf(day(5)) } })).total).toBe(0);
      expect((await repo.searchKeyword(scopeA, { terms: ['expired'], limit: 10, filter: { ...asOf(day(2)) } })).total).toBe(1);
      // A phrase (a word the tokenizer splits: two words, as PostgreSQL's parser keeps a hyphenated word whole), too.
      const phrase = await repo.searchKeyword(scopeA, { terms: ['late kiwi'], limit: 10, filter: { ...asOf(day(5)) } });
      expect(phrase.total).toBe(0);
      expect((await repo.searchKeyword(scopeA, { terms: ['late kiwi'], limit: 10, filter: { ...asOf(day(10)) } })).total).toBe(1);
      // Scope B's memory is excluded in B.
      expect((await repo.searchKeyword(scopeB, { terms: ['kiwi'], limit: 10, filter: { ...asOf(day(5)) } })).total).toBe(0);
      expect((await repo.searchKeyword(scopeB, { terms: ['kiwi'], limit: 10, filter: {} })).total).toBe(1);
    });

    it('a bounded memory of another scope changes nothing here', async () => {
      const repo = current().memories;
      const mine = [makeMemory(scopeA, { content: 'plum', createdAt: day(1), updatedAt: day(1), validFrom: day(1) }),
        makeMemory(scopeA, { content: 'plum', createdAt: day(1, 1), updatedAt: day(1, 1), validFrom: day(1, 1) })];
      for (const [i, m] of mine.entries()) await repo.insert(m, vec(0, 1, 0.1 * i));
      // Same word, same vector, bounded in every way, in three other scopes.
      for (const scope of [scopeB, { ...scopeA, mode: 'test' as const }, { ...scopeA, workspace: 'other' }]) {
        await repo.insert(makeMemory(scope, { content: 'plum', createdAt: day(6), updatedAt: day(6), validFrom: day(9), validUntil: day(10) }), vec(0));
        await repo.insert(makeMemory(scope, { content: 'plum', createdAt: day(1), updatedAt: day(1), validFrom: day(1), validUntil: day(2) }), vec(0));
      }
      const filter = { validAt: day(5) };
      expect((await repo.list(scopeA, listQuery(filter))).total).toBe(2);
      const found = await repo.searchSimilar(scopeA, similar(filter));
      expect(found.hits.map((h) => h.memory.id)).toEqual(mine.map((m) => m.id));
      expect(found.total).toBe(2);
      expect((await repo.rankSimilar(scopeA, similar(filter))).total).toBe(2);
      const words = await repo.searchKeyword(scopeA, { terms: ['plum'], limit: 10, filter });
      expect(sorted(words.hits.map((h) => h.memory.id))).toEqual(sorted(mine.map((m) => m.id)));
      expect(words.total).toBe(2);
      expect((await repo.suggestTitles(scopeA, 'title', 10, day(5)))).toEqual([{ text: 'A title', frequency: 2 }]);
    });

    it('follows validity changes made by updates at once (closing, reopening)', async () => {
      const repo = current().memories;
      const m = makeMemory(scopeA, { content: 'grape', createdAt: day(1), updatedAt: day(1), validFrom: day(1) });
      await repo.insert(m, vec(3));
      const probe = async () => ({
        similar: (await repo.searchSimilar(scopeA, { vector: axisVector(DIMS, 3), modelId: MODEL, limit: 5, minCosine: 0.5, filter: { validAt: day(5) } })).total,
        keyword: (await repo.searchKeyword(scopeA, { terms: ['grape'], limit: 5, filter: { validAt: day(5) } })).total,
        listed: (await repo.list(scopeA, listQuery({ validAt: day(5) }))).total,
      });
      expect(await probe()).toEqual({ similar: 1, keyword: 1, listed: 1 });
      const closed = await repo.update(scopeA, m.id, { validUntil: day(4) }, day(6), 'bob', null);
      expect(closed!.validUntil).toEqual(day(4));
      expect(await probe()).toEqual({ similar: 0, keyword: 0, listed: 0 });
      const reopened = await repo.update(scopeA, m.id, { validUntil: null }, day(6, 1), 'bob', null);
      expect(reopened!.validUntil).toBeNull();
      expect(await probe()).toEqual({ similar: 1, keyword: 1, listed: 1 });
      const postponed = await repo.update(scopeA, m.id, { validFrom: day(6) }, day(6, 2), 'bob', null);
      expect(postponed!.validFrom).toEqual(day(6));
      expect(await probe()).toEqual({ similar: 0, keyword: 0, listed: 0 });
    });

    it('suggests tags and titles of the memories valid at validAt only', async () => {
      const repo = current().memories;
      await seedValidity();
      expect(await repo.suggestTags(scopeA, 'alp', 10)).toEqual([{ text: 'alpha', frequency: 2 }]);
      expect(await repo.suggestTags(scopeA, 'alp', 10, day(5))).toEqual([{ text: 'alpha', frequency: 1 }]);
      expect(await repo.suggestTags(scopeA, 'go', 10, day(5))).toEqual([]);
      expect(await repo.suggestTags(scopeA, 'go', 10, day(2))).toEqual([{ text: 'gone', frequency: 1 }]);
      expect(await repo.suggestTags(scopeA, 'fr', 10, day(10))).toEqual([{ text: 'fruit', frequency: 3 }]);
      // `late` is valid from its creation: validAt alone never refuses it.
      expect(await repo.suggestTags(scopeA, 'fr', 10, day(5))).toEqual([{ text: 'fruit', frequency: 3 }]);
      expect(await repo.suggestTitles(scopeA, 'kiwi', 10, day(5))).toEqual([
        { text: 'Ends kiwi', frequency: 1 }, { text: 'Late kiwi', frequency: 1 }, { text: 'Open kiwi', frequency: 1 },
      ]);
      expect((await repo.suggestTitles(scopeA, 'kiwi', 10)).map((t) => t.text)).toEqual(
        ['Ends kiwi', 'Expired kiwi', 'Future kiwi', 'Late kiwi', 'Open kiwi']);
      expect(await repo.suggestTitles(scopeA, 'future', 10, day(5))).toEqual([]);
      expect(await repo.suggestTitles(scopeA, 'future', 10, day(9))).toEqual([{ text: 'Future kiwi', frequency: 1 }]);
      // Scope B's expired memory is left out there.
      expect(await repo.suggestTags(scopeB, 'fr', 10, day(5))).toEqual([]);
      expect(await repo.suggestTags(scopeB, 'fr', 10)).toEqual([{ text: 'fruit', frequency: 1 }]);
    });

    describe('supersession', () => {
      it('supersedes in the same transaction as the successor\'s insert, with its events; the chain is readable', async () => {
        const storage = current();
        const repo = storage.memories;
        const old = makeMemory(scopeA, { title: 'old', createdAt: day(1), updatedAt: day(1), validFrom: day(1) });
        const older = makeMemory(scopeA, { title: 'older', createdAt: day(1, 1), updatedAt: day(1, 1), validFrom: day(1, 1) });
        await repo.insert(old, vec(0));
        await repo.insert(older, vec(0));
        const successor = makeMemory(scopeA, { title: 'new', createdAt: day(5), updatedAt: day(5), validFrom: day(5) });
        const superseded = (m: Memory): NewEvent[] => [{
          id: `evt_${randomUUID()}`, type: 'memory.superseded', scope: m.scope, createdAt: day(5),
          data: { id: m.id, superseded_by: m.supersededBy, valid_until: m.validUntil?.toISOString() ?? null },
        }];
        const out = await repo.applyAtomically(scopeA, [
          { kind: 'insert', memory: successor, vector: vec(1) },
          { kind: 'supersede', id: old.id, by: successor.id, validUntil: day(5), events: superseded },
          { kind: 'supersede', id: older.id, by: successor.id, validUntil: day(5), events: superseded },
        ]);
        expect(out.map((m) => m.id)).toEqual([successor.id, old.id, older.id]);
        expect(out[1]).toEqual({ ...old, supersededBy: successor.id, validUntil: day(5) });
        expect(out[2]).toMatchObject({ supersededBy: successor.id, validUntil: day(5), version: 1 });
        expect(await repo.findById(scopeA, old.id)).toEqual(out[1]);
        // Not a version: no history.
        expect(await repo.history(scopeA, old.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
        expect((await repo.findSupersededBy(scopeA, successor.id)).map((m) => m.id)).toEqual([old.id, older.id]);
        expect(await repo.findSupersededBy(scopeA, old.id)).toEqual([]);
        expect(await repo.findSupersededBy(scopeB, successor.id)).toEqual([]);
        const events = await storage.events.readAfter({ ...scopeA, afterSeq: 0, types: ['memory.superseded'], limit: 10 });
        expect(events.map((e) => e.data)).toEqual([
          { id: old.id, superseded_by: successor.id, valid_until: day(5).toISOString() },
          { id: older.id, superseded_by: successor.id, valid_until: day(5).toISOString() },
        ]);
        // The superseded ones are no longer valid after the successor's start.
        const listed = await repo.list(scopeA, listQuery({ validAt: day(6) }));
        expect(listed.items.map((m) => m.id)).toEqual([successor.id]);
        expect((await repo.searchSimilar(scopeA, { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 5, minCosine: 0.5, filter: { validAt: day(6) } })).total).toBe(0);
        expect((await repo.searchSimilar(scopeA, { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 5, minCosine: 0.5, filter: { validAt: day(4) } })).total).toBe(2);
      });

      it('writes nothing when the supersede target is missing (or in another scope)', async () => {
        const storage = current();
        const repo = storage.memories;
        const foreign = makeMemory(scopeB);
        await repo.insert(foreign, vec(0));
        const seqBefore = await storage.events.latestSeq();
        for (const missing of [randomUUID(), foreign.id]) {
          const successor = makeMemory(scopeA, { content: 'never stored' });
          const failure = await repo.applyAtomically(scopeA, [
            { kind: 'insert', memory: successor, vector: vec(2), events: (m) => [{ id: `evt_${randomUUID()}`, type: 'memory.created', scope: m.scope, createdAt: m.createdAt, data: { id: m.id } }] },
            { kind: 'supersede', id: missing, by: successor.id, validUntil: day(5) },
          ]).catch((e: unknown) => e);
          expect(failure).toBeInstanceOf(AtomicStepFailed);
          expect(failure).toMatchObject({ index: 1, error: { code: 'NOT_FOUND' } });
          expect(await repo.findById(scopeA, successor.id)).toBeNull();
          expect((await repo.searchKeyword(scopeA, { terms: ['never'], limit: 5, filter: {} })).total).toBe(0);
          expect((await repo.searchSimilar(scopeA, { vector: axisVector(DIMS, 2), modelId: MODEL, limit: 5, minCosine: 0.5, filter: {} })).total).toBe(0);
        }
        expect(await storage.events.latestSeq()).toBe(seqBefore);
        expect(await repo.findById(scopeB, foreign.id)).toMatchObject({ supersededBy: null, validUntil: null });
      });
    });

    describe('history', () => {
      it('keeps each replaced state, who wrote it and when, and bumps the version, in the update\'s transaction', async () => {
        const repo = current().memories;
        const m = makeMemory(scopeA, {
          title: 'v1 title', content: 'v1 content', tags: ['t1', 'shared'], metadata: { n: 1, nested: { a: [1] } },
          createdAt: day(1), updatedAt: day(1), createdBy: 'alice', updatedBy: 'alice', validFrom: day(1),
        });
        await repo.insert(m, vec(0));
        const v2 = await repo.update(scopeA, m.id, {
          title: 'v2 title', content: 'v2 content', tags: ['t2'], metadata: { n: 2 }, memoryType: 'project', validUntil: day(30),
        }, day(2), 'bob', vec(1));
        expect(v2).toMatchObject({ title: 'v2 title', version: 2, updatedBy: 'bob', updatedAt: day(2), validUntil: day(30), memoryType: 'project' });
        const v3 = await repo.update(scopeA, m.id, { title: 'v3 title', validFrom: day(3), validUntil: null }, day(4), 'carol', null);
        expect(v3).toMatchObject({ title: 'v3 title', content: 'v2 content', version: 3, validFrom: day(3), validUntil: null, updatedBy: 'carol' });
        expect(await repo.findById(scopeA, m.id)).toEqual(v3);

        const { versions, total } = await repo.history(scopeA, m.id, { limit: 10, offset: 0 });
        expect(total).toBe(2);
        expect(versions).toEqual([
          {
            memoryId: m.id, version: 2, title: 'v2 title', content: 'v2 content', memoryType: 'project', tags: ['t2'],
            metadata: { n: 2 }, topicId: null, validFrom: day(1), validUntil: day(30), writtenAt: day(2), writtenBy: 'bob',
            replacedAt: day(4), replacedBy: 'carol',
          },
          {
            memoryId: m.id, version: 1, title: 'v1 title', content: 'v1 content', memoryType: 'context', tags: ['t1', 'shared'],
            metadata: { n: 1, nested: { a: [1] } }, topicId: null, validFrom: day(1), validUntil: null, writtenAt: day(1),
            writtenBy: 'alice', replacedAt: day(2), replacedBy: 'bob',
          },
        ]);
        // Pages, newest first; the total counts them all.
        expect(await repo.history(scopeA, m.id, { limit: 1, offset: 0 })).toEqual({ versions: [versions[0]], total: 2 });
        expect(await repo.history(scopeA, m.id, { limit: 1, offset: 1 })).toEqual({ versions: [versions[1]], total: 2 });
        expect(await repo.history(scopeA, m.id, { limit: 5, offset: 2 })).toEqual({ versions: [], total: 2 });
        // Another scope, an unknown memory: nothing.
        expect(await repo.history(scopeB, m.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
        expect(await repo.history(scopeA, randomUUID(), { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
        // An update of another scope's memory writes no version.
        expect(await repo.update(scopeB, m.id, { title: 'x' }, day(5), 'mallory', null)).toBeNull();
        expect((await repo.history(scopeA, m.id, { limit: 10, offset: 0 })).total).toBe(2);
        // Neither reads nor supersession are versions; an atomic update is.
        await repo.recordAccess(scopeA, m.id, day(5));
        const [after] = await repo.applyAtomically(scopeA, [{ kind: 'update', id: m.id, patch: { content: 'v4 content' }, at: day(6), by: 'dave', vector: null }]);
        expect(after).toMatchObject({ version: 4, content: 'v4 content' });
        const latest = await repo.history(scopeA, m.id, { limit: 1, offset: 0 });
        expect(latest.total).toBe(3);
        expect(latest.versions[0]).toMatchObject({ version: 3, title: 'v3 title', content: 'v2 content', writtenAt: day(4), writtenBy: 'carol', replacedAt: day(6), replacedBy: 'dave', validFrom: day(3), validUntil: null });
      });

      it('rolls the version back with a failed atomic group', async () => {
        const repo = current().memories;
        const m = makeMemory(scopeA);
        await repo.insert(m, vec(0));
        await expect(repo.applyAtomically(scopeA, [
          { kind: 'update', id: m.id, patch: { title: 'changed' }, at: day(2), by: 'bob', vector: null },
          { kind: 'update', id: randomUUID(), patch: { title: 'x' }, at: day(2), by: 'bob', vector: null },
        ])).rejects.toBeInstanceOf(AtomicStepFailed);
        expect(await repo.findById(scopeA, m.id)).toEqual(m);
        expect(await repo.history(scopeA, m.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
      });
    });

    describe('tombstones', () => {
      it('a delete leaves a tombstone (no content) and drops the kept versions', async () => {
        const repo = current().memories;
        const m = makeMemory(scopeA, { content: 'secret thing' });
        await repo.insert(m, vec(0));
        await repo.update(scopeA, m.id, { content: 'secret thing 2' }, day(2), 'bob', null);
        expect((await repo.history(scopeA, m.id, { limit: 10, offset: 0 })).total).toBe(1);
        expect(await repo.tombstoneOf(scopeA, m.id)).toBeNull();

        // Another scope cannot delete it, and leaves no tombstone.
        expect(await repo.delete(scopeB, m.id, deletion())).toBe(false);
        expect(await repo.tombstoneOf(scopeB, m.id)).toBeNull();
        expect(await repo.tombstoneOf(scopeA, m.id)).toBeNull();

        expect(await repo.delete(scopeA, m.id, deletion({ at: day(21), by: 'eve', reason: 'gdpr' }))).toBe(true);
        expect(await repo.tombstoneOf(scopeA, m.id)).toEqual({ memoryId: m.id, scope: scopeA, deletedAt: day(21), deletedBy: 'eve', reason: 'gdpr' });
        expect(await repo.tombstoneOf(scopeB, m.id)).toBeNull();
        expect(await repo.history(scopeA, m.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
        expect(await repo.findById(scopeA, m.id)).toBeNull();
        expect(await repo.delete(scopeA, m.id, deletion())).toBe(false);
        // The first tombstone stays.
        expect((await repo.tombstoneOf(scopeA, m.id))!.reason).toBe('gdpr');
        expect(await repo.tombstoneOf(scopeA, randomUUID())).toBeNull();
      });

      it('an atomic delete leaves a tombstone too, and none when the group fails', async () => {
        const repo = current().memories;
        const kept = makeMemory(scopeA);
        const gone = makeMemory(scopeA);
        await repo.insert(kept, vec(0));
        await repo.insert(gone, vec(1));
        await repo.update(scopeA, kept.id, { title: 'kept 2' }, day(2), 'bob', null);
        await repo.update(scopeA, gone.id, { title: 'gone 2' }, day(2), 'bob', null);
        await expect(repo.applyAtomically(scopeA, [
          { kind: 'delete', id: kept.id, deletion: deletion({ reason: 'batch' }) },
          { kind: 'delete', id: randomUUID(), deletion: deletion({ reason: 'batch' }) },
        ])).rejects.toBeInstanceOf(AtomicStepFailed);
        expect(await repo.tombstoneOf(scopeA, kept.id)).toBeNull();
        expect((await repo.history(scopeA, kept.id, { limit: 10, offset: 0 })).total).toBe(1);

        const [deleted] = await repo.applyAtomically(scopeA, [{ kind: 'delete', id: gone.id, deletion: deletion({ reason: 'batch', by: 'frank' }) }]);
        expect(deleted).toMatchObject({ id: gone.id, title: 'gone 2', version: 2 });
        expect(await repo.tombstoneOf(scopeA, gone.id)).toEqual({ memoryId: gone.id, scope: scopeA, deletedAt: day(20), deletedBy: 'frank', reason: 'batch' });
        expect(await repo.history(scopeA, gone.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
        // The other memory's history is untouched.
        expect((await repo.history(scopeA, kept.id, { limit: 10, offset: 0 })).total).toBe(1);
      });
    });
  });
}
