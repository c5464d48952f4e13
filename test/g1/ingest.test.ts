import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PERMISSIONS, type Permission } from '../../src/core/api-keys/api-key.types.ts';
import { PROMPT_VERSION } from '../../src/core/ingestion/prompts.ts';
import type { MockLlmRequest, MockReply } from '../support/mock-llm-server.ts';
import {
  candidateIds, createIngestTestApp, ingestApi, isDecision, isExtraction, runIngestions, TEST_LLM_MODEL, type IngestTestApp,
} from '../support/ingestion.ts';
import { g1, json, type Json } from '../support/test-app.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';

/**
 * Ingestion over G1 (docs/ingestion.md), end to end through the worker: raw mode, extract with a scripted model
 * (add, supersede, skip), the review by a person (never the requesting key, always audited), auto with its
 * permission, and the events memory.proposed / memory.review.decided on the G8 log and to a G9 webhook.
 */
const AUTO: Permission[] = [...DEFAULT_PERMISSIONS, 'memories:auto_ingest'];

describe('G1 ingestion', () => {
  let t: IngestTestApp;
  let receiver: Receiver;

  /** A model that extracts `facts` (every one from message 0) and answers each decision with `decide`. */
  const model = (facts: string[], decide: (req: MockLlmRequest) => MockReply = () => ({ json: { action: 'add', supersedes: [], duplicate_of: null, reason: 'new' } })) =>
    (req: MockLlmRequest): MockReply | Promise<MockReply> => (isExtraction(req)
      ? { json: { facts: facts.map((content) => ({ content, sources: [0] })) } }
      : decide(req));

  /** A tenant with a requesting key, a reviewer's key and their G1 clients. */
  async function tenant(scopes?: Permission[]) {
    const key = await t.freshTenant(scopes ? { scopes } : {});
    const reviewerKey = await t.key({ user: 'reviewer' });
    const keyId = (await t.container.apiKeys.authenticate(key)).keyId;
    const reviewerKeyId = (await t.container.apiKeys.authenticate(reviewerKey)).keyId;
    return { key, keyId, reviewerKeyId, api: ingestApi(t.app, key), reviewer: ingestApi(t.app, reviewerKey), memories: g1(t.app, key) };
  }

  /** Starts an ingestion (202), runs the worker, and answers the job as GET shows it. */
  async function ingest(api: ReturnType<typeof ingestApi>, body: object): Promise<Json> {
    const res = await api.start(body);
    expect(res.statusCode, res.body).toBe(202);
    const queued = json(res).data;
    expect(queued).toMatchObject({ object: 'ingestion', state: 'queued', proposals: [], error: null, finished_at: null });
    await runIngestions(t);
    return json(await api.get(queued.id)).data;
  }

  const eventsOf = async (types: string[]) => (await t.container.storage.events.readAfter({
    tenantId: t.tenant, mode: 'live', workspace: null, afterSeq: 0, types, limit: 100,
  }));

  beforeAll(async () => {
    t = await createIngestTestApp({ env: { MNEMO_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', MNEMO_WEBHOOK_TIMEOUT_MS: '2000' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('raw: each non-empty user or assistant turn becomes a memory with role, position and session; other turns are skipped', async () => {
    const { api, memories, keyId } = await tenant(AUTO);
    const at = '2026-03-01T09:00:00.000Z';
    const job = await ingest(api, {
      mode: 'raw', metadata: { session: 's-42', source: 'chat' }, tags: ['chat'],
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: '  I drink green tea every morning  ', timestamp: at },
        { role: 'assistant', content: 'Noted: green tea in the morning.' },
        { role: 'tool', content: '{"weather":"sunny"}' },
        { role: 'user', content: '   ' },
        { role: 'user', content: 'My sister Ana lives in Lisbon' },
      ],
    });
    expect(job).toMatchObject({
      state: 'completed', mode: 'raw', policy: 'auto', workspace: 'default', messages_count: 6, error: null, prompt_version: null,
      usage: { model: null, model_calls: 0, prompt_tokens: 0, completion_tokens: 0 }, requested_by: { key_id: keyId, user_id: 'user-1' },
    });
    expect(job.finished_at).toEqual(expect.any(String));
    expect(job.messages).toBeUndefined();
    expect(job.proposals.map((p: Json) => [p.id, p.action, p.content, p.sources, p.status, p.decided_by]))
      .toEqual([
        ['p1', 'add', 'I drink green tea every morning', [1], 'applied', keyId],
        ['p2', 'add', 'Noted: green tea in the morning.', [2], 'applied', keyId],
        ['p3', 'add', 'My sister Ana lives in Lisbon', [5], 'applied', keyId],
      ]);
    const written = await Promise.all(job.proposals.map(async (p: Json) => json(await memories.get(p.memory_id)).data));
    expect(written[0]).toMatchObject({
      content: 'I drink green tea every morning', tags: ['chat'],
      metadata: { role: 'user', position: 1, session: 's-42', source: 'chat', timestamp: at, ingestion: { id: job.id, proposal: 'p1', mode: 'raw' } },
    });
    expect(written[1].metadata).toMatchObject({ role: 'assistant', position: 2, session: 's-42' });
    expect(written[2].metadata).toMatchObject({ role: 'user', position: 5 });
    expect(json(await memories.list()).pagination.total).toBe(3);

    // Without a session in metadata, the job's id is the session; the conversation is there on request.
    const second = await ingest(api, { mode: 'raw', messages: [{ role: 'user', content: 'I walk to work' }] });
    const memory = json(await memories.get(second.proposals[0].memory_id)).data;
    expect(memory.metadata).toMatchObject({ session: second.id, role: 'user', position: 0 });
    const withMessages = json(await api.get(job.id, '?include=messages')).data;
    expect(withMessages.messages[1]).toEqual({ role: 'user', content: '  I drink green tea every morning  ', timestamp: at });

    // The list: newest first, one state only, paged.
    const list = json(await api.list());
    expect(list.data.map((j: Json) => j.id)).toEqual([second.id, job.id]);
    expect(list.pagination).toEqual({ total: 2, page: 1, limit: 20, hasMore: false });
    expect(json(await api.list('?state=completed&limit=1')).pagination).toEqual({ total: 2, page: 1, limit: 1, hasMore: true });
    expect(json(await api.list('?state=pending_review')).data).toEqual([]);
    expect(json(await api.list('?limit=1&offset=1')).data.map((j: Json) => j.id)).toEqual([job.id]);
  });

  it('extract with review: proposals wait; the requesting key cannot decide; another key\'s decisions are applied and audited', async () => {
    const { api, reviewer, memories, keyId, reviewerKeyId } = await tenant();
    t.llm.setScript(model(['Ana is the sister of the user', 'The user prefers green tea to coffee']));
    t.llm.requests.length = 0;
    const job = await ingest(api, { messages: [{ role: 'user', content: 'My sister Ana says I like green tea more than coffee' }] });
    expect(job).toMatchObject({
      state: 'pending_review', mode: 'extract', policy: 'review', prompt_version: PROMPT_VERSION, finished_at: null,
      usage: { model: TEST_LLM_MODEL, model_calls: 1 },
    });
    expect(job.usage.prompt_tokens).toBeGreaterThan(0);
    expect(job.proposals).toEqual([
      { id: 'p1', action: 'add', content: 'Ana is the sister of the user', supersedes: [], duplicate_of: null, sources: [0], reason: null, status: 'pending', memory_id: null, decided_by: null, decided_at: null },
      { id: 'p2', action: 'add', content: 'The user prefers green tea to coffee', supersedes: [], duplicate_of: null, sources: [0], reason: null, status: 'pending', memory_id: null, decided_by: null, decided_at: null },
    ]);
    // No memory existed, so no fact needed a decision: one call in all.
    expect(t.llm.requests.map(isExtraction)).toEqual([true]);
    expect(json(await memories.list()).pagination.total).toBe(0);

    const own = await api.review(job.id, { all: 'approve' });
    expect(own.statusCode, own.body).toBe(403);
    expect(json(own).error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(json(own).error.message).toMatch(/cannot review/);

    const res = await reviewer.review(job.id, { decisions: [{ proposal: 'p1', decision: 'approve' }, { proposal: 'p2', decision: 'reject' }] });
    expect(res.statusCode, res.body).toBe(200);
    const done = json(res).data;
    expect(done).toMatchObject({ state: 'completed', proposals: [{ status: 'applied', decided_by: reviewerKeyId }, { status: 'rejected', decided_by: reviewerKeyId, memory_id: null }] });
    expect(done.finished_at).toEqual(expect.any(String));
    expect(json(await api.get(job.id)).data).toEqual(done);
    const memory = json(await memories.get(done.proposals[0].memory_id)).data;
    expect(memory).toMatchObject({
      content: 'Ana is the sister of the user',
      metadata: { ingestion: { id: job.id, proposal: 'p1', mode: 'extract', model: TEST_LLM_MODEL, prompt_version: PROMPT_VERSION } },
    });
    expect(json(await memories.list()).pagination.total).toBe(1);

    // Every decision is in the audit log: the refusal of the requesting key too.
    const rows = (await t.container.audit.list({ tenantId: t.tenant, mode: 'live' }, { action: 'ingestion.review' }, { limit: 10, cursor: null })).items;
    expect(rows.map((r) => [r.actor.keyId, r.resource, r.outcome, r.status]).sort()).toEqual([
      [keyId, `ingestion:${job.id}`, 'failure', 403],
      [reviewerKeyId, `ingestion:${job.id}`, 'success', 200],
    ].sort());
    expect(rows.find((r) => r.outcome === 'success')!.metadata).toMatchObject({ via: 'api', decisions: 2, state: 'completed', workspace: 'default' });

    // A completed job has nothing left to decide.
    const again = await reviewer.review(job.id, { all: 'approve' });
    expect(again.statusCode, again.body).toBe(409);
    expect(json(again).error.code).toBe('CONFLICT');
  });

  it('extract: a fact that changes a memory is shown that memory\'s id; approving the supersede replaces it atomically', async () => {
    const { api, reviewer, memories } = await tenant();
    const old = json(await memories.create({ title: 'Alice', content: 'Alice lives in Paris' })).data;
    let shown: string[] = [];
    t.llm.setScript(model(['Alice lives in Berlin'], (req) => {
      shown = candidateIds(req);
      return { json: { action: 'supersede', supersedes: [old.id], duplicate_of: null, reason: 'Alice moved' } };
    }));
    t.llm.requests.length = 0;
    const job = await ingest(api, { messages: [{ role: 'user', content: 'Alice moved from Paris to Berlin' }] });
    expect(shown).toEqual([old.id]);
    expect(t.llm.requests.map(isDecision)).toEqual([false, true]);
    expect(job).toMatchObject({ state: 'pending_review', usage: { model_calls: 2 } });
    expect(job.proposals).toMatchObject([{ id: 'p1', action: 'supersede', content: 'Alice lives in Berlin', supersedes: [old.id], reason: 'Alice moved', status: 'pending' }]);
    // Nothing changes before the review.
    expect(json(await memories.get(old.id)).data).toMatchObject({ superseded_by: null, valid_until: null });

    const done = json(await reviewer.review(job.id, { all: 'approve' })).data;
    expect(done).toMatchObject({ state: 'completed', proposals: [{ status: 'applied' }] });
    const replacement = json(await memories.get(done.proposals[0].memory_id)).data;
    expect(json(await memories.get(old.id)).data).toMatchObject({ superseded_by: replacement.id, valid_until: replacement.valid_from });
    const holding = json(await memories.list()).data.map((m: Json) => m.id);
    expect(holding).toEqual([replacement.id]);
  });

  it('extract: a fact the store already holds is skipped as a duplicate, and nothing is written', async () => {
    const { api, memories } = await tenant();
    const known = json(await memories.create({ title: 'Birthday', content: 'Bob\'s birthday is on March 3' })).data;
    t.llm.setScript(model(['Bob\'s birthday is on March 3'], (req) => ({
      json: { action: 'skip', supersedes: [], duplicate_of: candidateIds(req)[0], reason: 'already known' },
    })));
    const job = await ingest(api, { messages: [{ role: 'user', content: 'Remember that Bob\'s birthday is on March 3' }] });
    expect(job).toMatchObject({
      state: 'completed',
      proposals: [{ action: 'skip', duplicate_of: known.id, status: 'skipped', memory_id: null, reason: 'already known' }],
    });
    expect(json(await memories.list()).pagination.total).toBe(1);
    // Nothing waits for a review, so no memory.proposed either.
    expect((await eventsOf(['memory.proposed'])).filter((e) => e.data.id === job.id)).toEqual([]);
  });

  it('policy auto needs memories:auto_ingest (403 otherwise) and writes when the job runs', async () => {
    const plain = await tenant();
    t.llm.setScript(model(['The user works at Initech']));
    const refused = await plain.api.start({ policy: 'auto', messages: [{ role: 'user', content: 'I work at Initech' }] });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(json(refused).error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect(json(refused).error.message).toContain('memories:auto_ingest');
    expect(json(await plain.api.list()).pagination.total).toBe(0);

    const { api, memories, keyId } = await tenant(AUTO);
    const job = await ingest(api, { messages: [{ role: 'user', content: 'I work at Initech' }] });
    expect(job).toMatchObject({ state: 'completed', policy: 'auto', proposals: [{ status: 'applied', decided_by: keyId }] });
    expect(json(await memories.get(job.proposals[0].memory_id)).data.content).toBe('The user works at Initech');
    // The owner of the permission may still ask for a review.
    const reviewed = await ingest(api, { policy: 'review', messages: [{ role: 'user', content: 'I work at Initech' }] });
    expect(reviewed.state).toBe('pending_review');
  });

  it('rejecting all writes nothing', async () => {
    const { api, reviewer, memories } = await tenant();
    t.llm.setScript(model(['Carol plays the cello', 'Carol lives in Oslo']));
    const job = await ingest(api, { messages: [{ role: 'user', content: 'Carol plays the cello in Oslo' }] });
    const done = json(await reviewer.review(job.id, { all: 'reject' })).data;
    expect(done.state).toBe('completed');
    expect(done.proposals.map((p: Json) => p.status)).toEqual(['rejected', 'rejected']);
    expect(json(await memories.list()).pagination.total).toBe(0);
  });

  it('documents the routes in the OpenAPI document', async () => {
    const doc = json(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
    expect(Object.keys(doc.paths['/api/v1/memories/ingest'].post.responses)).toEqual(expect.arrayContaining(['202', '400', '403', '429']));
    expect(doc.paths['/api/v1/memories/ingest'].get.responses).toHaveProperty('200');
    expect(doc.paths['/api/v1/memories/ingest/{id}'].get.responses).toHaveProperty('404');
    expect(Object.keys(doc.paths['/api/v1/memories/ingest/{id}/review'].post.responses)).toEqual(expect.arrayContaining(['200', '403', '404', '409']));
  });

  it('a partial review keeps the job pending; the events reach the G8 log and a workspace\'s G9 webhook', async () => {
    const { key, api, reviewer } = await tenant();
    const hook = await t.app.inject({
      method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${key}` },
      payload: { url: `${receiver.url}/ingest`, events: ['memory.proposed', 'memory.review.decided'] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    receiver.received.length = 0;
    t.llm.setScript(model(['Dan runs marathons', 'Dan lives in Rome']));
    const job = await ingest(api, { messages: [{ role: 'user', content: 'Dan, who lives in Rome, runs marathons' }] });

    const partial = json(await reviewer.review(job.id, { decisions: [{ proposal: 'p2', decision: 'approve' }] })).data;
    expect(partial).toMatchObject({ state: 'pending_review', proposals: [{ status: 'pending' }, { status: 'applied' }] });
    const rest = json(await reviewer.review(job.id, { all: 'reject' })).data;
    expect(rest).toMatchObject({ state: 'completed', proposals: [{ status: 'rejected' }, { status: 'applied' }] });

    const events = await eventsOf(['memory.proposed', 'memory.review.decided']);
    expect(events.map((e) => e.type)).toEqual(['memory.proposed', 'memory.review.decided', 'memory.review.decided']);
    expect(events[0]!.data).toMatchObject({
      object: 'ingestion', id: job.id, workspace: 'default', mode: 'extract', requested_by: 'user-1',
      proposals: [{ id: 'p1', action: 'add', status: 'pending' }, { id: 'p2', status: 'pending' }],
    });
    // No text: a receiver reads the proposals from the job.
    expect(JSON.stringify(events[0]!.data)).not.toContain('marathons');
    expect(events[1]!.data).toMatchObject({
      id: job.id, state: 'pending_review', decided_by: 'reviewer',
      decisions: [{ proposal: 'p2', decision: 'approved', memory_id: rest.proposals[1].memory_id }],
    });
    expect(events[2]!.data).toMatchObject({ state: 'completed', decisions: [{ proposal: 'p1', decision: 'rejected', memory_id: null }] });

    // The webhook of the workspace gets the same three (deliveries were written with the events).
    while (await t.container.deliveries.tick() > 0);
    const delivered = receiver.received.map((r) => JSON.parse(r.body) as Json);
    expect(delivered.map((d) => [d.type, d.data.id])).toEqual([
      ['memory.proposed', job.id], ['memory.review.decided', job.id], ['memory.review.decided', job.id],
    ]);
  });
});
