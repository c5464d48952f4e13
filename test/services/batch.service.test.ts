import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { BatchOp, BatchOptions, OpOutcome } from '../../src/core/batch/batch.types.ts';
import { EmbeddingError, type Embedder } from '../../src/core/embeddings/embedder.port.ts';
import { validationError } from '../../src/core/errors.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createServices, DIMENSIONS, freshScope, principalOf, actor, type Services } from './support.ts';

const OPTIONS: BatchOptions = { continueOnError: true, maxRetries: 0, timeoutMs: 30_000, parallel: false, validateOnly: false, atomic: false };

/** Per outcome: `ok` or the failure's code. */
const statuses = (outcomes: readonly OpOutcome[]) => outcomes.map((o) => (o.status === 'success' ? 'ok' : o.error.code));

const create = (title: string): BatchOp => ({ type: 'create', input: { title, content: `${title} content` } });
const MISSING = '00000000-0000-4000-8000-000000000000';

describe('BatchService', () => {
  let s: Services;
  beforeAll(() => { s = createServices(); });
  afterAll(() => s.close());

  const countIn = async (scope: Scope) =>
    (await s.memories.list(scope, { filter: {}, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).total;

  describe('not atomic', () => {
    it('runs every operation, reports each one\'s own error, and keeps input order', async () => {
      const scope = freshScope();
      const existing = await s.memories.create(scope, actor(scope, 'u'), { title: 'Existing', content: 'c' });
      const ops: BatchOp[] = [
        create('One'),
        { type: 'read', id: MISSING },
        { type: 'update', id: existing.id, patch: { title: 'Renamed' } },
        { type: 'create', invalid: validationError([{ field: 'title', reason: 'invalid_type', message: 'must be a string' }]) },
        { type: 'search', query: 'Renamed', limit: 5, threshold: 0, filter: {} },
        { type: 'delete', id: existing.id.slice(0, 8) },
      ];
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, OPTIONS);
      expect(outcomes.map((o) => o.index)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(statuses(outcomes)).toEqual(['ok', 'NOT_FOUND', 'ok', 'VALIDATION_FAILED', 'ok', 'ok']);
      expect(outcomes[2]).toMatchObject({ value: { kind: 'updated', memory: { title: 'Renamed' } } });
      const searched = outcomes[4]!;
      expect(searched.status === 'success' && searched.value.kind === 'searched' && searched.value.hits[0]!.memory.id).toBe(existing.id);
      expect(outcomes[5]).toMatchObject({ value: { kind: 'deleted', id: existing.id } });
      expect(await countIn(scope)).toBe(1);
      // A G6 delete says so in its event.
      expect((await s.eventsOf(scope)).find((e) => e.type === 'memory.deleted')!.data.reason).toBe('batch');
    });

    it('with continue_on_error false, stops at the first failure and keeps what ran before it', async () => {
      const scope = freshScope();
      const ops = [create('One'), { type: 'delete', id: MISSING }, create('Two')] satisfies BatchOp[];
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, continueOnError: false, parallel: true });
      expect(statuses(outcomes)).toEqual(['ok', 'NOT_FOUND', 'NOT_EXECUTED']);
      expect(await countIn(scope)).toBe(1);
    });

    it('in parallel, still answers in input order with every outcome', async () => {
      const scope = freshScope();
      const titlesAt = Array.from({ length: 20 }, (_, i) => (i % 5 === 4 ? null : `M${i}`));
      const ops = titlesAt.map((t): BatchOp => (t === null ? { type: 'read', id: MISSING } : create(t)));
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, parallel: true });
      expect(outcomes.map((o) => o.index)).toEqual(ops.map((_, i) => i));
      expect(statuses(outcomes)).toEqual(ops.map((op) => (op.type === 'read' ? 'NOT_FOUND' : 'ok')));
      expect(outcomes.filter((o) => o.status === 'success').map((o) => o.status === 'success' && o.value.kind === 'created' && o.value.memory.title))
        .toEqual(titlesAt.filter((t) => t !== null));
      expect(await countIn(scope)).toBe(16);
    });

    it('validate_only checks every operation (fields, ids) and writes nothing', async () => {
      const scope = freshScope();
      const existing = await s.memories.create(scope, actor(scope, 'u'), { title: 'Existing', content: 'c' });
      const before = await s.eventsOf(scope);
      const ops: BatchOp[] = [
        create('Fine'),
        { type: 'create', input: { title: '', content: 'c' } },
        { type: 'update', id: existing.id, patch: {} },
        { type: 'delete', id: MISSING },
        { type: 'search', query: ' ', limit: 5, threshold: 0, filter: {} },
        { type: 'read', id: existing.id },
      ];
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, validateOnly: true });
      expect(statuses(outcomes)).toEqual(['ok', 'VALIDATION_FAILED', 'VALIDATION_FAILED', 'NOT_FOUND', 'VALIDATION_FAILED', 'ok']);
      expect(outcomes.every((o) => o.attempts === 0)).toBe(true);
      expect(await countIn(scope)).toBe(1);
      expect(await s.eventsOf(scope)).toEqual(before);
      expect((await s.memories.find(scope, existing.id)).accessCount).toBe(0);
    });

    it('counts each write against the key\'s hourly quota; reads and searches are free', async () => {
      const scope = freshScope();
      const principal = principalOf(scope, 'free'); // 100 writes an hour
      for (let i = 0; i < 98; i++) await s.limits.memoryWrite(principal);
      const ops: BatchOp[] = [create('A'), { type: 'read', id: MISSING }, { type: 'search', query: 'A', limit: 1, threshold: 0, filter: {} }, create('B'), create('C')];
      const { outcomes } = await s.batch.run(principal, scope, ops, OPTIONS);
      expect(statuses(outcomes)).toEqual(['ok', 'NOT_FOUND', 'ok', 'ok', 'QUOTA_EXCEEDED']);
      const refused = outcomes[4]!;
      expect(refused.status === 'failed' && 'details' in refused.error && refused.error.details.limit).toMatchObject({ limit: 100, remaining: 0, bucket: 'memory-writes' });
      // The next hour's window has room again.
      s.clock.advance(3_600_000);
      expect(statuses((await s.batch.run(principal, scope, [create('C')], OPTIONS)).outcomes)).toEqual(['ok']);
      expect(await countIn(scope)).toBe(3);
    });
  });

  describe('atomic', () => {
    it('applies every operation in one transaction when all succeed', async () => {
      const scope = freshScope();
      const existing = await s.memories.create(scope, actor(scope, 'u'), { title: 'Existing', content: 'c' });
      const ops: BatchOp[] = [create('One'), { type: 'read', id: existing.id }, { type: 'update', id: existing.id, patch: { tags: ['t'] } }, create('Two')];
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, atomic: true, continueOnError: false });
      expect(statuses(outcomes)).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(outcomes[1]).toMatchObject({ value: { kind: 'read', memory: { accessCount: 1 } } });
      expect(outcomes[2]).toMatchObject({ value: { kind: 'updated', memory: { tags: ['t'] } } });
      expect(await countIn(scope)).toBe(3);
    });

    it('one failure undoes all: the failing operation says why, the others ROLLED_BACK, no row and no event remain', async () => {
      const scope = freshScope();
      const existing = await s.memories.create(scope, actor(scope, 'u'), { title: 'Existing', content: 'c' });
      const before = await s.eventsOf(scope);
      // The delete fails inside the transaction (the id is resolved first, then deleted twice).
      const ops: BatchOp[] = [create('One'), { type: 'update', id: existing.id, patch: { title: 'Changed' } }, { type: 'delete', id: existing.id }, { type: 'delete', id: existing.id }];
      const { outcomes } = await s.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, atomic: true });
      expect(statuses(outcomes)).toEqual(['ROLLED_BACK', 'ROLLED_BACK', 'ROLLED_BACK', 'NOT_FOUND']);
      expect(await countIn(scope)).toBe(1);
      expect((await s.memories.find(scope, existing.id)).title).toBe('Existing');
      expect(await s.eventsOf(scope)).toEqual(before);
    });

    it('a failure while preparing (bad field, unknown id, search) stops before anything is written', async () => {
      const scope = freshScope();
      for (const bad of [
        { op: { type: 'update', id: MISSING, patch: { title: 'x' } } satisfies BatchOp, code: 'NOT_FOUND' },
        { op: { type: 'create', input: { title: 'T', content: ' ' } } satisfies BatchOp, code: 'VALIDATION_FAILED' },
        { op: { type: 'search', query: 'q', limit: 1, threshold: 0, filter: {} } satisfies BatchOp, code: 'VALIDATION_FAILED' },
      ]) {
        const { outcomes } = await s.batch.run(principalOf(scope), scope, [create('One'), bad.op, create('Two')], { ...OPTIONS, atomic: true });
        expect(statuses(outcomes)).toEqual(['ROLLED_BACK', bad.code, 'ROLLED_BACK']);
      }
      expect(await countIn(scope)).toBe(0);
      expect(await s.eventsOf(scope)).toEqual([]);
    });

    it('a write over quota rolls back the whole batch', async () => {
      const scope = freshScope();
      const principal = principalOf(scope, 'free');
      for (let i = 0; i < 99; i++) await s.limits.memoryWrite(principal);
      const { outcomes } = await s.batch.run(principal, scope, [create('A'), create('B')], { ...OPTIONS, atomic: true });
      expect(statuses(outcomes)).toEqual(['ROLLED_BACK', 'QUOTA_EXCEEDED']);
      expect(await countIn(scope)).toBe(0);
    });
  });

  describe('retries and deadline (each with its own embedder)', () => {
    /** The hashing embedder, failing the first `failures` calls; `onEmbed` runs on every call. */
    function flakyEmbedder(failures: number, onEmbed: () => void = () => {}): Embedder & { calls: number } {
      const inner = createHashingEmbedder({ dimensions: DIMENSIONS });
      const e = {
        ...inner, calls: 0,
        async embed(texts: readonly string[]) {
          e.calls++;
          onEmbed();
          if (e.calls <= failures) throw new EmbeddingError('model busy');
          return inner.embed(texts);
        },
      };
      return e;
    }

    it('retries an embedding failure up to max_retries, but never a bad request', async () => {
      const embedder = flakyEmbedder(2);
      const own = createServices({ embedder });
      try {
        const scope = freshScope();
        const ops: BatchOp[] = [create('Retried'), { type: 'read', id: MISSING }];
        const { outcomes } = await own.batch.run(principalOf(scope), scope, ops, { ...OPTIONS, maxRetries: 2 });
        expect(statuses(outcomes)).toEqual(['ok', 'NOT_FOUND']);
        expect(outcomes.map((o) => o.attempts)).toEqual([3, 1]);
        expect(embedder.calls).toBe(3);

        const again = flakyEmbedder(2);
        const fewer = createServices({ embedder: again });
        const { outcomes: gaveUp } = await fewer.batch.run(principalOf(scope), scope, [create('X')], { ...OPTIONS, maxRetries: 1 });
        expect(gaveUp[0]).toMatchObject({ status: 'failed', attempts: 2, error: { code: 'EMBEDDING_FAILED' } });
        await fewer.close();
      } finally {
        await own.close();
      }
    });

    it('starts no operation after the deadline; the one running when it passed reports its real outcome', async () => {
      // Each embedding takes "20 s" of the manual clock: the second create starts at 20 s, the third would at 40 s.
      const slow = { clock: null as Services['clock'] | null };
      const own = createServices({ embedder: flakyEmbedder(0, () => slow.clock!.advance(20_000)) });
      slow.clock = own.clock;
      try {
        const scope = freshScope();
        const { outcomes } = await own.batch.run(principalOf(scope), scope, [create('A'), create('B'), create('C')], { ...OPTIONS, timeoutMs: 30_000 });
        expect(statuses(outcomes)).toEqual(['ok', 'ok', 'BATCH_TIMEOUT']);
        expect((await own.memories.list(scope, { filter: {}, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).items.map((m) => m.title)).toEqual(['A', 'B']);
      } finally {
        await own.close();
      }
    });
  });
});
