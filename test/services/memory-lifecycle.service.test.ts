import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELATED_MIN_SIMILARITY } from '../../src/core/memories/memory.service.ts';
import { validityAt } from '../../src/core/memories/validity.ts';
import type { ListQuery } from '../../src/core/memories/memory.types.ts';
import { actor, createServices, freshScope, rejection, type Services } from './support.ts';

const LIST: ListQuery = { filter: {}, limit: 50, offset: 0, sortBy: 'created_at', sortOrder: 'asc' };
const MINUTE = 60_000;

/** The core's lifecycle rules (docs/memory-lifecycle.md) over a real SQLite store and a manual clock. */
describe('memory lifecycle (core)', () => {
  let s: Services;
  beforeAll(() => { s = createServices(); });
  afterAll(() => s.close());

  const ids = (items: { id: string }[]) => items.map((m) => m.id);

  it('a create that supersedes replaces the old fact atomically, and searches see only the current one', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const friday = await s.memories.create(scope, alice, { title: 'Deploy day', content: 'We deploy on Fridays' });
    s.clock.advance(MINUTE);
    const between = s.clock.now();
    s.clock.advance(MINUTE);
    const tuesday = await s.memories.create(scope, alice, { title: 'Deploy day', content: 'We now deploy on Tuesdays', supersedes: [friday.id] });

    const old = (await s.memories.find(scope, friday.id));
    expect(old).toMatchObject({ supersededBy: tuesday.id, validUntil: tuesday.validFrom });
    expect(validityAt(old, s.clock.now())).toBe('superseded');

    expect(ids((await s.memories.list(scope, LIST)).items)).toEqual([tuesday.id]);
    expect(ids((await s.memories.list(scope, LIST, { includeExpired: true })).items)).toEqual([friday.id, tuesday.id]);
    expect(ids((await s.memories.list(scope, LIST, { asOf: between })).items)).toEqual([friday.id]);

    const ctx = { scope, userId: 'alice', surface: 'test' };
    const hybrid = await s.search.hybrid(ctx, { query: 'which day do we deploy', limit: 5, filter: {}, semanticWeight: 0.5, keywordWeight: 0.5, rerank: true, threshold: 0 });
    expect(hybrid.hits.map((h) => h.memory.id)).toEqual([tuesday.id]);
    const past = await s.search.keyword(ctx, { query: 'deploy', limit: 5, filter: {}, validity: { asOf: between } });
    expect(past.hits.map((h) => h.memory.id)).toEqual([friday.id]);

    const events = (await s.eventsOf(scope)).filter((e) => e.type === 'memory.superseded');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ id: friday.id, superseded_by: tuesday.id });
  });

  it('refuses a supersession that cannot hold, and writes nothing', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const a = await s.memories.create(scope, alice, { title: 'A', content: 'first' });
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await rejection(s.memories.create(scope, alice, { title: 'B', content: 'second', supersedes: [missing] }))).code).toBe('NOT_FOUND');
    expect((await s.memories.list(scope, LIST)).total).toBe(1);
    expect((await rejection(s.memories.create(scope, alice, { title: 'B', content: 'x', supersedes: ['not-an-id'] }))).code).toBe('VALIDATION_FAILED');

    s.clock.advance(MINUTE);
    const b = await s.memories.create(scope, alice, { title: 'B', content: 'second', supersedes: [a.id] });
    s.clock.advance(MINUTE);
    const c = await s.memories.create(scope, alice, { title: 'C', content: 'third' });
    // Already replaced by b: c cannot replace it too.
    expect((await rejection(s.memories.supersede(scope, alice, a.id, c.id))).code).toBe('CONFLICT');
    // Superseding again by the same memory changes nothing.
    expect((await s.memories.supersede(scope, alice, a.id, b.id)).supersededBy).toBe(b.id);
    // A memory cannot be replaced by one valid from before it, nor form a loop.
    expect((await rejection(s.memories.supersede(scope, alice, c.id, b.id))).code).toBe('VALIDATION_FAILED');
    expect((await rejection(s.memories.supersede(scope, alice, b.id, a.id))).code).toBe('VALIDATION_FAILED');
    expect((await s.memories.find(scope, c.id)).supersededBy).toBeNull();
  });

  it('keeps every earlier version and shows the chain both ways', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const bob = actor(scope, 'bob');
    const v1 = await s.memories.create(scope, alice, { title: 'Office', content: 'The office is in Leeds', tags: ['office'] });
    s.clock.advance(MINUTE);
    await s.memories.update(scope, bob, v1.id, { content: 'The office is in York', metadata: { floor: 2 } });
    s.clock.advance(MINUTE);
    const updated = await s.memories.update(scope, alice, v1.id, { tags: ['office', 'hq'] });
    expect(updated.version).toBe(3);

    const history = await s.memories.history(scope, v1.id, { limit: 10, offset: 0 });
    expect(history.total).toBe(2);
    expect(history.versions.map((v) => [v.version, v.content, v.writtenBy, v.replacedBy])).toEqual([
      [2, 'The office is in York', 'bob', 'alice'],
      [1, 'The office is in Leeds', 'alice', 'bob'],
    ]);
    expect(history.versions[0]!.metadata).toEqual({ floor: 2 });
    expect((await s.memories.history(scope, v1.id, { limit: 1, offset: 1 })).versions.map((v) => v.version)).toEqual([1]);

    s.clock.advance(MINUTE);
    const next = await s.memories.create(scope, alice, { title: 'Office', content: 'The office moved to Hull', supersedes: [v1.id] });
    s.clock.advance(MINUTE);
    const last = await s.memories.create(scope, alice, { title: 'Office', content: 'The office is remote now', supersedes: [next.id] });
    const middle = await s.memories.history(scope, next.id, { limit: 10, offset: 0 });
    expect(middle.chain.supersedes.map((l) => l.id)).toEqual([v1.id]);
    expect(middle.chain.supersededBy.map((l) => l.id)).toEqual([last.id]);
    expect((await s.memories.history(scope, last.id, { limit: 10, offset: 0 })).chain.supersedes.map((l) => l.id)).toEqual([next.id, v1.id]);
  });

  it('a deleted memory leaves a tombstone (who, when, why) and no versions', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const m = await s.memories.create(scope, alice, { title: 'Locker', content: 'code 4412' });
    await s.memories.update(scope, alice, m.id, { content: 'code 9981' });
    await s.memories.delete(scope, alice, m.id);
    const history = await s.memories.history(scope, m.id, { limit: 10, offset: 0 });
    expect(history.memory).toBeNull();
    expect(history.versions).toEqual([]);
    expect(history.tombstone).toMatchObject({ memoryId: m.id, deletedBy: 'alice', reason: 'user_request' });
    expect(JSON.stringify(history)).not.toContain('code');
    expect(await s.storage.memories.history(scope, m.id, { limit: 10, offset: 0 })).toEqual({ versions: [], total: 0 });
    // Another scope sees no tombstone of it.
    expect((await rejection(s.memories.history(freshScope(), m.id, { limit: 10, offset: 0 }))).code).toBe('NOT_FOUND');
  });

  it('validity bounds: checked, applied by list and search, reopened by null', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const now = s.clock.now();
    expect((await rejection(s.memories.create(scope, alice, { title: 'x', content: 'y', validFrom: now, validUntil: now }))).code).toBe('VALIDATION_FAILED');
    const promo = await s.memories.create(scope, alice, { title: 'Promo', content: 'Spring promo code SPRING', validUntil: new Date(now.getTime() + MINUTE) });
    const later = await s.memories.create(scope, alice, { title: 'Summer', content: 'Summer promo code SUMMER', validFrom: new Date(now.getTime() + 10 * MINUTE) });
    expect(ids((await s.memories.list(scope, LIST)).items)).toEqual([promo.id]);
    s.clock.advance(2 * MINUTE);
    expect(ids((await s.memories.list(scope, LIST)).items)).toEqual([]);
    expect((await rejection(s.memories.update(scope, alice, promo.id, { validFrom: new Date(now.getTime() + 5 * MINUTE) }))).code).toBe('VALIDATION_FAILED');
    await s.memories.update(scope, alice, promo.id, { validUntil: null });
    expect(ids((await s.memories.list(scope, LIST)).items)).toEqual([promo.id]);
    s.clock.advance(10 * MINUTE);
    expect(ids((await s.memories.list(scope, LIST)).items).sort()).toEqual([promo.id, later.id].sort());
  });

  it('relatedTo lists near-duplicates above the calibrated threshold, never the memory itself, and supersedes nothing', async () => {
    const scope = freshScope();
    const alice = actor(scope, 'alice');
    const a = await s.memories.create(scope, alice, { title: 'Birthday', content: "Alice's birthday is on 3 May" });
    await s.memories.create(scope, alice, { title: 'Lunch', content: 'The canteen serves soup on Mondays' });
    const b = await s.memories.create(scope, alice, { title: 'Birthday', content: "Bob's birthday is on 3 May" });
    const related = await s.memories.relatedTo(scope, b);
    expect(related.map((r) => r.id)).toEqual([a.id]);
    expect(related[0]!.similarity).toBeGreaterThanOrEqual(RELATED_MIN_SIMILARITY);
    expect((await s.memories.find(scope, a.id)).supersededBy).toBeNull();
  });
});
