import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockLlmRequest, MockReply } from '../support/mock-llm-server.ts';
import {
  candidateIds, createIngestTestApp, ingestApi, isDecision, isExtraction, isRepair, runIngestions, type IngestTestApp,
} from '../support/ingestion.ts';
import { createTestApp, g1, json, type Json, type TestApp } from '../support/test-app.ts';

/**
 * Ingestion's refusals and failures on G1 (docs/ingestion.md): requests refused at once (no model, limits, the
 * tenant's queue, another tenant's job, bad reviews), and jobs that fail on the model's answers (invalid twice, an id
 * it was not shown, a refusal) without writing anything, or succeed after a repair or a retried 429.
 */
describe('G1 ingestion: refusals and failures', () => {
  let t: IngestTestApp;
  const one = [{ role: 'user', content: 'Erin keeps bees in her garden' }];
  const facts = (...contents: string[]) => ({ json: { facts: contents.map((content) => ({ content, sources: [0] })) } });

  async function tenant() {
    const key = await t.freshTenant();
    return { key, api: ingestApi(t.app, key), reviewer: ingestApi(t.app, await t.key({ user: 'reviewer' })), memories: g1(t.app, key) };
  }

  /** Runs a job with this script; answers the job and the requests the model got. */
  async function run(api: ReturnType<typeof ingestApi>, script: (req: MockLlmRequest) => MockReply, messages = one) {
    t.llm.setScript(script);
    t.llm.requests.length = 0;
    const res = await api.start({ messages });
    expect(res.statusCode, res.body).toBe(202);
    await runIngestions(t);
    return { job: json(await api.get(json(res).data.id)).data as Json, requests: [...t.llm.requests] };
  }

  const errorOf = (res: { statusCode: number; body: string }, status: number): Json => {
    expect(res.statusCode, res.body).toBe(status);
    return JSON.parse(res.body).error as Json;
  };

  beforeAll(async () => { t = await createIngestTestApp(); });
  afterAll(() => t?.close());

  it('extract without a configured model is a 400 naming MNEMO_LLM_URL; raw still works', async () => {
    const plain: TestApp = await createTestApp();
    try {
      const api = ingestApi(plain.app, await plain.key());
      const error = errorOf(await api.start({ messages: one }), 400);
      expect(error).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'mode' }] });
      expect(error.message).toContain('MNEMO_LLM_URL');
      expect(error.message).toContain('MNEMO_LLM_MODEL');
      expect((await api.start({ mode: 'raw', messages: one })).statusCode).toBe(202);
    } finally {
      await plain.close();
    }
  });

  it('refuses bad requests at once, naming the field, and stores nothing', async () => {
    const { api } = await tenant();
    const tooMany = Array.from({ length: 501 }, () => ({ role: 'user', content: 'x' }));
    expect(errorOf(await api.start({ mode: 'raw', messages: tooMany }), 400).details).toEqual([{ field: 'messages', message: 'must hold at most 500 messages' }]);
    expect(errorOf(await api.start({ mode: 'raw', messages: [] }), 400).details.map((d: Json) => d.field)).toEqual(['messages']);
    expect(errorOf(await api.start({ mode: 'raw', messages: [{ role: 'user', content: '  ' }] }), 400).details.map((d: Json) => d.field)).toEqual(['messages']);
    expect(errorOf(await api.start({ mode: 'raw', messages: [{ role: 'narrator', content: 'x' }] }), 400).details.map((d: Json) => d.field)).toEqual(['messages[0].role']);
    expect(errorOf(await api.start({ mode: 'raw', messages: [{ role: 'user', content: 'x', timestamp: 'yesterday' }] }), 400).details.map((d: Json) => d.field))
      .toEqual(['messages[0].timestamp']);
    expect(errorOf(await api.start({ mode: 'raw', messages: [{ role: 'user', content: 'x'.repeat(16_001) }] }), 400).details.map((d: Json) => d.field))
      .toEqual(['messages[0].content']);
    expect(errorOf(await api.start({ mode: 'summarise', messages: one }), 400).details.map((d: Json) => d.field)).toEqual(['mode']);
    expect(errorOf(await api.start({ mode: 'raw', messages: one, tags: ['x'.repeat(101)] }), 400).code).toBe('VALIDATION_ERROR');
    expect(errorOf(await api.start({ messages: 'hello' }), 400).details.map((d: Json) => d.field)).toEqual(['messages']);
    expect(errorOf(await api.list('?state=lost'), 400).details.map((d: Json) => d.field)).toEqual(['state']);
    expect(json(await api.list()).pagination.total).toBe(0);
  });

  it('refuses a request past the tenant\'s queue of unfinished ingestions with 429 and Retry-After', async () => {
    const { api } = await tenant();
    for (let i = 0; i < 20; i++) expect((await api.start({ mode: 'raw', messages: one })).statusCode).toBe(202);
    const res = await api.start({ mode: 'raw', messages: one });
    expect(errorOf(res, 429).code).toBe('RATE_LIMITED');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect(res.headers['x-ratelimit-limit']).toBe('20');
    // Once they run, the tenant may ask again.
    await runIngestions(t);
    expect((await api.start({ mode: 'raw', messages: one })).statusCode).toBe(202);
    await runIngestions(t);
  });

  it('another tenant or workspace cannot read or review the job (404 INGESTION_NOT_FOUND)', async () => {
    const { api } = await tenant();
    const id = json(await api.start({ mode: 'raw', policy: 'review', messages: one })).data.id as string;
    await runIngestions(t);
    expect(json(await api.get(id)).data.state).toBe('pending_review');
    const stranger = ingestApi(t.app, await t.key({ tenant: `${t.tenant}-other` }));
    expect(errorOf(await stranger.get(id), 404).code).toBe('INGESTION_NOT_FOUND');
    expect(errorOf(await stranger.review(id, { all: 'approve' }), 404).code).toBe('INGESTION_NOT_FOUND');
    expect(json(await stranger.list()).data).toEqual([]);
    const elsewhere = ingestApi(t.app, await t.key({ user: 'reviewer' }), { 'x-workspace-id': 'other' });
    expect(errorOf(await elsewhere.get(id), 404).code).toBe('INGESTION_NOT_FOUND');
    expect(errorOf(await elsewhere.review(id, { all: 'approve' }), 404).code).toBe('INGESTION_NOT_FOUND');
    expect(json(await api.get(id)).data.state).toBe('pending_review');
  });

  it('refuses reviews that decide nothing, name unknown proposals, or come while the job is not waiting', async () => {
    const { api, reviewer } = await tenant();
    const id = json(await api.start({ mode: 'raw', policy: 'review', messages: one })).data.id as string;
    expect(errorOf(await reviewer.review(id, { all: 'approve' }), 409).code).toBe('CONFLICT');
    await runIngestions(t);
    expect(errorOf(await reviewer.review(id, {}), 400).details.map((d: Json) => d.field)).toEqual(['decisions']);
    expect(errorOf(await reviewer.review(id, { decisions: [{ proposal: 'p9', decision: 'approve' }] }), 400).details.map((d: Json) => d.field))
      .toEqual(['decisions[0].proposal', 'decisions']);
    expect(errorOf(await reviewer.review(id, { decisions: [{ proposal: 'p1', decision: 'maybe' }] }), 400).code).toBe('VALIDATION_ERROR');
    expect(json(await api.get(id)).data.proposals[0].status).toBe('pending');
  });

  it('an answer that is not JSON twice fails the job with the reason; nothing is written', async () => {
    const { api, memories } = await tenant();
    const { job, requests } = await run(api, () => ({ content: 'Sure! Erin keeps bees.' }));
    expect(requests.map(isRepair)).toEqual([false, true]);
    expect(job).toMatchObject({ state: 'failed', proposals: [], error: { code: 'invalid_answer' }, usage: { model_calls: 2 } });
    expect(job.error.message).toMatch(/invalid twice/);
    expect(job.finished_at).toEqual(expect.any(String));
    expect(json(await memories.list()).pagination.total).toBe(0);
  });

  it('an answer that breaks the schema is repaired by the second one', async () => {
    const { api } = await tenant();
    const { job, requests } = await run(api, (req) => (isRepair(req) ? facts('Erin keeps bees in her garden') : { json: { facts: [{ text: 'Erin keeps bees' }] } }));
    expect(requests.map(isRepair)).toEqual([false, true]);
    // The repair shows the model its own answer and what was wrong with it.
    expect(requests[1]!.messages.at(-2)).toEqual({ role: 'assistant', content: '{"facts":[{"text":"Erin keeps bees"}]}' });
    expect(requests[1]!.messages.at(-1)!.content).toMatch(/^That answer was not valid: facts\.0/);
    expect(job).toMatchObject({ state: 'pending_review', error: null, usage: { model_calls: 2 }, proposals: [{ content: 'Erin keeps bees in her garden', status: 'pending' }] });
  });

  it('a decision naming an id it was not shown (another tenant\'s memory, an unknown one) is refused: repair, then the job fails', async () => {
    const { api, memories } = await tenant();
    const mine = json(await memories.create({ title: 'Bees', content: 'Erin keeps bees in her garden' })).data;
    const theirs = json(await g1(t.app, await t.key({ tenant: `${t.tenant}-neighbour` })).create({ title: 'Bees', content: 'Erin keeps bees in her garden' })).data;
    for (const foreign of [theirs.id, randomUUID()]) {
      const shown: string[][] = [];
      const { job, requests } = await run(api, (req) => {
        if (isExtraction(req)) return facts('Erin keeps bees in her garden and sells honey');
        shown.push(candidateIds(req));
        return { json: { action: 'supersede', supersedes: [foreign], duplicate_of: null, reason: 'replaced' } };
      });
      expect(requests.map((r) => [isDecision(r), isRepair(r)])).toEqual([[false, false], [true, false], [true, true]]);
      expect(shown).toEqual([[mine.id], [mine.id]]);
      expect(requests.some((r) => r.prompt.includes(theirs.id) && !isRepair(r))).toBe(false);
      expect(job).toMatchObject({ state: 'failed', error: { code: 'invalid_answer' }, usage: { model_calls: 3 } });
      expect(job.error.message).toContain(foreign);
    }
    expect(json(await memories.get(mine.id)).data).toMatchObject({ superseded_by: null, valid_until: null });
    expect(json(await memories.list()).pagination.total).toBe(1);
  });

  it('a refusal fails the job (model_refused)', async () => {
    const { api } = await tenant();
    const { job, requests } = await run(api, () => ({ refusal: 'I cannot help with that.' }));
    expect(requests).toHaveLength(1);
    expect(job).toMatchObject({ state: 'failed', proposals: [], error: { code: 'model_refused' }, usage: { model_calls: 1 } });
    expect(job.error.message).toContain('I cannot help with that.');
  });

  it('a 429 is retried (Retry-After: 0) and the job goes on', async () => {
    const { api } = await tenant();
    let limited = false;
    const { job, requests } = await run(api, () => {
      if (limited) return facts('Erin keeps bees in her garden');
      limited = true;
      return { status: 429, retryAfter: 0 };
    });
    expect(requests).toHaveLength(2);
    expect(job).toMatchObject({ state: 'pending_review', error: null, usage: { model_calls: 2 }, proposals: [{ status: 'pending' }] });
  });
});
