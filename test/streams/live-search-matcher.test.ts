import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/core/events/event.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { matchLiveEvents, type LiveSubscription } from '../../src/core/streams/live-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { actorIn } from '../support/fixtures.ts';

const scope: Scope = { tenantId: 'acme', mode: 'live', workspace: 'default' };

/** The cosine scoring `similarity` on the default (uncalibrated) scale, `(1 + cosine) / 2`. */
const cosineFromSimilarity = (similarity: number) => similarity * 2 - 1;

/** A unit vector in the plane of the first two axes whose cosine with (1, 0) is `c`. */
const atCosine = (c: number) => Float32Array.from([c, Math.sqrt(1 - c * c)]);

const sub = (over: Partial<LiveSubscription> = {}): LiveSubscription => ({
  id: 'sub_a', query: 'q', vector: Float32Array.from([1, 0]), threshold: 0.7, tags: undefined, fromSeq: 0, ...over,
});

const event = (seq: number, id: string, over: Partial<StoredEvent> & { tags?: unknown } = {}): StoredEvent => ({
  seq, id: `evt_${seq}`, type: 'memory.created', scope, createdAt: new Date(0),
  data: { id, tags: over.tags ?? [] }, ...over,
});

describe('live search matching (core/streams)', () => {
  it('matches at or above the threshold on the similarity scale, not below', () => {
    const vectors = new Map([
      ['at', atCosine(cosineFromSimilarity(0.7))],
      ['above', atCosine(0.9)],
      ['below', atCosine(cosineFromSimilarity(0.69))],
    ]);
    const page = [event(1, 'at'), event(2, 'above'), event(3, 'below')];
    const matches = matchLiveEvents([sub()], page, vectors);
    expect(matches.map((m) => m.event.data.id)).toEqual(['at', 'above']);
    expect(matches[0]!.similarity).toBeCloseTo(0.7, 6);
    expect(matches[1]!.similarity).toBeCloseTo((1 + 0.9) / 2, 6);
    // Threshold 0 takes everything with a vector, even the opposite direction.
    expect(matchLiveEvents([sub({ threshold: 0 })], [event(4, 'x')], new Map([['x', Float32Array.from([-1, 0])]]))).toHaveLength(1);
  });

  it('filters by any of the subscription\'s tags, and only events after the subscription began', () => {
    const v = Float32Array.from([1, 0]);
    const vectors = new Map([['a', v], ['b', v], ['c', v]]);
    const page = [event(5, 'a', { tags: ['ops', 'x'] }), event(6, 'b', { tags: ['food'] }), event(7, 'c', { tags: 'ops' })];
    const ops = sub({ id: 'sub_ops', tags: ['infra', 'ops'] });
    expect(matchLiveEvents([ops], page, vectors).map((m) => m.event.data.id)).toEqual(['a']);
    const late = sub({ id: 'sub_late', fromSeq: 6 });
    expect(matchLiveEvents([late], page, vectors).map((m) => m.event.data.id)).toEqual(['c']);
  });

  it('reports each subscription an event matches, in event then subscription order, with the kind of change', () => {
    const v = Float32Array.from([1, 0]);
    const vectors = new Map([['a', v], ['b', v]]);
    const page = [event(1, 'a'), event(2, 'b', { type: 'memory.updated' })];
    const matches = matchLiveEvents([sub({ id: 'sub_1' }), sub({ id: 'sub_2' })], page, vectors);
    expect(matches.map((m) => `${m.event.data.id}:${m.subscriptionId}:${m.change}`))
      .toEqual(['a:sub_1:created', 'a:sub_2:created', 'b:sub_1:updated', 'b:sub_2:updated']);
  });

  it('matches nothing without a stored vector, for other event types, or without subscriptions', () => {
    const v = Float32Array.from([1, 0]);
    expect(matchLiveEvents([sub()], [event(1, 'gone')], new Map([['other', v]]))).toEqual([]);
    expect(matchLiveEvents([sub()], [event(1, 'a', { type: 'memory.deleted' })], new Map([['a', v]]))).toEqual([]);
    expect(matchLiveEvents([], [event(1, 'a')], new Map([['a', v]]))).toEqual([]);
    // Positive control: the same event and vector match as a creation.
    expect(matchLiveEvents([sub()], [event(1, 'a')], new Map([['a', v]]))).toHaveLength(1);
  });
});

describe('live search service (core/streams, over the real store)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('embeds the query at subscribe, reads stored vectors, and gives the memory with its creation time', async () => {
    const { liveSearch, memories, storage } = t.container;
    const live = await liveSearch.subscribe({ query: 'deploy pipeline rollback', threshold: 0.7, tags: undefined });
    expect(live).toMatchObject({ id: expect.stringMatching(/^sub_/), query: 'deploy pipeline rollback', fromSeq: await storage.events.latestSeq() });

    const match = await memories.create(scope, actorIn(scope, 'u'), { title: 'Deploy rollback', content: 'How to roll back a failed deploy pipeline' });
    await memories.create(scope, actorIn(scope, 'u'), { title: 'Lunch', content: 'Sandwich shop on the corner has good soup' });
    const page = await storage.events.readAfter({ ...scope, afterSeq: live.fromSeq, types: ['memory.created'], limit: 100 });
    expect(page).toHaveLength(2);

    const results = await liveSearch.results(scope, [live], page);
    expect(results).toEqual([{
      subscriptionId: live.id, change: 'created', similarity: expect.any(Number),
      memory: {
        id: match.id, title: 'Deploy rollback', content: 'How to roll back a failed deploy pipeline', tags: [], metadata: {},
        createdAt: match.createdAt.toISOString(),
      },
    }]);
    expect(results[0]!.similarity).toBeGreaterThanOrEqual(0.7);

    // An event without created_at (an older writer) has it read back from the memory; another scope sees nothing.
    const bare = page.map((e) => ({ ...e, data: { ...e.data, created_at: undefined } }));
    expect((await liveSearch.results(scope, [live], bare))[0]!.memory.createdAt).toBe(match.createdAt.toISOString());
    expect(await liveSearch.results({ ...scope, workspace: 'other' }, [live], page)).toEqual([]);
  });
});
