import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, type SseFrame } from '../streams/support.ts';
import { createTestApp, type Json, type TestApp } from '../support/test-app.ts';
import { countFromEnv, longTests } from '../support/test-depth.ts';
import { testStoreKind } from '../support/test-store.ts';
import { paddedHashVector } from '../g2/client.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import { addMemory, newModel, type ScopeModel } from './isolation-model.ts';
import { anyOp, apply, CONTENTS, PRELUDE, publish, QUERIES, TITLES, writeOp, type Op, type RunContext } from './isolation-ops.ts';
import {
  ACTORS, bindActors, call, drainDeliveries, keyOf, KEY_NAMES, LIVE_SEARCH_ACTORS, openListeners, startWorld,
  type BoundActor, type Listeners,
} from './isolation-world.ts';

/**
 * Issue 8, point 12: two tenants (whose names collide as prefixes), a test-mode key, and the same workspace names
 * in both; every actor stores the same titles, contents, tags and client ids, and UUIDs that share prefixes.
 * fast-check generates operations across every memory surface; the test keeps the expected state of each scope
 * and checks that no read, list, count, search, suggestion, stream frame or webhook delivery of one scope ever
 * reflects another — and that each scope's own frames and deliveries do arrive (positive controls).
 */

const SEED = 20_260_812;
/**
 * `npm test`: 4 runs of each property on SQLite; the PostgreSQL run (the `postgres` project) takes the first 2 of the
 * same seed (5 and 3 until 2026-11-28, for the suite's time budget). `npm run test:long` (MNEMO_TEST_LONG=1) runs 10
 * and 5, MNEMO_TEST_PROPERTY_RUNS any count.
 */
const RUNS = countFromEnv('MNEMO_TEST_PROPERTY_RUNS', longTests() ? (testStoreKind() === 'postgres' ? 5 : 10) : (testStoreKind() === 'postgres' ? 2 : 4));

const norm = (q: string) => q.trim().replace(/\s+/g, ' ').toLowerCase();
const sorted = (xs: Iterable<string>) => [...xs].sort();

/** Checks one event (a stream frame's or a webhook delivery's) against the scope it was delivered to. */
function checkEvent(type: string, data: Json, me: BoundActor, s: ScopeModel, where: string): void {
  const at = `${where}: ${type} ${JSON.stringify(data)}`;
  switch (type) {
    case 'memory.created':
    case 'memory.updated':
    case 'memory.deleted':
      expect(s.ever.has(data.id as string), at).toBe(true);
      expect(data.workspace, at).toBe(me.workspace);
      return;
    case 'embedding.generated':
      expect(s.ever.has(data.memory_id as string), at).toBe(true);
      expect(data.workspace, at).toBe(me.workspace);
      return;
    case 'search.performed':
      expect(data.workspace, at).toBe(me.workspace);
      if (data.query !== '') expect(s.queries.has(norm(data.query as string)), at).toBe(true);
      return;
    case 'user.activity':
      expect(data.key_id, at).toBe(me.keyId);
      expect(data.workspace, at).toBe(me.workspace);
      return;
    case 'heartbeat':
    case 'system.health':
    case 'analytics.update':
      return; // system-wide, or about the tenant + mode as a whole (never in the few seconds of a run)
    default:
      throw new Error(`${at}: unexpected event type`);
  }
}

/**
 * The end of a run: a canary per scope, with the same client id everywhere, created, updated twice and deleted in
 * rounds. Each stream delivers in log order, so once a scope's last canary frame has arrived, every earlier event
 * of every scope (including leaked ones) would have too.
 */
async function finish(ctx: RunContext, listeners: Listeners): Promise<void> {
  const { app } = ctx.t;
  const canary: string[] = [];
  for (const me of ctx.actors) {
    const res = await call(app, 'POST', '/api/v1/memory', me.bearerHeaders, { id: 'canary', text: 'canary note about the team' });
    expect(res.status, res.raw).toBe(201);
    const row = await ctx.t.container.storage.memories.findByClientId({ tenantId: me.tenant, mode: me.mode, workspace: me.workspace }, 'canary');
    canary.push(row!.id);
    const s = ctx.model.scopes[me.index]!;
    s.ever.set(row!.id, { id: row!.id, clientId: 'canary', title: 'canary', content: '', tags: [], topicId: null });
    s.created.add(row!.id);
  }
  for (const text of ['canary note one', 'canary note two']) {
    for (const me of ctx.actors) expect((await call(app, 'PUT', '/api/v1/memory/canary', me.bearerHeaders, { text })).status).toBe(200);
  }
  for (const me of ctx.actors) expect((await call(app, 'DELETE', '/api/v1/memory/canary', me.bearerHeaders)).status).toBe(200);
  for (const key of KEY_NAMES) await publish(ctx, ACTORS.findIndex((a) => keyOf(a) === key));

  await Promise.all(listeners.streams.map((st, i) => st.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === canary[i], 15_000)));
  await Promise.all([...listeners.sockets].map(([i, ws]) => ws.waitFor((m) => m.type === 'new_result' && m.memory.id === canary[i] && m.memory.content_preview === 'canary note two', 15_000)));
  await drainDeliveries(ctx.t);
}

function checkListeners(ctx: RunContext, listeners: Listeners, receiver: Receiver): void {
  ctx.actors.forEach((me, i) => {
    const s = ctx.model.scopes[i]!;
    // G8: every frame about this scope only; every memory it created announced.
    const frames = listeners.streams[i]!.events() as (SseFrame & { event: string })[];
    for (const f of frames) checkEvent(f.event, f.data ?? {}, me, s, `G8 stream of ${me.name}`);
    expect(sorted(frames.filter((f) => f.event === 'memory.created').map((f) => f.data!.id as string)), `G8 ${me.name}`).toEqual(sorted(s.created));

    // G9: the same, through the webhook registered in this scope.
    const deliveries = receiver.received.filter((r) => r.url === listeners.g9Path(i)).map((r) => JSON.parse(r.body) as Json);
    for (const d of deliveries) {
      expect(d.webhook_id).toBe(listeners.g9Hooks[i]);
      expect(d.livemode).toBe(me.mode === 'live');
      checkEvent(d.type as string, d.data as Json, me, s, `G9 webhook of ${me.name}`);
    }
    expect(sorted(deliveries.filter((d) => d.type === 'memory.created').map((d) => d.data.id as string)), `G9 ${me.name}`).toEqual(sorted(s.created));
  });

  // G4 live search: a subscription every memory matches sees exactly its own scope's creates.
  for (const i of LIVE_SEARCH_ACTORS) {
    const s = ctx.model.scopes[i]!;
    const pushes = listeners.sockets.get(i)!.messages.filter((m) => m.type === 'new_result');
    for (const m of pushes) expect(s.ever.has(m.memory.id as string), `live search of ${ACTORS[i]!.name}: ${JSON.stringify(m)}`).toBe(true);
    expect(sorted(pushes.filter((m) => m.change === 'created').map((m) => m.memory.id as string))).toEqual(sorted(s.created));
  }

  // G10: each tenant + mode's webhook receives exactly the events published under that key.
  for (const key of KEY_NAMES) {
    const got = receiver.received.filter((r) => r.url === listeners.g10Path(key)).map((r) => (JSON.parse(r.body) as Json).data.marker as string);
    expect(sorted(new Set(got)), `G10 webhook of ${key}`).toEqual(sorted(ctx.model.published.get(key)!));
  }
}

/** Resume pairs: a stream of the first actor given a Last-Event-ID of the second (another mode, or another tenant). */
const FOREIGN_RESUMES: [number, number][] = [[2, 0], [4, 1], [1, 4]];

/**
 * G8 resume: a Last-Event-ID of another tenant or mode is "not found" (the stream starts live and replays
 * nothing), while the actor's own id replays its own events, and only those (positive control).
 */
async function checkResume(ctx: RunContext, listeners: Listeners, url: string): Promise<void> {
  const firstEventId = (i: number) => listeners.streams[i]!.events('memory.created')[0]!.id!;
  for (const [i, j] of FOREIGN_RESUMES) {
    const me = ctx.actors[i]!;
    const own = await openStream(`${url}/api/v1/stream`, { ...me.bearerHeaders, 'last-event-id': firstEventId(i) });
    try {
      await own.waitFor((f) => f.event === 'memory.deleted' && f.data?.id === listeners.streams[i]!.events('memory.deleted').at(-1)!.data!.id, 15_000);
      for (const f of own.events()) checkEvent(f.event!, f.data ?? {}, me, ctx.model.scopes[i]!, `G8 resume of ${me.name}`);
    } finally {
      own.close();
    }
    const foreign = await openStream(`${url}/api/v1/stream`, { ...me.bearerHeaders, 'last-event-id': firstEventId(j) });
    try {
      const first = await foreign.waitFor((f) => f.comment !== undefined || f.event !== undefined);
      expect(first.comment, `${me.name} resuming from an event of ${ACTORS[j]!.name}`).toBe('last-event-id not found; resuming from now');
    } finally {
      foreign.close();
    }
  }
}

describe('isolation property: tenants, modes and workspaces never see each other', () => {
  let receiver: Receiver;
  beforeAll(async () => { receiver = await startReceiver(); });
  afterAll(async () => { await receiver.close(); });

  it('every answer, stream frame and webhook delivery reflects only the caller scope', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(anyOp, { minLength: 20, maxLength: 40 }), async (ops: Op[]) => {
        const t = await startWorld();
        let listeners: Listeners | undefined;
        try {
          const actors = await bindActors(t);
          listeners = await openListeners(t, actors, receiver, run++);
          const ctx: RunContext = { t, baseUrl: t.url, actors, model: newModel(), listeners, batches: new Map(), published: 0 };
          for (const op of [...PRELUDE, ...ops]) await apply(ctx, op);
          await finish(ctx, listeners);
          checkListeners(ctx, listeners, receiver);
          await checkResume(ctx, listeners, t.url);
        } finally {
          listeners?.close();
          await t.close();
        }
      }),
      // A fresh server per run. A fixed number of runs and no time limit, so a loaded machine makes the test slower,
      // never red; no shrinking either (a run takes seconds, so a shrink could outlast the test's timeout): the first
      // failing case is reported as it is, with the seed and path that replay it.
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // A guard against a hang, not a time limit: a run takes a few seconds on a quiet machine, ten times that on a loaded one.
  }, RUNS * 120_000);

  /**
   * A's scores for fixed queries must not move whatever the other scopes write: one app for every run, A's corpus
   * written once, the other four actors' writes (same vocabulary) accumulating run after run.
   */
  async function expectScoresIndependent(measure: (t: TestApp, a: BoundActor, query: string) => Promise<Record<string, number>[]>) {
    const t = await createTestApp();
    try {
      const actors = await bindActors(t);
      const a = actors[0]!;
      const ctx: RunContext = { t, actors, model: newModel(), batches: new Map(), published: 0 };
      // A's own corpus: query words spread unevenly over it, so corpus statistics (IDF, average length) would show.
      // It is in the model, so the other scopes' updates and deletes also aim at it (and must miss).
      for (let i = 0; i < CONTENTS.length; i++) {
        const res = await call(t.app, 'POST', '/api/v1/memories', a.apiKeyHeaders, { title: TITLES[i]!, content: CONTENTS[i]!, tags: ['team'] });
        expect(res.status).toBe(201);
        addMemory(ctx.model.scopes[0]!, { id: res.body.data.id as string, clientId: null, title: TITLES[i]!, content: CONTENTS[i]!, tags: ['team'], topicId: null }, true);
      }
      const scores = async () => {
        const out: Record<string, Record<string, number>[]> = {};
        for (const query of QUERIES) out[query] = await measure(t, a, query);
        return out;
      };
      const baseline = await scores();
      for (const perSurface of Object.values(baseline)) for (const hits of perSurface) expect(Object.keys(hits).length).toBeGreaterThan(0);
      const others = fc.integer({ min: 1, max: ACTORS.length - 1 });
      await fc.assert(
        fc.asyncProperty(fc.array(writeOp(others), { minLength: 1, maxLength: 12 }), async (ops: Op[]) => {
          for (const op of ops) await apply(ctx, op);
          expect(await scores()).toEqual(baseline);
        }),
        // The state accumulates across runs, so a shrunk case would not replay: report the first failure as is.
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    } finally {
      await t.close();
    }
  }

  const byId = (hits: Json[], score: string) => Object.fromEntries(hits.map((h) => [h.id as string, h[score] as number]));

  it("A's semantic scores (G1, G3, G4 search and vector search) are the same whatever the other scopes do", async () => {
    await expectScoresIndependent(async (t, a, query) => {
      const g1 = await call(t.app, 'POST', '/api/v1/memories/search', a.apiKeyHeaders, { query, threshold: 0 });
      const g3 = await call(t.app, 'POST', '/api/v1/search', a.bearerHeaders, { query, threshold: 0 });
      const g4 = await call(t.app, 'GET', `/v1/search?q=${encodeURIComponent(query)}&similarity_threshold=0`, a.bearerHeaders);
      const vector = await call(t.app, 'POST', '/v1/search/vector', a.bearerHeaders, { vector: paddedHashVector(query), similarity_threshold: 0 });
      return [
        byId(g1.body.data.results, 'similarity_score'), byId(g3.body.matches, 'score'),
        byId(g4.body.data.results, 'similarity_score'), byId(vector.body.data.results, 'similarity_score'),
      ];
    });
  }, 60_000);

  // Fails while BM25 statistics are computed over every tenant's rows (issue 8, point 3, fixed on another branch).
  it("A's keyword and hybrid scores (G3 hybrid) are the same whatever the other scopes do", async () => {
    await expectScoresIndependent(async (t, a, query) => {
      const out: Record<string, number>[] = [];
      for (const weights of [{}, { semanticWeight: 0, keywordWeight: 1 }]) {
        for (const rerank of [false, true]) {
          const res = await call(t.app, 'POST', '/api/v1/search/hybrid', a.bearerHeaders, { query, threshold: 0, rerank, ...weights });
          out.push(byId(res.body.matches, 'score'));
        }
      }
      return out;
    });
  }, 60_000);
});
