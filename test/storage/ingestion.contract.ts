/**
 * The storage contract's ingestion jobs (core/ingestion): scoped reads, the worker's leases (claim, renew, finish)
 * and the review's optimistic saves, with their events. Called from describeStorageContract, so every adapter runs it
 * unchanged.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewEvent, StoredEvent } from '../../src/core/events/event.types.ts';
import type { IngestionJob, IngestionUpdate, Proposal } from '../../src/core/ingestion/ingestion.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import type { Webhook } from '../../src/core/webhooks/webhook.types.ts';
import { axisVector, makeIngestion, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';

const LEASE_MS = 60_000;
/** Claim times of the test's own calendar, after every fixture's created_at. */
const t = (s: number): Date => new Date(Date.UTC(2031, 0, 1, 0, 0, s));

const proposal = (n: number, over: Partial<Proposal> = {}): Proposal => ({
  id: `p${n}`, action: 'add', content: `fact ${n}`, supersedes: [], duplicateOf: null, sources: [0], reason: 'said so',
  status: 'pending', memoryId: null, decidedBy: null, decidedAt: null, ...over,
});

/** A worker's or a review's result, with what changes in it overridden. */
const update = (over: Partial<IngestionUpdate> = {}): IngestionUpdate => ({
  state: 'pending_review', proposals: [proposal(1), proposal(2, { action: 'skip', status: 'skipped', duplicateOf: 'mem-1' })],
  usage: { model: 'test-model', modelCalls: 1, promptTokens: 120, completionTokens: 30 }, error: null, promptVersion: 'v1',
  updatedAt: t(10), finishedAt: null, ...over,
});

/** A memory as a job writes it: its client id names the job and the proposal (core/ingestion/ingestion-forget.ts). */
const writtenBy = (job: IngestionJob, proposalId: string, content: string) =>
  makeMemory(job.scope, { clientId: `ingest:${job.id}:${proposalId}`, title: content, content });
const vec = { modelId: 'test:axis-8', vector: axisVector(8, 0) };
const forget = { at: t(50), by: 'user-1', reason: 'forget' as const };

const event = (scope: Scope, type = 'memory.created', data: Record<string, unknown> = {}): NewEvent => ({
  id: `evt_${randomUUID()}`, type, scope: { ...scope }, createdAt: t(10), data: { id: randomUUID(), tags: [], ...data },
});

export function describeIngestionContract(current: () => Storage, connections: () => Promise<Storage[]>): void {
  describe('ingestion jobs', () => {
    const insert = async (...jobs: IngestionJob[]) => { for (const j of jobs) await current().ingestions.insert(j); return jobs; };
    const ids = (jobs: readonly IngestionJob[]) => jobs.map((j) => j.id);

    it('stores a job and reads it back whole, in its scope only', async () => {
      const [job] = await insert(makeIngestion(scopeA));
      const repo = current().ingestions;
      expect(await repo.find(scopeA, job!.id)).toEqual(job);
      for (const scope of [scopeB, { ...scopeA, mode: 'test' as const }, { ...scopeA, workspace: 'other' }]) {
        expect(await repo.find(scope, job!.id)).toBeNull();
        expect(await repo.list(scope, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
        expect(await repo.saveReview(scope, job!.id, 0, update(), null)).toBe(false);
      }
      expect(await repo.find(scopeA, job!.id)).toEqual(job);
    });

    it('lists a scope\'s jobs newest first, paged, filtered by state, with the total', async () => {
      const [j1, j2, j3] = await insert(makeIngestion(scopeA), makeIngestion(scopeA), makeIngestion(scopeA), makeIngestion(scopeB));
      const repo = current().ingestions;
      expect(await repo.list(scopeA, { limit: 2, offset: 0 })).toEqual({ items: [j3, j2], total: 3 });
      expect(await repo.list(scopeA, { limit: 2, offset: 2 })).toEqual({ items: [j1], total: 3 });
      const claimed = await repo.claimNext(t(0), LEASE_MS, 10);
      expect(claimed!.job.id).toBe(j1!.id);
      expect(await repo.list(scopeA, { state: 'running', limit: 10, offset: 0 })).toEqual({ items: [claimed!.job], total: 1 });
      expect(ids((await repo.list(scopeA, { state: 'queued', limit: 10, offset: 0 })).items)).toEqual(ids([j3!, j2!]));
      expect(await repo.list(scopeA, { state: 'completed', limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
    });

    it('counts a tenant\'s queued and running jobs, in both modes and every workspace', async () => {
      await insert(makeIngestion(scopeA), makeIngestion({ ...scopeA, mode: 'test' }), makeIngestion({ ...scopeA, workspace: 'w2' }),
        makeIngestion(scopeA), makeIngestion(scopeB));
      const repo = current().ingestions;
      expect(await repo.countActive(scopeA.tenantId)).toBe(4);
      const claimed = await repo.claimNext(t(0), LEASE_MS, 10);
      expect(await repo.countActive(scopeA.tenantId)).toBe(4); // running still counts
      expect(await repo.finish(claimed!.job.id, claimed!.lease, update({ state: 'completed', finishedAt: t(10) }))).toBe(true);
      expect(await repo.countActive(scopeA.tenantId)).toBe(3);
      expect(await repo.countActive(scopeB.tenantId)).toBe(1);
      expect(await repo.countActive('nobody')).toBe(0);
    });

    it('claims the oldest job first: running, leased, attempts and revision counted', async () => {
      const [older, newer] = await insert(makeIngestion(scopeA), makeIngestion(scopeB));
      const repo = current().ingestions;
      const first = await repo.claimNext(t(0), LEASE_MS, 10);
      expect(first).toEqual({
        job: { ...older, state: 'running', attempts: 1, revision: 1, updatedAt: t(0) }, lease: expect.any(String),
        leaseUntil: new Date(t(0).getTime() + LEASE_MS),
      });
      expect(await repo.find(scopeA, older!.id)).toEqual(first!.job);
      const second = await repo.claimNext(t(1), LEASE_MS, 10);
      expect(second!.job.id).toBe(newer!.id);
      expect(second!.lease).not.toBe(first!.lease);
      expect(await repo.claimNext(t(2), LEASE_MS, 10)).toBeNull();
    });

    it('never hands one job to two concurrent claimers, on any connection', async () => {
      const jobs = await insert(makeIngestion(scopeA), makeIngestion(scopeA), makeIngestion(scopeB));
      const stores = await connections();
      const claims = await Promise.all(Array.from({ length: 6 }, (_, i) => stores[i % stores.length]!.ingestions.claimNext(t(0), LEASE_MS, 10)));
      const won = claims.filter((c) => c !== null);
      expect(ids(won.map((c) => c.job)).sort()).toEqual(ids(jobs).sort());
      expect(new Set(won.map((c) => c.lease)).size).toBe(3);
      // With room for one job of the tenant, concurrent claimers take one of its jobs between them (the older one
      // unless two claimers race for it).
      const both = await insert(makeIngestion({ ...scopeA, tenantId: 'capped' }), makeIngestion({ ...scopeA, tenantId: 'capped' }));
      const capped = await Promise.all(Array.from({ length: 4 }, (_, i) => stores[i % stores.length]!.ingestions.claimNext(t(1), LEASE_MS, 1)));
      const taken = capped.filter((c) => c !== null).map((c) => c.job.id);
      expect(taken).toHaveLength(1);
      expect(ids(both)).toContain(taken[0]);
    });

    it('runs at most perTenant jobs of a tenant at once, passing over its jobs to other tenants\'', async () => {
      const [a1, a2, a3, b1] = await insert(makeIngestion(scopeA), makeIngestion({ ...scopeA, workspace: 'w2' }),
        makeIngestion({ ...scopeA, mode: 'test' }), makeIngestion(scopeB));
      const repo = current().ingestions;
      const claim = async (s: number, perTenant = 2) => (await repo.claimNext(t(s), LEASE_MS, perTenant));
      const c1 = await claim(0);
      expect(c1!.job.id).toBe(a1!.id);
      expect((await claim(0))!.job.id).toBe(a2!.id);
      expect((await claim(0))!.job.id).toBe(b1!.id); // a3 waits: its tenant runs two
      expect(await claim(0)).toBeNull();
      expect(await claim(0, 3)).toMatchObject({ job: { id: a3!.id } });
      // A slot frees when a job ends (or its lease lapses, below).
      const [a4] = await insert(makeIngestion(scopeA));
      expect(await claim(1, 3)).toBeNull();
      expect(await repo.finish(a1!.id, c1!.lease, update())).toBe(true);
      expect((await claim(1, 3))!.job.id).toBe(a4!.id);
    });

    it('takes back a job whose lease lapsed; the old lease can then neither renew nor finish it', async () => {
      const [job] = await insert(makeIngestion(scopeA));
      const repo = current().ingestions;
      const first = (await repo.claimNext(t(0), 1000, 1))!;
      expect(await repo.claimNext(new Date(t(0).getTime() + 999), 1000, 1)).toBeNull();
      // Renewed while it holds: the job stays leased past the first lease's end.
      expect(await repo.renew(job!.id, first.lease, new Date(t(0).getTime() + 2000))).toBe(true);
      expect(await repo.claimNext(new Date(t(0).getTime() + 1500), 1000, 1)).toBeNull();
      // Its worker died: the lapsed lease no longer counts against the tenant, and the job is taken again.
      const again = (await repo.claimNext(new Date(t(0).getTime() + 2000), 1000, 1))!;
      expect(again.job).toMatchObject({ id: job!.id, state: 'running', attempts: 2, revision: 2 });
      expect(again.lease).not.toBe(first.lease);
      expect(await repo.renew(job!.id, first.lease, t(30))).toBe(false);
      expect(await repo.finish(job!.id, first.lease, update({ events: [event(scopeA)] }))).toBe(false);
      expect(await repo.find(scopeA, job!.id)).toEqual(again.job);
      expect(await repo.renew(job!.id, again.lease, t(30))).toBe(true);
      expect(await repo.finish(job!.id, again.lease, update({ state: 'completed', finishedAt: t(10) }))).toBe(true);
      expect(await repo.find(scopeA, job!.id)).toMatchObject({ state: 'completed', revision: 3, attempts: 2, finishedAt: t(10) });
      // Finished: the lease is gone with it.
      expect(await repo.renew(job!.id, again.lease, t(40))).toBe(false);
      expect(await repo.claimNext(t(40), 1000, 1)).toBeNull();
    });

    it('saves a worker\'s result with its events in one transaction: appended, fanned out, heard after the commit', async () => {
      const store = current();
      const hook: Webhook = {
        id: `webhook_${randomUUID()}`, kind: 'g9', scope: { ...scopeA }, url: 'http://127.0.0.1:9/hook', events: ['memory.created'],
        description: null, status: 'active', retryPolicy: { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 300_000 }, filters: {},
        createdAt: t(0), updatedAt: t(0), lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
      };
      await store.webhooks.insert(hook, { keyId: 'k1', wrappedKey: 'd2hr', payload: 'c2VjcmV0' });
      const [job] = await insert(makeIngestion(scopeA, { policy: 'auto' }));
      const claimed = (await store.ingestions.claimNext(t(0), LEASE_MS, 5))!;
      const heard: StoredEvent[] = [];
      const stop = store.events.onAppended((events) => heard.push(...events));
      const events = [event(scopeA, 'memory.created'), event(scopeA, 'memory.created')];
      const done = update({
        state: 'completed', finishedAt: t(10),
        proposals: [proposal(1, { status: 'applied', memoryId: events[0]!.data.id as string, decidedBy: 'key_ingest', decidedAt: t(9) })],
        events,
      });
      const before = await store.events.latestSeq();
      expect(await store.ingestions.finish(job!.id, claimed.lease, done)).toBe(true);
      stop();
      const { events: _events, ...saved } = done;
      expect(await store.ingestions.find(scopeA, job!.id)).toEqual({ ...claimed.job, ...saved, revision: 2 });
      const read = await store.events.readAfter({ ...scopeA, afterSeq: before, limit: 10 });
      expect(read.map((e) => e.id)).toEqual(events.map((e) => e.id));
      expect(heard.map((e) => e.id)).toEqual(events.map((e) => e.id));
      expect(await store.webhooks.pendingCount()).toBe(2);
      // A save that no longer holds the lease appends nothing.
      expect(await store.ingestions.finish(job!.id, claimed.lease, update({ events: [event(scopeA)] }))).toBe(false);
      expect(await store.events.latestSeq()).toBe(read.at(-1)!.seq);
    });

    it('saves a review only over the revision it read, taking or clearing the lease, with its events', async () => {
      const store = current();
      const repo = store.ingestions;
      const [job] = await insert(makeIngestion(scopeA));
      const claimed = (await repo.claimNext(t(0), LEASE_MS, 5))!;
      expect(await repo.finish(job!.id, claimed.lease, update())).toBe(true);
      const waiting = (await repo.find(scopeA, job!.id))!;
      expect(waiting).toMatchObject({ state: 'pending_review', revision: 2 });

      // Decisions over a stale revision (someone saved in between) save nothing and append nothing.
      const decided = update({
        state: 'running', updatedAt: t(20),
        proposals: [proposal(1, { status: 'approved', decidedBy: 'key_reviewer', decidedAt: t(20) }), waiting.proposals[1]!],
      });
      const before = await store.events.latestSeq();
      expect(await repo.saveReview(scopeA, job!.id, 1, { ...decided, events: [event(scopeA)] }, null)).toBe(false);
      expect(await repo.find(scopeA, job!.id)).toEqual(waiting);
      expect(await store.events.latestSeq()).toBe(before);

      // Over the one it read: saved, revision up, and the lease taken, so a crash before the write hands the job on.
      const reviewLease = { token: `lease_${randomUUID()}`, until: t(80) };
      expect(await repo.saveReview(scopeA, job!.id, 2, decided, reviewLease)).toBe(true);
      const { events: _none, ...savedDecisions } = decided;
      expect(await repo.find(scopeA, job!.id)).toEqual({ ...waiting, ...savedDecisions, revision: 3 });
      expect(await repo.saveReview(scopeA, job!.id, 2, decided, reviewLease)).toBe(false);
      expect(await repo.claimNext(t(79), LEASE_MS, 5)).toBeNull();
      expect(await repo.renew(job!.id, reviewLease.token, t(90))).toBe(true);

      // The write's outcome, with its events; null clears the lease (no worker may finish it afterwards).
      const written = update({
        state: 'completed', updatedAt: t(21), finishedAt: t(21),
        proposals: [proposal(1, { status: 'applied', memoryId: 'mem-new', decidedBy: 'key_reviewer', decidedAt: t(20) }), waiting.proposals[1]!],
        events: [event(scopeA, 'memory.created'), event({ ...scopeA, workspace: 'other' }, 'memory.created')],
      });
      expect(await repo.saveReview(scopeA, job!.id, 3, written, null)).toBe(true);
      expect(await repo.find(scopeA, job!.id)).toMatchObject({ state: 'completed', revision: 4, finishedAt: t(21) });
      expect(await repo.finish(job!.id, reviewLease.token, update())).toBe(false);
      expect(await repo.renew(job!.id, reviewLease.token, t(95))).toBe(false);
      const read = await store.events.readAfter({ ...scopeA, afterSeq: before, limit: 10 });
      expect(read.map((e) => e.id)).toEqual([written.events![0]!.id]);
      const elsewhere = await store.events.readAfter({ ...scopeA, workspace: 'other', afterSeq: before, limit: 10 });
      expect(elsewhere.map((e) => e.id)).toEqual([written.events![1]!.id]);
    });

    it('hands a review\'s approved proposals to a worker when the review\'s lease lapses', async () => {
      const repo = current().ingestions;
      const [job] = await insert(makeIngestion(scopeA));
      const claimed = (await repo.claimNext(t(0), LEASE_MS, 5))!;
      expect(await repo.finish(job!.id, claimed.lease, update())).toBe(true);
      const reviewLease = { token: `lease_${randomUUID()}`, until: t(80) };
      expect(await repo.saveReview(scopeA, job!.id, 2, update({ state: 'running' }), reviewLease)).toBe(true);
      const taken = (await repo.claimNext(t(80), LEASE_MS, 5))!;
      expect(taken.job).toMatchObject({ id: job!.id, state: 'running', attempts: 2, revision: 4 });
      // The review's save over the revision it read before the worker took the job is refused.
      expect(await repo.saveReview(scopeA, job!.id, 3, update({ state: 'completed' }), null)).toBe(false);
      expect(await repo.finish(job!.id, reviewLease.token, update())).toBe(false);
    });

    it('forgetting a memory a job wrote blanks that proposal and its source messages, in its delete, and nothing else', async () => {
      const store = current();
      const repo = store.ingestions;
      const [job, other] = await insert(makeIngestion(scopeA, {
        mode: 'raw', policy: 'auto', messages: [
          { role: 'user', content: 'The vault code is 4417.', timestamp: null },
          { role: 'assistant', content: 'Noted: blue/green on Fridays.', timestamp: null },
          { role: 'user', content: 'Also: the code is 4417, remember.', timestamp: null },
        ],
      }), makeIngestion(scopeA));
      const doomed = writtenBy(job!, 'p1', 'The vault code is 4417.');
      const kept = writtenBy(job!, 'p2', 'Noted: blue/green on Fridays.');
      for (const m of [doomed, kept]) await store.memories.insert(m, vec);
      const claimed = (await repo.claimNext(t(0), LEASE_MS, 5))!;
      expect(claimed.job.id).toBe(job!.id);
      const applied = (n: number, memoryId: string, sources: number[]) =>
        proposal(n, { status: 'applied', memoryId, sources, content: job!.messages[sources[0]!]!.content, decidedBy: 'key_ingest', decidedAt: t(9) });
      const proposals = [applied(1, doomed.id, [0]), applied(2, kept.id, [1]),
        proposal(3, { action: 'skip', status: 'skipped', duplicateOf: doomed.id, sources: [2], content: 'The vault code is 4417' })];
      expect(await repo.finish(job!.id, claimed.lease, update({ state: 'completed', finishedAt: t(10), proposals }))).toBe(true);
      // Another job naming the memory only as what its proposal replaces: ids only, left as it is.
      const otherClaim = (await repo.claimNext(t(1), LEASE_MS, 5))!;
      expect(await repo.finish(other!.id, otherClaim.lease, update({
        proposals: [proposal(1, { action: 'supersede', supersedes: [doomed.id] })],
      }))).toBe(true);
      const before = (await repo.find(scopeA, job!.id))!;
      const otherBefore = (await repo.find(scopeA, other!.id))!;

      expect(await store.memories.delete(scopeA, doomed.id, forget)).toBe(true);
      const after = (await repo.find(scopeA, job!.id))!;
      expect(after).toEqual({
        ...before, revision: before.revision + 1,
        messages: [{ ...before.messages[0]!, content: '' }, before.messages[1], before.messages[2]],
        proposals: [{ ...before.proposals[0]!, content: '', forgotten: true }, before.proposals[1], before.proposals[2]],
      });
      expect(await repo.find(scopeA, other!.id)).toEqual(otherBefore);
      // A review that read the job before the forget cannot save its copy back.
      expect(await repo.saveReview(scopeA, job!.id, before.revision, update({ proposals: before.proposals }), null)).toBe(false);
      // Deleting the job's other memory blanks its proposal and turn too; the first stays forgotten.
      expect(await store.memories.delete(scopeA, kept.id, forget)).toBe(true);
      expect((await repo.find(scopeA, job!.id))!).toMatchObject({
        revision: before.revision + 2,
        messages: [{ content: '' }, { content: '' }, { content: before.messages[2]!.content }],
        proposals: [{ id: 'p1', content: '', forgotten: true }, { id: 'p2', content: '', forgotten: true, status: 'applied', memoryId: kept.id },
          { id: 'p3', content: 'The vault code is 4417', status: 'skipped' }],
      });
    });

    it('forgets a memory whose job has not recorded it yet: the proposal becomes applied and the job\'s lease goes', async () => {
      const store = current();
      const repo = store.ingestions;
      const [job] = await insert(makeIngestion(scopeA, { mode: 'raw', policy: 'auto' }));
      const claimed = (await repo.claimNext(t(0), LEASE_MS, 5))!;
      // The worker's checkpoint (approved, state running, its lease kept), then its one-transaction write.
      const approved = [proposal(1, { status: 'approved', sources: [0], content: job!.messages[0]!.content, decidedBy: 'key_ingest', decidedAt: t(5) }),
        proposal(2, { status: 'approved', sources: [1], content: job!.messages[1]!.content, decidedBy: 'key_ingest', decidedAt: t(5) })];
      expect(await repo.saveReview(scopeA, job!.id, claimed.job.revision, update({ state: 'running', proposals: approved }),
        { token: claimed.lease, until: new Date(t(0).getTime() + LEASE_MS) })).toBe(true);
      const doomed = writtenBy(job!, 'p1', job!.messages[0]!.content);
      await store.memories.insert(doomed, vec);
      await store.memories.insert(writtenBy(job!, 'p2', job!.messages[1]!.content), vec);

      expect(await store.memories.delete(scopeA, doomed.id, forget)).toBe(true);
      const after = (await repo.find(scopeA, job!.id))!;
      expect(after.messages.map((m) => m.content)).toEqual(['', job!.messages[1]!.content]);
      expect(after.proposals).toEqual([{ ...approved[0]!, status: 'applied', memoryId: doomed.id, content: '', forgotten: true }, approved[1]]);
      // The worker's copy (with the text) cannot be saved over it; the job is free to be taken again at once.
      expect(await repo.finish(job!.id, claimed.lease, update({ state: 'completed', finishedAt: t(10), proposals: approved }))).toBe(false);
      expect((await repo.claimNext(t(1), LEASE_MS, 5))!.job).toMatchObject({ id: job!.id, proposals: after.proposals });
    });

    it('a memory of another scope, or one written by no job, touches no job', async () => {
      const store = current();
      const [job] = await insert(makeIngestion(scopeA));
      const claimed = (await store.ingestions.claimNext(t(0), LEASE_MS, 5))!;
      expect(await store.ingestions.finish(job!.id, claimed.lease, update())).toBe(true);
      const before = await store.ingestions.find(scopeA, job!.id);
      // Same client id in scope B (the job is A's), and a plain memory of A.
      const elsewhere = makeMemory(scopeB, { clientId: `ingest:${job!.id}:p1` });
      const plain = makeMemory(scopeA);
      for (const m of [elsewhere, plain]) await store.memories.insert(m, vec);
      expect(await store.memories.delete(scopeB, elsewhere.id, forget)).toBe(true);
      expect(await store.memories.delete(scopeA, plain.id, forget)).toBe(true);
      expect(await store.ingestions.find(scopeA, job!.id)).toEqual(before);
    });

    it('prunes finished jobs older than the retention, of every scope; jobs waiting or under way stay', async () => {
      const repo = current().ingestions;
      const [done, failed, recent, waiting, running, queued] = await insert(makeIngestion(scopeA), makeIngestion(scopeB),
        makeIngestion({ ...scopeA, workspace: 'w2' }), makeIngestion(scopeA), makeIngestion(scopeA), makeIngestion(scopeA));
      const finishAs = async (u: IngestionUpdate) => {
        const c = (await repo.claimNext(t(0), LEASE_MS, 10))!;
        expect(await repo.finish(c.job.id, c.lease, u)).toBe(true);
      };
      await finishAs(update({ state: 'completed', finishedAt: t(10) }));
      await finishAs(update({ state: 'failed', finishedAt: t(10), error: { code: 'invalid_answer', message: 'no JSON' } }));
      await finishAs(update({ state: 'completed', finishedAt: t(30) }));
      await finishAs(update({ state: 'pending_review', finishedAt: null }));
      await repo.claimNext(t(0), LEASE_MS, 10);
      expect(await repo.pruneFinished(t(20))).toBe(2);
      expect(await repo.find(scopeA, done!.id)).toBeNull();
      expect(await repo.find(scopeB, failed!.id)).toBeNull();
      for (const [scope, j, state] of [[{ ...scopeA, workspace: 'w2' }, recent, 'completed'], [scopeA, waiting, 'pending_review'],
        [scopeA, running, 'running'], [scopeA, queued, 'queued']] as const) {
        expect(await repo.find(scope, j!.id)).toMatchObject({ state });
      }
      expect(await repo.pruneFinished(t(20))).toBe(0);
      expect(await repo.pruneFinished(t(31))).toBe(1);
    });
  });
}
