import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import { DomainError } from '../../src/core/errors.ts';
import { AtomicStepFailed, type AtomicStep, type MemoryStore } from '../../src/core/memories/memory.repository.ts';
import { createMemoryForget, FORGET_PREVIEW_IDS, MAX_FORGET_PER_CALL } from '../../src/core/memories/memory-forget.ts';
import type { ListQuery, Memory } from '../../src/core/memories/memory.types.ts';
import { actor, createServices, freshScope, principalOf, rejection, type Services } from './support.ts';

const CONTENT_FIELDS = ['title', 'content', 'tags', 'metadata', 'memory_type', 'topic_id'];

describe('forgetting by filter (core/memories/memory-forget.ts)', () => {
  let s: Services;
  let forget: ReturnType<typeof createMemoryForget>;
  beforeAll(() => {
    s = createServices();
    forget = createMemoryForget({ store: s.storage.memories, limits: s.limits, clock: s.clock });
  });
  afterAll(() => s.close());

  it('previews, then deletes exactly the memories the filter matches, whatever their validity, leaving tombstones', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const doomed = [
      await s.memories.create(scope, alice, { title: 'A', content: 'first', tags: ['old', 'x'], metadata: { project: 'apollo' } }),
      await s.memories.create(scope, alice, { title: 'B', content: 'second', tags: ['old'], metadata: { project: 'apollo' }, validUntil: new Date(Date.UTC(2026, 2, 1, 9, 30)) }),
    ];
    const kept = [
      await s.memories.create(scope, alice, { title: 'C', content: 'third', tags: ['old'], metadata: { project: 'gemini' } }),
      await s.memories.create(scope, alice, { title: 'D', content: 'fourth', tags: ['new'], metadata: { project: 'apollo' } }),
    ];
    // The second one has expired by now: a forget still finds it.
    s.clock.advance(3_600_000);
    const filter = { tagsAny: ['old'], metadata: { project: 'apollo' } };

    const preview = await forget.forget(scope, alice, filter, { dryRun: true });
    expect(preview).toEqual({ dryRun: true, count: 2, ids: doomed.map((m) => m.id), idsTruncated: false });
    expect(await s.storage.memories.findById(scope, doomed[0]!.id)).not.toBeNull();

    const bob = actor(scope, 'bob');
    const done = await forget.forget(scope, bob, filter, { dryRun: false });
    expect(done).toEqual({ dryRun: false, deleted: 2, ids: doomed.map((m) => m.id) });
    for (const m of doomed) {
      expect(await s.storage.memories.findById(scope, m.id)).toBeNull();
      expect(await s.storage.memories.tombstoneOf(scope, m.id)).toMatchObject({ memoryId: m.id, deletedBy: 'bob', reason: 'forget', deletedAt: s.clock.now() });
    }
    for (const m of kept) expect(await s.storage.memories.findById(scope, m.id)).not.toBeNull();
    // Again: nothing left to forget.
    expect(await forget.forget(scope, bob, filter, { dryRun: false })).toEqual({ dryRun: false, deleted: 0, ids: [] });
  });

  it('leaves the forgotten memories\' stored events their id only, and their memory.deleted the deletion\'s facts', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const m = await s.memories.create(scope, alice, { title: 'Secret plan', content: 'the plan', tags: ['plan'], metadata: { owner: 'x' }, memoryType: 'project' });
    await s.memories.update(scope, alice, m.id, { content: 'the new plan', tags: ['plan', 'v2'] });
    const other = await s.memories.create(scope, alice, { title: 'Other', content: 'kept as it is', tags: ['plan-b'] });
    await forget.forget(scope, alice, { types: ['project'] }, { dryRun: false });

    const events = await s.eventsOf(scope);
    const mine = events.filter((e) => e.data.id === m.id || e.data.memory_id === m.id);
    expect(mine.map((e) => e.type)).toEqual(['memory.created', 'embedding.generated', 'memory.updated', 'embedding.generated', 'memory.deleted']);
    for (const e of mine) {
      expect(e.data.forgotten).toBe(true);
      for (const field of CONTENT_FIELDS) expect(e.data, `${e.type}.${field}`).not.toHaveProperty(field);
    }
    expect(mine[0]!.data).toEqual({ object: 'memory', id: m.id, workspace: 'default', created_at: m.createdAt.toISOString(), created_by: 'alice', forgotten: true });
    expect(mine[2]!.data).toMatchObject({ updated_by: 'alice', changes: { content: true, metadata: false, tags: true } });
    expect(mine[1]!.data).toMatchObject({ object: 'embedding', memory_id: m.id, model: expect.any(String), dimensions: 256, trigger: 'memory.created' });
    expect(mine[4]!.data).toEqual({
      object: 'memory', id: m.id, workspace: 'default', deleted_at: s.clock.now().toISOString(), deleted_by: 'alice', reason: 'forget', forgotten: true,
    });
    // Another memory's events are untouched.
    expect(events.find((e) => e.type === 'memory.created' && e.data.id === other.id)!.data).toMatchObject({ content: 'kept as it is', tags: ['plan-b'] });
  });

  it('refuses an empty filter, and one matching more than a forget may take, deleting nothing', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const m = await s.memories.create(scope, alice, { title: 'A', content: 'a' });
    for (const filter of [{}, { tagsAny: [] }, { metadata: {} }, { validAt: s.clock.now() }]) {
      const err = await rejection(forget.forget(scope, alice, filter, { dryRun: false }));
      expect(err).toMatchObject({ code: 'VALIDATION_FAILED', details: { fields: [{ field: 'filter', reason: 'required' }] } });
      expect((await rejection(forget.forget(scope, alice, filter, { dryRun: true }))).code).toBe('VALIDATION_FAILED');
    }
    expect(await s.storage.memories.findById(scope, m.id)).not.toBeNull();

    // A store holding more than the cap (a stand-in: creating 10,001 memories here would only slow the suite).
    const many = fakeStore(MAX_FORGET_PER_CALL + 1);
    const big = createMemoryForget({ store: many, limits: s.limits, clock: s.clock });
    const err = await rejection(big.forget(scope, alice, { types: ['context'] }, { dryRun: false }));
    expect(err).toMatchObject({ code: 'VALIDATION_FAILED', details: { fields: [{ field: 'filter', reason: 'too_many' }] } });
    expect(err.details.fields![0]!.message).toContain(`matches ${MAX_FORGET_PER_CALL + 1} memories`);
    expect(many.applied).toEqual([]);
    // A dry run still counts them, listing the first FORGET_PREVIEW_IDS.
    const preview = await big.forget(scope, alice, { types: ['context'] }, { dryRun: true });
    expect(preview).toMatchObject({ dryRun: true, count: MAX_FORGET_PER_CALL + 1, idsTruncated: true });
    expect(preview.ids).toHaveLength(FORGET_PREVIEW_IDS);
    // At the cap, one transaction of that many delete steps.
    const full = fakeStore(MAX_FORGET_PER_CALL);
    const out = await createMemoryForget({ store: full, limits: s.limits, clock: s.clock }).forget(scope, alice, { types: ['context'] }, { dryRun: false });
    expect(out).toMatchObject({ dryRun: false, deleted: MAX_FORGET_PER_CALL });
    expect(full.applied).toHaveLength(1);
    expect(full.applied[0]).toHaveLength(MAX_FORGET_PER_CALL);
    expect(full.applied[0]![0]).toMatchObject({ kind: 'delete', deletion: { by: 'alice', reason: 'forget' } });
  });

  it('collects again when a memory it collected is deleted by another call before its transaction', async () => {
    const scope = freshScope();
    const store = fakeStore(3, 1);
    const out = await createMemoryForget({ store, limits: s.limits, clock: s.clock }).forget(scope, actor(scope, 'a'), { types: ['context'] }, { dryRun: false });
    expect(out).toMatchObject({ deleted: 3 });
    expect(store.applied).toHaveLength(2);
  });

  it('counts one memory write per forget, none per dry run', async () => {
    const scope = freshScope();
    const free: Principal = principalOf(scope, 'free', 'carol');
    await s.memories.create(scope, actor(scope, 'a'), { title: 'A', content: 'a', tags: ['q'] });
    for (let i = 0; i < 100_000; i++) {
      try { await s.limits.memoryWrite(free); } catch { break; }
    }
    expect(await forget.forget(scope, free, { tagsAny: ['q'] }, { dryRun: true })).toMatchObject({ count: 1 });
    expect((await rejection(forget.forget(scope, free, { tagsAny: ['q'] }, { dryRun: false }))).code).toBe('QUOTA_EXCEEDED');
  });
});

/** A store of `n` matching memories that records the atomic groups it is given; the first `failures` groups fail as if a step's memory were gone. */
function fakeStore(n: number, failures = 0) {
  const ids = Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const applied: AtomicStep[][] = [];
  let failed = 0;
  const store: Pick<MemoryStore, 'list' | 'applyAtomically'> & { applied: AtomicStep[][] } = {
    applied,
    async list(_scope, q: ListQuery) {
      return { items: ids.slice(q.offset, q.offset + q.limit).map((id) => ({ id }) as Memory), total: ids.length };
    },
    async applyAtomically(_scope, steps) {
      applied.push([...steps]);
      if (failed++ < failures) throw new AtomicStepFailed(0, new DomainError('NOT_FOUND', 'Memory not found', { resource: 'memory' }));
      return [];
    },
  };
  return store;
}
