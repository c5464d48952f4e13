import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOpenAiChatModel } from '../../src/adapters/llm/openai-chat.model.ts';
import { createIngestionWorker } from '../../src/core/ingestion/ingestion-worker.ts';
import { createIngestionService } from '../../src/core/ingestion/ingestion.service.ts';
import { DEFAULT_INGESTION_LIMITS } from '../../src/core/ingestion/ingestion.rules.ts';
import { PROMPT_VERSION } from '../../src/core/ingestion/prompts.ts';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import { startMockLlm, type MockLlm, type MockLlmRequest, type MockReply, type MockScript } from '../support/mock-llm-server.ts';
import { actor, createServices, freshScope, rejection, type Services } from './support.ts';

/**
 * Ingestion's core (docs/ingestion.md) over a real SQLite store and a real OpenAI-compatible server on loopback that
 * answers from a script: the extraction and decision prompts, validation and repair, scope of the ids a decision may
 * name, and the review rules.
 */
describe('ingestion (core)', () => {
  let s: Services;
  let llm: MockLlm;
  let script: MockScript = () => ({ json: { facts: [] } });

  beforeAll(async () => {
    s = createServices();
    llm = await startMockLlm({ script: (req) => script(req) });
  });
  afterAll(async () => {
    await llm.close();
    s.close();
  });

  function wire(limits = DEFAULT_INGESTION_LIMITS) {
    const chat = createOpenAiChatModel({ url: llm.url, model: 'scripted', timeoutMs: 2_000, sleep: async () => undefined });
    const ingestion = createIngestionService({
      ingestions: s.storage.ingestions, memories: s.memories, store: s.storage.memories, search: s.search, chat,
      clock: s.clock, limits, quota: s.limits,
    });
    const worker = createIngestionWorker({ ingestions: s.storage.ingestions, service: ingestion, clock: s.clock, tenantConcurrency: 2 });
    return { ingestion, worker };
  }

  const isExtraction = (req: MockLlmRequest) => req.jsonSchema?.name === 'extracted_facts' || req.prompt.includes('Conversation:');
  const withAuto = (p: Principal): Principal => ({ ...p, scopes: new Set([...p.scopes, 'memories:auto_ingest']) });
  /** A key as created without scopes: every permission but the opt-in ones (no auto_ingest: its jobs wait for a review). */
  const withoutAuto = (p: Principal): Principal => ({ ...p, scopes: new Set([...p.scopes].filter((x) => x !== 'memories:auto_ingest')) });
  const conversation = [
    { role: 'user', content: 'I moved to Berlin last month.' },
    { role: 'assistant', content: 'Nice! How do you like it?' },
    { role: 'user', content: 'Love it. Also, my sister Ana is visiting in May.' },
  ];

  async function seed(scope: Scope, content: string) {
    return s.memories.create(scope, actor(scope, 'seed'), { title: content, content });
  }

  it('extracts facts, shows each fact its nearest memories, and supersedes on a decision (auto)', async () => {
    const scope = freshScope();
    const paris = await seed(scope, 'Alice lives in Paris');
    const seen: string[][] = [];
    script = (req) => {
      if (isExtraction(req)) {
        return { json: { facts: [{ content: 'Alice lives in Berlin', sources: [0] }, { content: 'Alice\'s sister Ana visits in May', sources: [2] }] } };
      }
      const ids = [...req.prompt.matchAll(/id: ([0-9a-f-]{36})/g)].map((m) => m[1]!);
      seen.push(ids);
      return { json: { action: 'supersede', supersedes: [paris.id], duplicate_of: null, reason: 'Alice moved' } };
    };
    const { ingestion, worker } = wire();
    s.clock.advance(60_000);
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation, tags: ['chat'] });
    expect(job).toMatchObject({ state: 'queued', policy: 'auto', mode: 'extract', promptVersion: PROMPT_VERSION });
    expect(await worker.drain()).toBe(1);

    const done = await ingestion.find(scope, job.id);
    expect(done.state).toBe('completed');
    // The Berlin fact found Paris among its candidates and replaced it; Ana's fact had none, so no call was made for it.
    expect(seen).toEqual([[paris.id]]);
    expect(done.proposals.map((p) => [p.action, p.status])).toEqual([['supersede', 'applied'], ['add', 'applied']]);
    expect(done.usage).toMatchObject({ model: 'scripted', modelCalls: 2 });
    const berlin = await s.memories.find(scope, done.proposals[0]!.memoryId!);
    expect(berlin).toMatchObject({ content: 'Alice lives in Berlin', tags: ['chat'] });
    expect(berlin.metadata).toMatchObject({ ingestion: { id: job.id, proposal: 'p1', prompt_version: PROMPT_VERSION, model: 'scripted' } });
    expect(await s.memories.find(scope, paris.id)).toMatchObject({ supersededBy: berlin.id });
  });

  it('never shows a fact memories of another scope, and refuses a decision naming an id it was not shown', async () => {
    const scope = freshScope();
    const other = freshScope();
    const foreign = await seed(other, 'Alice lives in Paris');
    const mine = await seed(scope, 'Alice lives in Lyon');
    let decisions = 0;
    script = (req) => {
      if (isExtraction(req)) return { json: { facts: [{ content: 'Alice lives in Paris now', sources: [0] }] } };
      decisions++;
      // The candidates shown (the first user message) hold only this scope's memory; the repair turn repeats the answer.
      expect(req.messages[1]!.content).toContain(mine.id);
      expect(req.messages[1]!.content).not.toContain(foreign.id);
      // Names the other tenant's memory both times: refused, repaired once, then the job fails.
      return { json: { action: 'supersede', supersedes: [foreign.id], duplicate_of: null, reason: 'x' } };
    };
    const { ingestion, worker } = wire();
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    await worker.drain();
    const failed = await ingestion.find(scope, job.id);
    expect(decisions).toBe(2);
    expect(failed).toMatchObject({ state: 'failed', error: { code: 'invalid_answer' } });
    expect(failed.error!.message).toContain('not one of the memories listed');
    expect(await s.memories.find(scope, mine.id)).toMatchObject({ supersededBy: null });
    expect(await s.memories.find(other, foreign.id)).toMatchObject({ supersededBy: null });
  });

  it('repairs an invalid answer once, showing the model its error', async () => {
    const scope = freshScope();
    let calls = 0;
    script = (req) => {
      calls++;
      if (calls === 1) return { content: 'Sure! Here are the facts: Alice lives in Berlin.' };
      expect(req.messages.at(-1)!.content).toContain('no JSON value');
      return { json: { facts: [{ content: 'Alice lives in Berlin', sources: [0] }] } };
    };
    const { ingestion, worker } = wire();
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    await worker.drain();
    const done = await ingestion.find(scope, job.id);
    expect(done).toMatchObject({ state: 'completed', usage: { modelCalls: 2 } });
    expect(done.proposals).toHaveLength(1);
  });

  it('fails without writing anything when the second answer is still invalid (a source outside the conversation)', async () => {
    const scope = freshScope();
    script = () => ({ json: { facts: [{ content: 'Alice lives in Berlin', sources: [7] }] } });
    const { ingestion, worker } = wire();
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    await worker.drain();
    expect(await ingestion.find(scope, job.id)).toMatchObject({ state: 'failed', error: { code: 'invalid_answer' } });
    expect((await s.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).total).toBe(0);
  });

  it('waits for a review; the requesting key cannot decide it, another key applies exactly what it approves', async () => {
    const scope = freshScope();
    script = (req) => (isExtraction(req)
      ? { json: { facts: [{ content: 'Alice lives in Berlin', sources: [0] }, { content: 'Ana visits in May', sources: [2] }] } }
      : { json: { action: 'add', supersedes: [], duplicate_of: null, reason: 'new' } });
    const { ingestion, worker } = wire();
    const agent = withoutAuto(actor(scope, 'agent'));
    const job = await ingestion.start(scope, agent, { messages: conversation });
    expect(job.policy).toBe('review');
    await worker.drain();
    const waiting = await ingestion.find(scope, job.id);
    expect(waiting.state).toBe('pending_review');
    expect((await s.eventsOf(scope)).map((e) => e.type)).toContain('memory.proposed');

    expect((await rejection(ingestion.review(scope, agent, job.id, { decisions: [], all: 'approve' }))).details).toMatchObject({ reason: 'own_request' });
    expect((await rejection(ingestion.review(scope, { ...agent, userId: 'someone-else' }, job.id, { decisions: [], all: 'approve' }))).code).toBe('PERMISSION_DENIED');

    const person = actor(scope, 'person');
    const after = await ingestion.review(scope, person, job.id, { decisions: [{ proposal: 'p1', decision: 'approve' }] });
    expect(after.state).toBe('pending_review');
    expect(after.proposals.map((p) => p.status)).toEqual(['applied', 'pending']);
    expect(await s.memories.find(scope, after.proposals[0]!.memoryId!)).toMatchObject({ content: 'Alice lives in Berlin' });

    const last = await ingestion.review(scope, person, job.id, { decisions: [], all: 'reject' });
    expect(last.state).toBe('completed');
    expect(last.proposals.map((p) => [p.status, p.decidedBy])).toEqual([['applied', person.keyId], ['rejected', person.keyId]]);
    expect((await rejection(ingestion.review(scope, person, job.id, { decisions: [], all: 'approve' }))).code).toBe('CONFLICT');
    const decided = (await s.eventsOf(scope)).filter((e) => e.type === 'memory.review.decided');
    expect(decided.map((e) => (e.data.decisions as unknown[]).length)).toEqual([1, 1]);
  });

  it('stores raw turns as memories with role, position and session, and refuses extract without a model', async () => {
    const scope = freshScope();
    const { ingestion, worker } = wire();
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), {
      mode: 'raw', metadata: { session: 's-42' }, messages: [...conversation, { role: 'system', content: 'be nice' }, { role: 'user', content: '   ' }],
    });
    await worker.drain();
    const done = await ingestion.find(scope, job.id);
    expect(done.proposals.map((p) => p.sources)).toEqual([[0], [1], [2]]);
    const first = await s.memories.find(scope, done.proposals[1]!.memoryId!);
    expect(first.metadata).toMatchObject({ role: 'assistant', position: 1, session: 's-42' });

    const noModel = createIngestionService({
      ingestions: s.storage.ingestions, memories: s.memories, store: s.storage.memories, search: s.search, chat: null,
      clock: s.clock, limits: DEFAULT_INGESTION_LIMITS, quota: s.limits,
    });
    const refused = await rejection(noModel.start(scope, actor(scope, 'alice'), { messages: conversation }));
    expect(refused.code).toBe('VALIDATION_FAILED');
    expect(refused.message).toContain('MNEMO_LLM_URL');
  });

  it('fails a job needing more model calls than allowed, and counts a tenant\'s unfinished jobs', async () => {
    const scope = freshScope();
    script = () => ({ json: { facts: [] } });
    const { ingestion, worker } = wire({ ...DEFAULT_INGESTION_LIMITS, windowChars: 10, maxModelCalls: 2, tenantQueue: 3 });
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    for (let i = 0; i < 2; i++) await ingestion.start(scope, withoutAuto(actor(scope, 'alice')), { messages: conversation });
    const refused = await rejection(ingestion.start(scope, withoutAuto(actor(scope, 'alice')), { messages: conversation }));
    expect(refused.code).toBe('RATE_LIMITED');
    await worker.drain();
    expect(await ingestion.find(scope, job.id)).toMatchObject({ state: 'failed', error: { code: 'model_call_limit' } });
  });

  it('a job whose worker died is taken again when its lease lapses, and given up after the attempts allowed', async () => {
    const scope = freshScope();
    let answer: (() => void) | null = null;
    script = () => new Promise<MockReply>((resolve) => { answer = () => resolve({ json: { facts: [{ content: 'Alice lives in Berlin', sources: [0] }] } }); });
    const { ingestion } = wire();
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    // A first worker takes the job and hangs on the model: as good as dead.
    const dead = createIngestionWorker({ ingestions: s.storage.ingestions, service: ingestion, clock: s.clock, tenantConcurrency: 2, options: { leaseMs: 1_000 } });
    const hung = dead.drain();
    await vi.waitFor(() => expect(answer).not.toBeNull());
    const second = createIngestionWorker({ ingestions: s.storage.ingestions, service: ingestion, clock: s.clock, tenantConcurrency: 2, options: { leaseMs: 1_000 } });
    expect(await second.drain()).toBe(0);
    s.clock.advance(1_001);
    script = () => ({ json: { facts: [{ content: 'Alice lives in Berlin', sources: [0] }] } });
    expect(await second.drain()).toBe(1);
    const done = await ingestion.find(scope, job.id);
    expect(done).toMatchObject({ state: 'completed', attempts: 2 });
    // The first worker wakes up: its lease is gone, so nothing it produced is saved and nothing is written twice.
    answer!();
    await hung;
    expect(await ingestion.find(scope, job.id)).toMatchObject({ state: 'completed', revision: done.revision });
    expect((await s.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).total).toBe(1);

    const stuck = await ingestion.start(scope, withAuto(actor(scope, 'alice')), { messages: conversation });
    for (let i = 0; i < 3; i++) {
      await s.storage.ingestions.claimNext(s.clock.now(), 1_000, 2);
      s.clock.advance(1_001);
    }
    await second.drain();
    expect(await ingestion.find(scope, stuck.id)).toMatchObject({ state: 'failed', error: { code: 'abandoned' } });
  });

  it('a memory forgotten between its write and the job\'s save stays forgotten: not saved back, not written or proposed again', async () => {
    const scope = freshScope();
    let forgotten: string | null = null;
    // The write commits, then a forget of its memory lands before the worker saves the job (docs/ingestion.md, "Forgetting").
    const store = {
      findByClientId: s.storage.memories.findByClientId,
      applyAtomically: async (...args: Parameters<typeof s.storage.memories.applyAtomically>) => {
        const done = await s.storage.memories.applyAtomically(...args);
        const step = args[1][0]!;
        if (forgotten === null && step.kind === 'insert') {
          forgotten = step.memory.id;
          await s.storage.memories.delete(scope, forgotten, { at: s.clock.now(), by: 'someone', reason: 'forget' });
        }
        return done;
      },
    };
    const ingestion = createIngestionService({
      ingestions: s.storage.ingestions, memories: s.memories, store, search: s.search, chat: null,
      clock: s.clock, limits: DEFAULT_INGESTION_LIMITS, quota: s.limits,
    });
    const worker = createIngestionWorker({ ingestions: s.storage.ingestions, service: ingestion, clock: s.clock, tenantConcurrency: 2 });
    const job = await ingestion.start(scope, withAuto(actor(scope, 'alice')), {
      mode: 'raw', messages: [{ role: 'system', content: 'be nice' }, { role: 'user', content: 'My locker code is 0451.' }],
    });
    // The first attempt's save is refused (the forget took its lease); the job is taken again and ends at once.
    expect(await worker.drain()).toBe(2);
    const done = await ingestion.find(scope, job.id);
    expect(done).toMatchObject({ state: 'completed', attempts: 2, error: null });
    expect(done.messages.map((m) => m.content)).toEqual(['be nice', '']);
    expect(done.proposals).toEqual([expect.objectContaining({ id: 'p1', status: 'applied', memoryId: forgotten, content: '', forgotten: true })]);
    expect((await s.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).total).toBe(0);
  });
});
