import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import type { IngestionJob, Proposal } from '../../src/core/ingestion/ingestion.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createTestApp, g1, json, type TestApp } from '../support/test-app.ts';
import { signIn } from './session.ts';

/** The Reviews pages through app.inject: ingestions waiting for a person, decided one by one or all at once, audited. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

const scopeOf = (p: Principal, workspace = 'default'): Scope => ({ tenantId: p.tenantId, mode: p.mode, workspace });

/** A fresh tenant with an asking key (bot) and a reviewing key (alice), and a raw job of `contents` waiting for review. */
async function pendingJob(contents: string[]) {
  const botKey = await t.freshTenant({ user: 'bot' });
  const aliceKey = await t.key({ user: 'alice' });
  const bot = await t.container.apiKeys.authenticate(botKey);
  const started = await t.container.ingestion.start(scopeOf(bot), bot, {
    mode: 'raw', policy: 'review',
    messages: contents.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content, timestamp: new Date(Date.UTC(2026, 0, 5, 9, i)) })),
  });
  await t.container.ingestionWorker.drain();
  const job = await t.container.ingestion.find(scopeOf(bot), started.id);
  expect(job.state).toBe('pending_review');
  return { botKey, aliceKey, bot, job };
}

const proposal = (job: IngestionJob, id: string): Proposal => job.proposals.find((p) => p.id === id)!;
const section = (body: string, id: string): string => new RegExp(`<section class="card proposal" id="proposal-${id}"[\\s\\S]*?</section>`).exec(body)![0];

describe('dashboard reviews', () => {
  it('lists the ingestions waiting for review and shows one with its source messages, escaped', async () => {
    const { aliceKey, job } = await pendingJob(['I moved to <b>Lisbon</b> in March.', 'Noted: you live in Lisbon.']);
    const c = await signIn(t.app, aliceKey);
    const list = await c.get('/dashboard/reviews');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('<a href="/dashboard/reviews" aria-current="page">Reviews</a>');
    expect(list.body).toContain(`<a href="/dashboard/reviews/${job.id}">${job.id}</a>`);
    expect(list.body).toContain('2 pending of 2');
    expect((await c.get('/dashboard/reviews?state=completed')).body).not.toContain(job.id);
    expect((await c.get('/dashboard/reviews?state=all')).body).toContain(job.id);
    expect((await c.get('/dashboard/reviews?state=nonsense')).statusCode).toBe(400);

    const detail = await c.get(`/dashboard/reviews/${job.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain(`bot · key <code>${job.requestedBy.keyId}</code>`);
    const p1 = section(detail.body, 'p1');
    expect(p1).toContain('data-action="add"');
    expect(p1).toContain('<pre class="proposed-content">I moved to &lt;b&gt;Lisbon&lt;/b&gt; in March.</pre>');
    expect(p1).toContain('<li data-position="0"><span class="muted">[0] <span class="role">user</span>');
    expect(p1).toContain('2026-01-05T09:00:00.000Z');
    expect(p1).toContain('<blockquote>I moved to &lt;b&gt;Lisbon&lt;/b&gt; in March.</blockquote>');
    expect(p1).toMatch(/<button name="decision" value="approve" class="approve">/);
    expect(section(detail.body, 'p2')).toContain('<span class="role">assistant</span>');
    expect(detail.body).toMatch(/<button name="all" value="approve" id="approve-all">Approve all pending<\/button>/);
    expect(detail.body).not.toContain('<b>Lisbon');
  });

  it('approves one proposal (written, audited via the dashboard), then rejects the rest at once', async () => {
    const { aliceKey, botKey, job } = await pendingJob(['Standup moved to 9:30.', 'Got it.', 'Retro is on Fridays now.']);
    const c = await signIn(t.app, aliceKey);
    const one = await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p1', decision: 'approve' });
    expect(one.statusCode, one.body).toBe(303);
    expect(one.headers.location).toBe(`/dashboard/reviews/${job.id}?decided=approve&proposal=p1`);
    const after = await c.get(one.headers.location as string);
    expect(after.body).toContain('You approved proposal p1.');
    const applied = await t.container.ingestion.find(job.scope, job.id);
    expect(proposal(applied, 'p1')).toMatchObject({ status: 'applied', decidedBy: (await t.container.apiKeys.authenticate(aliceKey)).keyId });
    expect(applied.state).toBe('pending_review');
    expect(section(after.body, 'p1')).toContain(`<a class="written" href="/dashboard/memories/${proposal(applied, 'p1').memoryId}">`);
    expect(section(after.body, 'p1')).not.toContain('class="decide"');

    const rest = await c.post(`/dashboard/reviews/${job.id}`, { all: 'reject' });
    expect(rest.statusCode).toBe(303);
    expect(rest.headers.location).toBe(`/dashboard/reviews/${job.id}?decided=reject`);
    const done = await t.container.ingestion.find(job.scope, job.id);
    expect(done.state).toBe('completed');
    expect(done.proposals.map((p) => p.status)).toEqual(['applied', 'rejected', 'rejected']);
    const page = (await c.get(rest.headers.location as string)).body;
    expect(page).toContain('You rejected every pending proposal.');
    expect(page).toContain('Nothing is left to decide.');
    expect(page).not.toContain('id="decide-all"');
    // Exactly the approved proposal was written.
    const memories = json(await g1(t.app, botKey).list()).data as { content: string }[];
    expect(memories.map((m) => m.content)).toEqual(['Standup moved to 9:30.']);

    // A decision on a job already completed: the core's conflict, shown on the page.
    const late = await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p2', decision: 'approve' });
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain(`id="review-refused" data-status="409">Ingestion ${job.id} is completed, not pending_review`);

    const alice = await t.container.apiKeys.authenticate(aliceKey);
    const rows = (await t.container.audit.list({ tenantId: alice.tenantId, mode: alice.mode }, { action: 'ingestion.review' }, { limit: 10, cursor: null })).items;
    const row = { via: 'dashboard', workspace: 'default' };
    expect(rows.map((r) => [r.outcome, r.status, r.resource, r.actor.keyId, r.metadata])).toEqual([
      ['failure', 409, `ingestion:${job.id}`, alice.keyId, { ...row, decisions: 1, all: null }],
      ['success', 200, `ingestion:${job.id}`, alice.keyId, { ...row, decisions: 0, all: 'reject', state: 'completed' }],
      ['success', 200, `ingestion:${job.id}`, alice.keyId, { ...row, decisions: 1, all: null, state: 'pending_review' }],
    ]);
  });

  it('shows the key that asked its proposals with the buttons disabled, and the core refuses its POST', async () => {
    const { botKey, bot, job } = await pendingJob(['My badge number is 4471.']);
    const c = await signIn(t.app, botKey);
    const detail = (await c.get(`/dashboard/reviews/${job.id}`)).body;
    expect(detail).toContain('id="read-only">The key that asked cannot review its own ingestion');
    expect(detail).toMatch(/id="approve-all" disabled>/);
    expect(section(detail, 'p1')).toMatch(/class="approve" disabled>/);
    expect((await c.get('/dashboard/reviews')).body).toContain('(this key)');

    const refused = await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p1', decision: 'approve' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('data-status="403">The key that asked for an ingestion cannot review it: a person decides with another key');
    expect((await c.post(`/dashboard/reviews/${job.id}`, { all: 'approve' })).statusCode).toBe(403);
    expect((await t.container.ingestion.find(job.scope, job.id)).proposals[0]!.status).toBe('pending');
    const rows = (await t.container.audit.list({ tenantId: bot.tenantId, mode: bot.mode }, { action: 'ingestion.review' }, { limit: 10, cursor: null })).items;
    expect(rows.map((r) => [r.outcome, r.status, r.actor.userId])).toEqual([['failure', 403, 'bot'], ['failure', 403, 'bot']]);
  });

  it('refuses a POST without the CSRF token, a read-only key, and bad form values', async () => {
    const { aliceKey, job } = await pendingJob(['The wifi password rotates monthly.']);
    const c = await signIn(t.app, aliceKey);
    for (const token of [false, 'forged'] as const) {
      const res = await c.post(`/dashboard/reviews/${job.id}`, { all: 'approve' }, token);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('security token');
    }
    expect((await c.post(`/dashboard/reviews/${job.id}`, { all: 'maybe' })).statusCode).toBe(400);
    expect((await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p1', decision: 'maybe' })).statusCode).toBe(400);
    expect((await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'x'.repeat(500), decision: 'approve' })).statusCode).toBe(400);
    const unknown = await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p9', decision: 'approve' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('no proposal p9 in this ingestion');

    const reader = await signIn(t.app, await t.key({ user: 'reader', scopes: ['memories:read'] }));
    expect((await reader.get(`/dashboard/reviews/${job.id}`)).body).toContain('lacks the memories:write scope');
    const denied = await reader.post(`/dashboard/reviews/${job.id}`, { all: 'approve' });
    expect(denied.statusCode).toBe(403);
    expect(denied.body).toContain('memories:write');
    expect((await t.container.ingestion.find(job.scope, job.id)).proposals[0]!.status).toBe('pending');
  });

  it("keeps to the key's tenant and workspace: another tenant's ingestion is not found", async () => {
    const { job } = await pendingJob(['Only for this tenant.']);
    const stranger = await signIn(t.app, await t.freshTenant({ user: 'mallory' }));
    expect((await stranger.get('/dashboard/reviews?state=all')).body).not.toContain(job.id);
    expect((await stranger.get(`/dashboard/reviews/${job.id}`)).statusCode).toBe(404);
    expect((await stranger.post(`/dashboard/reviews/${job.id}`, { all: 'approve' })).statusCode).toBe(404);
    expect((await t.container.ingestion.find(job.scope, job.id)).proposals[0]!.status).toBe('pending');
  });

  it('shows a supersession beside the memory it replaces (or says it is gone), and a skip beside its duplicate', async () => {
    const aliceKey = await t.freshTenant({ user: 'alice' });
    const botKey = await t.key({ user: 'bot' });
    const bot = await t.container.apiKeys.authenticate(botKey);
    const api = g1(t.app, botKey);
    const office = json(await api.create({ title: 'Office', content: 'The office is in Leeds.' })).data;
    const desk = json(await api.create({ title: 'Desk', content: 'Desk 12 is by the window.' })).data;
    const gone = json(await api.create({ title: 'Parking', content: 'Parking is on level 2.' })).data;
    expect((await api.delete(gone.id as string)).statusCode).toBe(200);
    // A job as the extract worker leaves it (proposals from a model), stored as such: no model runs in this test.
    const now = t.container.clock.now();
    const base = { status: 'pending' as const, memoryId: null, decidedBy: null, decidedAt: null, duplicateOf: null, supersedes: [] as string[] };
    const job: IngestionJob = {
      id: 'ing_SupersedeSideBySide01', scope: scopeOf(bot), requestedBy: { keyId: bot.keyId, userId: bot.userId }, mode: 'extract', policy: 'review',
      state: 'pending_review', metadata: {}, tags: [], error: null, promptVersion: 'ingest-test', attempts: 1, revision: 0,
      messages: [
        { role: 'user', content: 'We moved the office to York last week.', timestamp: new Date(Date.UTC(2026, 2, 2, 10)) },
        { role: 'user', content: 'Desk 12 is still by the window, and parking moved to level 3.', timestamp: null },
      ],
      proposals: [
        { ...base, id: 'p1', action: 'supersede', content: 'The office is in York.', supersedes: [office.id as string], sources: [0], reason: 'The office moved.' },
        { ...base, id: 'p2', action: 'skip', content: 'Desk 12 is by the window.', duplicateOf: desk.id as string, sources: [1], reason: null, status: 'skipped' },
        { ...base, id: 'p3', action: 'supersede', content: 'Parking is on level 3.', supersedes: [gone.id as string], sources: [1], reason: null },
      ],
      usage: { model: 'test-model', modelCalls: 3, promptTokens: 10, completionTokens: 10 }, createdAt: now, updatedAt: now, finishedAt: null,
    };
    await t.container.storage.ingestions.insert(job);

    const c = await signIn(t.app, aliceKey);
    const body = (await c.get(`/dashboard/reviews/${job.id}`)).body;
    expect(body).toContain('(model test-model, prompts ingest-test)');
    const p1 = section(body, 'p1');
    expect(p1).toMatch(new RegExp(`<div class="side-by-side"><div class="column"><p><strong>Replaces</strong></p><div class="pane" data-memory="${office.id as string}">`
      + `<p><a href="/dashboard/memories/${office.id as string}">Office</a>`));
    expect(p1).toContain('<pre>The office is in Leeds.</pre>');
    expect(p1).toContain('<pre class="proposed-content">The office is in York.</pre>');
    expect(p1).toContain('Reason given: The office moved.');
    expect(p1).toContain('We moved the office to York last week.');
    const p2 = section(body, 'p2');
    expect(p2).toContain('<strong>Already stored</strong>');
    expect(p2).toContain(`data-memory="${desk.id as string}"`);
    expect(p2).not.toContain('class="decide"');
    const p3 = section(body, 'p3');
    expect(p3).toContain(`<div class="pane gone" data-memory="${gone.id as string}">`);
    expect(p3).toContain('This memory no longer exists');

    // Approving all: the supersession cannot be written (its memory is gone), so nothing is, and the page says why.
    const refused = await c.post(`/dashboard/reviews/${job.id}`, { all: 'approve' });
    expect(refused.statusCode).toBe(404);
    expect(refused.body).toContain(`id="review-refused" data-status="404">Memory ${gone.id as string} to supersede not found`);
    expect(section(refused.body, 'p1')).toContain('class="decide"');
    expect((await t.container.ingestion.find(job.scope, job.id)).proposals.map((p) => p.status)).toEqual(['pending', 'skipped', 'pending']);
    // Rejecting the broken one and approving the other writes the supersession; the replaced memory then reads superseded.
    expect((await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p3', decision: 'reject' })).statusCode).toBe(303);
    expect((await c.post(`/dashboard/reviews/${job.id}`, { proposal: 'p1', decision: 'approve' })).statusCode).toBe(303);
    const after = await c.get(`/dashboard/reviews/${job.id}`);
    expect(after.body).toContain('status-completed');
    expect(section(after.body, 'p1')).toContain('data-validity="superseded"');
    const old = json(await api.get(office.id as string)).data;
    expect(old.valid_until ?? old.validUntil).not.toBeNull();
  });
});
