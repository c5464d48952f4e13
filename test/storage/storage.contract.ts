/**
 * The storage contract: every storage adapter (SQLite now, PostgreSQL later) runs this same suite unchanged.
 * Call `describeStorageContract(name, open, extras?)` from an adapter's test file: `open` gives a fresh, empty store;
 * `extras.openSecond`, when the adapter can, a second connection (as another process would open) to the store `open`
 * returned last, so the concurrency tests also race across connections.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiKeyOwner, ApiKeyRecord } from '../../src/core/api-keys/api-key.types.ts';
import type { CosineEstimate, ListQuery, MemoryFilter, MemoryRef } from '../../src/core/memories/memory.types.ts';
import { AtomicStepFailed, EXACT_SIMILARITY_SCAN_MAX } from '../../src/core/memories/memory.repository.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import type { RequestMetricRow } from '../../src/core/analytics/request-metrics.repository.ts';
import type { Topic } from '../../src/core/topics/topic.types.ts';
import type { EventScope, NewEvent, StoredEvent } from '../../src/core/events/event.types.ts';
import type { ClaimedDelivery, Webhook } from '../../src/core/webhooks/webhook.types.ts';
import { DomainError } from '../../src/core/errors.ts';
import {
  secretVersionContext, type SealedRef, type SealedValue, type SecretListQuery, type SecretOwner, type SecretVersionChanges,
  type StoredSecret, type StoredSecretVersion,
} from '../../src/core/secrets/secret.types.ts';
import { auditRowHash, GENESIS_HASH, linkAuditRow } from '../../src/core/audit/audit.hash.ts';
import { createAuditHeadSigner, signUnsignedAuditHeads, type SignedAuditHead } from '../../src/core/audit/audit.head.ts';
import type { AuditEntry, AuditListQuery, AuditOwner, AuditRow } from '../../src/core/audit/audit.types.ts';
import { verifyAuditChains } from '../../src/core/audit/audit.verifier.ts';
import {
  idempotentRecordContext, type IdempotentRequestRef, type IdempotentReservation,
} from '../../src/core/idempotency/idempotent-request.repository.ts';
import type { McpApprovalListQuery } from '../../src/core/mcp-access/mcp-approval.repository.ts';
import {
  mcpResourceValueContext, type McpApprovalAnswer, type McpOwner, type StoredMcpApproval, type StoredMcpResource,
} from '../../src/core/mcp-access/mcp.types.ts';
import { randomBytes, randomUUID } from 'node:crypto';
import { TRANSFER_TABLES, type TransferRow } from '../../src/core/storage-transfer.ts';
import { webhookSecretContext } from '../../src/core/webhooks/webhook-secret.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { copyStore } from '../../src/core/storage-copy.ts';
import { axisVector, makeIngestion, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';
import { describeMemoryMaintenanceContract } from './memory-maintenance.contract.ts';
import { describeReindexProgressContract } from './reindex-progress.contract.ts';
import { describeMemoryLifecycleContract } from './memory-lifecycle.contract.ts';
import { describeIngestionContract } from './ingestion.contract.ts';
import { describeOAuthContract } from './oauth.contract.ts';

const MODEL = 'test:axis-8';
const DIMS = 8;
const vec = (axis: number, other = -1, weight = 0) => ({ modelId: MODEL, vector: axisVector(DIMS, axis, other, weight) });
const listAll = (overrides: Partial<ListQuery> = {}): ListQuery => ({
  filter: {}, limit: 100, offset: 0, sortBy: 'created_at', sortOrder: 'asc', ...overrides,
});

/** Signs audit chain heads as a server with this master key would (core/audit/audit.head.ts). */
const auditSigner = createAuditHeadSigner({ activeId: 'mk_contract', keys: new Map([['mk_contract', randomBytes(32)]]) });

export interface ContractExtras {
  /** Another connection to the store `open` returned last; the suite closes it. */
  openSecond?: () => Promise<Storage>;
  /**
   * Raw SQL on the store `open` returned last, as someone with access to the database would tamper with the audit
   * log (statements use `?` placeholders, in order); without it the tampering cases are skipped.
   */
  audit?: {
    sql(statement: string, params?: unknown[]): Promise<void>;
    /** Drops or disables what keeps audit_logs append-only (its triggers), as such a person could. */
    liftAppendOnlyGuard(): Promise<void>;
  };
}

/** One stored request-metrics row (G7), with fields overridden. */
function metricRow(over: Partial<RequestMetricRow> = {}): RequestMetricRow {
  return {
    tenantId: scopeA.tenantId, mode: 'live', minute: new Date(Date.UTC(2026, 0, 1)), surface: 'g1', route: 'GET /api/v1/memories/:id',
    statusClass: 2, keyId: 'key_1', userId: 'u1', requests: 1, latencySumMs: 12.5, latencyMaxMs: 12.5, histogram: { 22: 1 },
    bytesIn: 0, bytesOut: 2048, ...over,
  };
}

export function describeStorageContract(name: string, open: () => Promise<Storage>, extras: ContractExtras = {}): void {
  describe(`storage contract: ${name}`, () => {
    let storage: Storage;
    let second: Storage | null = null;
    beforeEach(async () => { storage = await open(); });
    afterEach(async () => {
      await second?.close();
      second = null;
      await storage.close();
    });
    describeMemoryMaintenanceContract(() => storage);
    describeReindexProgressContract(() => storage, extras.openSecond);
    describeMemoryLifecycleContract(() => storage);

    /** The stores concurrent callers use: this one, and a second connection to it when the adapter offers one. */
    const connections = async (): Promise<Storage[]> => {
      if (extras.openSecond && !second) second = await extras.openSecond();
      return second ? [storage, second] : [storage];
    };
    describeIngestionContract(() => storage, connections);
    describeOAuthContract(() => storage, connections);

    describe('memories', () => {
      it('stores a memory and reads it back whole', async () => {
        const m = makeMemory(scopeA, {
          title: 'Deploy notes', content: 'Use blue/green', memoryType: 'meeting', tags: ['ops', 'deploy'],
          metadata: { nested: { a: [1, 2, { b: null }] }, n: 3 }, topicId: '3f0e1c9a-1111-4a2b-8c3d-123456789abc',
        });
        await storage.memories.insert(m, vec(0));
        const got = await storage.memories.findById(scopeA, m.id);
        expect(got).toEqual(m);
      });

      it('never shows a memory to another tenant, mode or workspace', async () => {
        const m = makeMemory(scopeA);
        await storage.memories.insert(m, vec(0));
        const others: Scope[] = [scopeB, { ...scopeA, mode: 'test' }, { ...scopeA, workspace: 'other' }];
        for (const scope of others) {
          expect(await storage.memories.findById(scope, m.id)).toBeNull();
          expect(await storage.memories.findIdsByPrefix(scope, m.id.slice(0, 8), 5)).toEqual([]);
          expect(await storage.memories.recordAccess(scope, m.id, new Date())).toBeNull();
          expect(await storage.memories.update(scope, m.id, { title: 'x' }, new Date(), 'u', null)).toBeNull();
          expect(await storage.memories.delete(scope, m.id, { at: new Date(), by: 'test', reason: 'user_request' })).toBe(false);
          expect((await storage.memories.list(scope, listAll())).total).toBe(0);
          const found = await storage.memories.searchSimilar(scope, {
            vector: axisVector(DIMS, 0), modelId: MODEL, limit: 10, minCosine: -1, filter: {},
          });
          expect(found.hits).toEqual([]);
        }
        expect(await storage.memories.findById(scopeA, m.id)).not.toBeNull();
      });

      it('finds ids by prefix within the scope only', async () => {
        const a1 = makeMemory(scopeA, { id: 'abcdef01-0000-4000-8000-000000000001' });
        const a2 = makeMemory(scopeA, { id: 'abcdef01-0000-4000-8000-000000000002' });
        const b1 = makeMemory(scopeB, { id: 'abcdef02-0000-4000-8000-000000000003' });
        for (const m of [a1, a2, b1]) await storage.memories.insert(m, vec(0));
        expect(await storage.memories.findIdsByPrefix(scopeA, 'abcdef01', 10)).toEqual([a1.id, a2.id]);
        expect(await storage.memories.findIdsByPrefix(scopeA, 'abcdef01-0000-4000-8000-000000000002', 10))
          .toEqual([a2.id]);
        expect(await storage.memories.findIdsByPrefix(scopeA, 'abcdef0', 1)).toHaveLength(1);
        expect(await storage.memories.findIdsByPrefix(scopeA, 'abcdef02', 10)).toEqual([]);
        expect(await storage.memories.findIdsByPrefix(scopeB, 'abcdef0', 10)).toEqual([b1.id]);
      });

      it('counts accesses', async () => {
        const m = makeMemory(scopeA);
        await storage.memories.insert(m, vec(0));
        const t1 = new Date(Date.UTC(2026, 5, 1));
        const t2 = new Date(Date.UTC(2026, 5, 2));
        expect((await storage.memories.recordAccess(scopeA, m.id, t1))).toMatchObject({ accessCount: 1, lastAccessed: t1 });
        expect((await storage.memories.recordAccess(scopeA, m.id, t2))).toMatchObject({ accessCount: 2, lastAccessed: t2 });
      });

      it('updates only the given fields and moves updated_at forward', async () => {
        const m = makeMemory(scopeA, { tags: ['a'], metadata: { k: 1 } });
        await storage.memories.insert(m, vec(0));
        const updated = await storage.memories.update(scopeA, m.id, { content: 'new', tags: ['b', 'c'] },
          m.createdAt, 'user-2', null);
        expect(updated).toMatchObject({
          title: m.title, content: 'new', tags: ['b', 'c'], metadata: { k: 1 }, createdAt: m.createdAt,
          updatedBy: 'user-2',
        });
        expect(updated!.updatedAt.getTime()).toBeGreaterThan(m.updatedAt.getTime());
        const byTag = await storage.memories.list(scopeA, listAll({ filter: { tagsAny: ['a'] } }));
        expect(byTag.total).toBe(0);
        expect((await storage.memories.list(scopeA, listAll({ filter: { tagsAny: ['c'] } }))).total).toBe(1);
      });

      it('replaces the vector on update when given one', async () => {
        const m = makeMemory(scopeA);
        await storage.memories.insert(m, vec(0));
        const probe = { modelId: MODEL, limit: 5, minCosine: 0.8, filter: {} };
        expect((await storage.memories.searchSimilar(scopeA, { ...probe, vector: axisVector(DIMS, 0) })).total).toBe(1);
        await storage.memories.update(scopeA, m.id, { content: 'x' }, new Date(), 'u', vec(3));
        expect((await storage.memories.searchSimilar(scopeA, { ...probe, vector: axisVector(DIMS, 0) })).total).toBe(0);
        expect((await storage.memories.searchSimilar(scopeA, { ...probe, vector: axisVector(DIMS, 3) })).total).toBe(1);
      });

      it('deletes permanently, vector and tags included', async () => {
        const m = makeMemory(scopeA, { tags: ['gone'] });
        await storage.memories.insert(m, vec(1));
        expect(await storage.memories.delete(scopeA, m.id, { at: new Date(), by: 'test', reason: 'user_request' })).toBe(true);
        expect(await storage.memories.findById(scopeA, m.id)).toBeNull();
        expect(await storage.memories.delete(scopeA, m.id, { at: new Date(), by: 'test', reason: 'user_request' })).toBe(false);
        const found = await storage.memories.searchSimilar(scopeA, {
          vector: axisVector(DIMS, 1), modelId: MODEL, limit: 10, minCosine: -1, filter: {},
        });
        expect(found.total).toBe(0);
        expect((await storage.memories.list(scopeA, listAll({ filter: { tagsAny: ['gone'] } }))).total).toBe(0);
      });

      it('lists with filters, sorting and paging', async () => {
        const rows = [
          makeMemory(scopeA, { title: 'b', memoryType: 'project', tags: ['x'] }),
          makeMemory(scopeA, { title: 'c', memoryType: 'knowledge', tags: ['y'] }),
          makeMemory(scopeA, { title: 'a', memoryType: 'project', tags: ['x', 'y'] }),
        ];
        for (const m of rows) await storage.memories.insert(m, vec(0));
        await storage.memories.insert(makeMemory(scopeB, { memoryType: 'project' }), vec(0));

        const all = await storage.memories.list(scopeA, listAll({ sortOrder: 'desc' }));
        expect(all.total).toBe(3);
        expect(all.items.map((m) => m.title)).toEqual(['a', 'c', 'b']);
        expect((await storage.memories.list(scopeA, listAll({ sortBy: 'title' }))).items.map((m) => m.title))
          .toEqual(['a', 'b', 'c']);
        const page = await storage.memories.list(scopeA, listAll({ limit: 1, offset: 1 }));
        expect(page.total).toBe(3);
        expect(page.items.map((m) => m.title)).toEqual(['c']);
        const projects = await storage.memories.list(scopeA, listAll({ filter: { types: ['project'] } }));
        expect(projects.items.map((m) => m.title)).toEqual(['b', 'a']);
        const anyTag = await storage.memories.list(scopeA, listAll({ filter: { tagsAny: ['y', 'zzz'] } }));
        expect(anyTag.items.map((m) => m.title)).toEqual(['c', 'a']);
        const both = await storage.memories.list(scopeA, listAll({ filter: { types: ['knowledge'], tagsAny: ['x'] } }));
        expect(both.total).toBe(0);
      });

      it('searches by similarity: best first, thresholded, filtered, one model only', async () => {
        const close = makeMemory(scopeA, { title: 'close', tags: ['t'] });
        const near = makeMemory(scopeA, { title: 'near', memoryType: 'project' });
        const far = makeMemory(scopeA, { title: 'far' });
        const otherModel = makeMemory(scopeA, { title: 'other model' });
        await storage.memories.insert(near, vec(0, 1, 1));
        await storage.memories.insert(close, vec(0, 1, 0.1));
        await storage.memories.insert(far, vec(2));
        await storage.memories.insert(otherModel, { modelId: 'test:other-8', vector: axisVector(DIMS, 0) });

        const query = { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 10, filter: {} };
        const loose = await storage.memories.searchSimilar(scopeA, { ...query, minCosine: -1 });
        expect(loose.hits.map((h) => h.memory.title)).toEqual(['close', 'near', 'far']);
        expect(loose.total).toBe(3);
        const [first, second, third] = loose.hits;
        expect(first!.cosine).toBeCloseTo(1 / Math.sqrt(1.01), 5);
        expect(second!.cosine).toBeCloseTo(1 / Math.sqrt(2), 5);
        expect(third!.cosine).toBeCloseTo(0, 5);

        const strict = await storage.memories.searchSimilar(scopeA, { ...query, minCosine: 0.6 });
        expect(strict.hits.map((h) => h.memory.title)).toEqual(['close', 'near']);
        const limited = await storage.memories.searchSimilar(scopeA, { ...query, minCosine: -1, limit: 1 });
        expect(limited.hits.map((h) => h.memory.title)).toEqual(['close']);
        expect(limited.total).toBe(3);
        const typed = await storage.memories.searchSimilar(scopeA,
          { ...query, minCosine: -1, filter: { types: ['project'] } });
        expect(typed.hits.map((h) => h.memory.title)).toEqual(['near']);
        const tagged = await storage.memories.searchSimilar(scopeA,
          { ...query, minCosine: -1, filter: { tagsAny: ['t'] } });
        expect(tagged.hits.map((h) => h.memory.title)).toEqual(['close']);
      });

      it(`is exact below the exact-scan size (${EXACT_SIMILARITY_SCAN_MAX} vectors): the true best hits and the true total`, async () => {
        // Cosines to the query fall with i (1/sqrt(1 + w²), w = i/8), inserted out of order, half of them tagged.
        const n = 48;
        const weight = (i: number) => i / 8;
        const cosine = (i: number) => 1 / Math.sqrt(1 + weight(i) ** 2);
        const order = Array.from({ length: n }, (_, i) => (i * 29) % n);
        const ids = new Map<number, string>();
        for (const i of order) {
          const m = makeMemory(scopeA, { tags: i % 2 ? ['odd'] : [] });
          ids.set(i, m.id);
          await storage.memories.insert(m, vec(0, 1, weight(i)));
        }
        const query = { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 5 };
        const cases: [number, MemoryFilter][] = [[0.6, {}], [0.8, {}], [0.6, { tagsAny: ['odd'] }], [-1, {}]];
        for (const [minCosine, filter] of cases) {
          const expected = [...ids.keys()]
            .filter((i) => cosine(i) >= minCosine && (!filter.tagsAny || i % 2 === 1))
            .sort((a, b) => cosine(b) - cosine(a));
          const found = await storage.memories.searchSimilar(scopeA, { ...query, minCosine, filter });
          expect(found.total, `${minCosine} ${JSON.stringify(filter)}`).toBe(expected.length);
          expect(found.hits.map((h) => h.memory.id)).toEqual(expected.slice(0, 5).map((i) => ids.get(i)));
          const everything = await storage.memories.searchSimilar(scopeA, { ...query, minCosine, filter, limit: 100 });
          expect(everything.hits.map((h) => h.memory.id)).toEqual(expected.map((i) => ids.get(i)));
        }
      });

      it('filters similarity exactly for broad and narrow tags, tags crowded in another workspace, and tags with more', async () => {
        // Issue 39: a store may read a tag filter from its tag index or walk the scope; hits and totals stay exact.
        const n = 60;
        const weight = (i: number) => i / 8;
        const cosine = (i: number) => 1 / Math.sqrt(1 + weight(i) ** 2);
        const tagsOf = (i: number) => [
          ...(i % 2 === 0 ? ['broad'] : []), ...(i % 20 === 3 ? ['narrow'] : []), ...(i % 3 === 0 ? ['third'] : []),
          ...(i % 5 === 0 ? ['crowd'] : []),
        ];
        const typeOf = (i: number) => (i % 4 === 0 ? 'project' : 'context');
        const ids = new Map<number, string>();
        for (const i of Array.from({ length: n }, (_, j) => (j * 29) % n)) {
          const m = makeMemory(scopeA, { tags: tagsOf(i), memoryType: typeOf(i) });
          ids.set(i, m.id);
          await storage.memories.insert(m, vec(0, 1, weight(i)));
        }
        // Another workspace holds far more rows tagged `crowd` than scopeA has memories, and a few tagged `broad`.
        await storage.memories.applyAtomically(scopeB, Array.from({ length: 3 * n }, (_, j) => ({
          kind: 'insert' as const, memory: makeMemory(scopeB, { tags: j < 10 ? ['crowd', 'broad'] : ['crowd'], memoryType: 'project' }),
          vector: vec(0),
        })));
        const matches = (i: number, f: MemoryFilter) => (!f.tagsAny || f.tagsAny.some((t) => tagsOf(i).includes(t)))
          && (!f.tagsAll || f.tagsAll.every((t) => tagsOf(i).includes(t))) && (!f.types || f.types.includes(typeOf(i)));
        const filters: MemoryFilter[] = [
          { tagsAny: ['broad'] }, { tagsAny: ['narrow'] }, { tagsAny: ['broad', 'narrow'] }, { tagsAny: ['crowd'] },
          { tagsAny: ['missing'] }, { tagsAll: ['broad', 'third'] }, { tagsAll: ['narrow'] }, { tagsAll: ['crowd', 'broad'] },
          { tagsAny: ['broad'], types: ['project'] }, { tagsAny: ['crowd'], types: ['project'] },
          { tagsAll: ['third', 'broad'], tagsAny: ['crowd', 'narrow'] }, { types: ['project'] },
        ];
        for (const minCosine of [-1, 0.6]) {
          for (const filter of filters) {
            const expected = [...ids.keys()].filter((i) => cosine(i) >= minCosine && matches(i, filter))
              .sort((a, b) => cosine(b) - cosine(a));
            const query = { vector: axisVector(DIMS, 0), modelId: MODEL, minCosine, filter };
            const found = await storage.memories.searchSimilar(scopeA, { ...query, limit: 5 });
            expect(found.total, `${minCosine} ${JSON.stringify(filter)}`).toBe(expected.length);
            expect(found.hits.map((h) => h.memory.id)).toEqual(expected.slice(0, 5).map((i) => ids.get(i)));
            const everything = await storage.memories.searchSimilar(scopeA, { ...query, limit: 100 });
            expect(everything.hits.map((h) => h.memory.id)).toEqual(expected.map((i) => ids.get(i)));
          }
        }
      });

      it('answers the same after warmUp(), and keeps up with writes made during and after it', async () => {
        const query = { vector: axisVector(DIMS, 5), modelId: MODEL, limit: 10, minCosine: 0.8, filter: {} };
        const first = makeMemory(scopeA);
        await storage.memories.insert(first, vec(5));
        await storage.memories.insert(makeMemory(scopeB), vec(5));
        const warming = storage.warmUp();
        const during = makeMemory(scopeA);
        await storage.memories.insert(during, vec(5));
        await warming;
        const after = makeMemory(scopeA);
        await storage.memories.insert(after, vec(5));
        const found = await storage.memories.searchSimilar(scopeA, query);
        expect(found.total).toBe(3);
        expect(new Set(found.hits.map((h) => h.memory.id))).toEqual(new Set([first.id, during.id, after.id]));
        expect((await storage.memories.searchSimilar(scopeB, query)).total).toBe(1);
      });

      it('finds on one connection every vector change committed on another, at once (nodes sharing a store)', async () => {
        const [writer, reader = writer] = await connections();
        const search = (vector: Float32Array, modelId = MODEL, filter: MemoryFilter = {}) => reader!.memories.searchSimilar(scopeA,
          { vector, modelId, limit: 10, minCosine: 0.9, filter });
        const ids = async (vector: Float32Array, modelId?: string, filter?: MemoryFilter) =>
          (await search(vector, modelId, filter)).hits.map((h) => h.memory.id).sort();
        const kept = makeMemory(scopeA, { tags: ['kept'] });
        const moved = makeMemory(scopeA);
        const gone = makeMemory(scopeA);
        await writer!.memories.insert(kept, vec(1));
        // The reader holds the workspace's index from here on; each change below must reach it before its next search.
        expect(await ids(axisVector(DIMS, 1))).toEqual([kept.id]);
        await writer!.memories.applyAtomically(scopeA, [
          { kind: 'insert', memory: moved, vector: vec(1) }, { kind: 'insert', memory: gone, vector: vec(1) }]);
        expect(await ids(axisVector(DIMS, 1))).toEqual([kept.id, moved.id, gone.id].sort());
        expect(await ids(axisVector(DIMS, 1), MODEL, { tagsAny: ['kept'] })).toEqual([kept.id]);
        await writer!.memories.update(scopeA, moved.id, { content: 'moved' }, new Date(), 'u', vec(2));
        await writer!.memories.delete(scopeA, gone.id, { at: new Date(), by: 'u', reason: 'test' });
        expect(await ids(axisVector(DIMS, 1))).toEqual([kept.id]);
        expect(await ids(axisVector(DIMS, 2))).toEqual([moved.id]);
        // A reindex's vectors of another model and width, then the old model's dropped.
        const other = { modelId: 'test:other-4', vector: axisVector(4, 3) };
        expect(await writer!.memories.putVectors([{ scope: scopeA, id: kept.id, title: kept.title, content: kept.content, vector: other }])).toBe(1);
        expect(await ids(axisVector(4, 3), other.modelId)).toEqual([kept.id]);
        await writer!.memories.dropOtherVectors({ tenantId: scopeA.tenantId }, other.modelId);
        expect(await ids(axisVector(DIMS, 1))).toEqual([]);
        expect(await ids(axisVector(4, 3), other.modelId)).toEqual([kept.id]);
      });

      it('sees memories inserted after the first search', async () => {
        const query = { vector: axisVector(DIMS, 4), modelId: MODEL, limit: 10, minCosine: 0.8, filter: {} };
        expect((await storage.memories.searchSimilar(scopeA, query)).total).toBe(0);
        await storage.memories.insert(makeMemory(scopeA), vec(4));
        expect((await storage.memories.searchSimilar(scopeA, query)).total).toBe(1);
      });
    });

    describe('keyword search, filters and suggestions', () => {
      it('ranks by BM25, keeps in step with updates and deletes, and stays in scope', async () => {
        const deploy = makeMemory(scopeA, { title: 'Deploy guide', content: 'How we deploy services to production' });
        const mention = makeMemory(scopeA, { title: 'Notes', content: 'Lunch, then a quick deploy, then more lunch' });
        const other = makeMemory(scopeA, { title: 'Cooking', content: 'Pasta with tomatoes' });
        const foreign = makeMemory(scopeB, { title: 'Deploy deploy deploy', content: 'deploy' });
        for (const m of [deploy, mention, other, foreign]) await storage.memories.insert(m, vec(0));
        const search = (terms: string[], scope: Scope = scopeA, filter = {}) =>
          storage.memories.searchKeyword(scope, { terms, limit: 10, filter });

        const found = await search(['deploy']);
        expect(found.hits.map((h) => h.memory.title)).toEqual(['Deploy guide', 'Notes']);
        expect(found.total).toBe(2);
        expect(found.hits[0]!.relevance).toBeGreaterThan(found.hits[1]!.relevance);
        expect((await search(['deploying'])).total).toBe(2); // stemmed
        expect((await search(['pasta', 'production'])).total).toBe(2); // any term
        expect((await search(['deploy'], scopeB)).hits.map((h) => h.memory.id)).toEqual([foreign.id]);
        expect((await search([])).total).toBe(0);

        await storage.memories.update(scopeA, other.id, { content: 'Deploy the pasta' }, new Date(), 'u', null);
        expect((await search(['deploy'])).total).toBe(3);
        await storage.memories.update(scopeA, other.id, { tags: ['tomato'] }, new Date(), 'u', null);
        expect((await search(['tomato'])).hits.map((h) => h.memory.id)).toEqual([other.id]);
        await storage.memories.delete(scopeA, deploy.id, { at: new Date(), by: 'test', reason: 'user_request' });
        expect((await search(['deploy'])).hits.map((h) => h.memory.id).sort()).toEqual([mention.id, other.id].sort());
      });

      it('caps keyword candidates per term at the newest memories, with exact idf and a lower-bound total', async () => {
        // Six memories hold "zebra" (oldest first), one also "okapi"; a neighbouring scope holds more "zebra".
        const zebras = Array.from({ length: 6 }, (_, i) => makeMemory(scopeA, {
          title: `Zebra ${i}`, content: i === 1 ? 'zebra okapi' : `zebra ${'filler '.repeat(i)}`,
        }));
        for (const m of zebras) await storage.memories.insert(m, vec(0));
        await storage.memories.insert(makeMemory(scopeA, { title: 'Lion', content: 'savanna' }), vec(0));
        for (let i = 0; i < 4; i++) await storage.memories.insert(makeMemory(scopeB, { title: 'zebra', content: 'zebra' }), vec(0));
        const search = (terms: string[], cap?: number, filter = {}) =>
          storage.memories.searchKeyword(scopeA, { terms, limit: 10, filter, candidatesPerTerm: cap });

        const exact = await search(['zebra', 'okapi']);
        expect(exact.total).toBe(6);
        expect(exact.hits).toHaveLength(6);
        // Capped at 3 per term: "zebra" scores only its 3 newest memories of the scope (other scopes' never count),
        // "okapi" (under the cap) still brings its old memory, and the total is the capped word's document count.
        const capped = await search(['zebra', 'okapi'], 3);
        expect(capped.hits.map((h) => h.memory.id).sort()).toEqual([zebras[1]!, zebras[3]!, zebras[4]!, zebras[5]!].map((m) => m.id).sort());
        expect(capped.total).toBe(6);
        // The capped word's idf is computed from all its holders, so the scores of its kept memories are exact; the
        // old memory found through "okapi" is scored on "okapi" alone (its "zebra" was past the cap).
        const exactScore = new Map(exact.hits.map((h) => [h.memory.id, h.relevance]));
        for (const h of capped.hits) {
          if (h.memory.id === zebras[1]!.id) expect(h.relevance).toBeLessThan(exactScore.get(h.memory.id)!);
          else expect(h.relevance).toBeCloseTo(exactScore.get(h.memory.id)!, 10);
        }
        // With a filter, the total counts only the filtered candidates that were scored.
        const filtered = await search(['zebra'], 3, { createdFrom: new Date(0) });
        expect(filtered.hits).toHaveLength(3);
        expect(filtered.total).toBe(3);
        // A phrase (a word the tokenizer splits in two) beside the capped word: the old memory holding the phrase comes
        // back through it, the word still scores its 3 newest only, and the total stays the word's document count.
        const withPhrase = await search(['zebra okapi', 'zebra'], 3);
        expect(withPhrase.hits.map((h) => h.memory.id).sort()).toEqual([zebras[1]!, zebras[3]!, zebras[4]!, zebras[5]!].map((m) => m.id).sort());
        expect(withPhrase.total).toBe(6);
        expect((await search(['zebra okapi'], 3)).hits.map((h) => h.memory.id)).toEqual([zebras[1]!.id]);
        // At or above the document count, the cap changes nothing.
        expect((await search(['zebra', 'okapi'], 6)).hits.map((h) => h.memory.id)).toEqual(exact.hits.map((h) => h.memory.id));
      });

      it('scores keywords from the scope alone: writes in another tenant, mode or workspace move no score', async () => {
        const mine = [
          makeMemory(scopeA, { title: 'Deploy guide', content: 'How we deploy services to production', tags: ['ops'] }),
          makeMemory(scopeA, { title: 'Notes', content: 'Lunch, then a quick deploy, then pasta and more lunch' }),
          makeMemory(scopeA, { title: 'Cooking', content: 'Pasta with tomatoes and basil, twenty minutes' }),
          makeMemory(scopeA, { title: 'Travel', content: 'Train to Lyon on Friday' }),
          makeMemory(scopeA, { title: 'Books', content: 'Finish the novel before the club meets' }),
        ];
        for (const m of mine) await storage.memories.insert(m, vec(0));
        const scores = async () => (await storage.memories.searchKeyword(scopeA, { terms: ['deploy', 'pasta', 'tomato'], limit: 10, filter: {} }))
          .hits.map((h) => ({ id: h.memory.id, score: h.relevance }));
        const before = await scores();
        expect(before).toHaveLength(3);

        // Many memories holding the query words (which would change their document frequencies) and long ones
        // without them (which would change the average length), in each neighbouring scope; then edits and deletes.
        const elsewhere: Scope[] = [scopeB, { ...scopeA, mode: 'test' }, { ...scopeA, workspace: 'other' }];
        for (const scope of elsewhere) {
          const theirs = Array.from({ length: 20 }, (_, i) => makeMemory(scope, {
            title: i % 2 ? 'deploy pasta' : 'Tomato report',
            content: `${'deploy tomato pasta '.repeat(i % 4)}${'unrelated filler words '.repeat(i * 3)}`,
            tags: i % 3 ? ['deploy'] : [],
          }));
          for (const m of theirs) await storage.memories.insert(m, vec(0));
          expect(await scores(), JSON.stringify(scope)).toEqual(before);
          await storage.memories.update(scope, theirs[0]!.id, { content: 'pasta '.repeat(50) }, new Date(), 'u', null);
          await storage.memories.delete(scope, theirs[1]!.id, { at: new Date(), by: 'test', reason: 'user_request' });
          expect(await scores(), JSON.stringify(scope)).toEqual(before);
        }

        // The same kind of write inside the scope does move them: the statistics are the scope's own, and live.
        await storage.memories.insert(makeMemory(scopeA, { title: 'More pasta', content: 'deploy pasta '.repeat(10) }), vec(0));
        const after = await scores();
        expect(after.find((h) => h.id === mine[2]!.id)!.score).not.toBe(before.find((h) => h.id === mine[2]!.id)!.score);
      });

      it('applies tag, date and metadata filters to list, keyword and similarity search alike', async () => {
        const day = (d: number) => new Date(Date.UTC(2026, 2, d));
        const rows = [
          makeMemory(scopeA, { title: 'one report', tags: ['a', 'b'], createdAt: day(1), metadata: { speaker: 'Ann', n: 1, flag: true, source: { kind: 'chat' } } }),
          makeMemory(scopeA, { title: 'two report', tags: ['a'], createdAt: day(5), metadata: { speaker: ['Bo', 'Ann'], n: 2, flag: false } }),
          makeMemory(scopeA, { title: 'three report', tags: ['b'], createdAt: day(9), metadata: { speaker: 'Cy', n: 1, source: { kind: 'mail' } } }),
        ];
        for (const m of rows) await storage.memories.insert(m, vec(0));
        const cases: [MemoryFilter, string[]][] = [
          [{ tagsAll: ['a', 'b'] }, ['one report']],
          [{ tagsAny: ['b'] }, ['one report', 'three report']],
          [{ createdFrom: day(5) }, ['two report', 'three report']],
          [{ createdTo: day(5) }, ['one report', 'two report']],
          [{ createdFrom: day(2), createdTo: day(8) }, ['two report']],
          [{ metadata: { speaker: 'Ann' } }, ['one report', 'two report']],
          [{ metadata: { speaker: ['Cy', 'Bo'] } }, ['two report', 'three report']],
          [{ metadata: { n: 1 } }, ['one report', 'three report']],
          [{ metadata: { flag: true } }, ['one report']],
          [{ metadata: { 'source.kind': 'mail' } }, ['three report']],
          [{ metadata: { speaker: 'Ann', n: 2 } }, ['two report']],
          [{ metadata: { missing: 'x' } }, []],
          [{ metadata: { speaker: [] } }, []],
        ];
        for (const [filter, expected] of cases) {
          const listed = await storage.memories.list(scopeA, listAll({ filter }));
          expect(listed.items.map((m) => m.title), JSON.stringify(filter)).toEqual(expected);
          const keyword = await storage.memories.searchKeyword(scopeA, { terms: ['report'], limit: 10, filter });
          expect(keyword.hits.map((h) => h.memory.title).sort(), JSON.stringify(filter)).toEqual([...expected].sort());
          const similar = await storage.memories.searchSimilar(scopeA, { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 10, minCosine: -1, filter });
          expect(similar.hits.map((h) => h.memory.title).sort(), JSON.stringify(filter)).toEqual([...expected].sort());
        }
        await expect(storage.memories.list(scopeA, listAll({ filter: { metadata: { "x') OR 1=1 --": 'y' } } }))).rejects.toThrow();
      });

      it('returns stored vectors on request and by id, per model and scope', async () => {
        const m = makeMemory(scopeA);
        await storage.memories.insert(m, vec(5));
        const found = await storage.memories.searchSimilar(scopeA, { vector: axisVector(DIMS, 5), modelId: MODEL, limit: 1, minCosine: -1, filter: {}, withVectors: true });
        expect(Array.from(found.hits[0]!.vector!)).toEqual(Array.from(axisVector(DIMS, 5)));
        expect(Array.from((await storage.memories.vectorsOf(scopeA, [m.id, 'nope'], MODEL)).get(m.id)!)).toEqual(Array.from(axisVector(DIMS, 5)));
        expect((await storage.memories.vectorsOf(scopeA, [m.id], 'other-model')).size).toBe(0);
        expect((await storage.memories.vectorsOf(scopeB, [m.id], MODEL)).size).toBe(0);
      });

      it('suggests tags and titles from the scope, most frequent first', async () => {
        await storage.memories.insert(makeMemory(scopeA, { title: 'Planning Q3', tags: ['planning', 'plans'] }), vec(0));
        await storage.memories.insert(makeMemory(scopeA, { title: 'Planning Q3', tags: ['planning'] }), vec(0));
        await storage.memories.insert(makeMemory(scopeA, { title: 'Sprint planning', tags: ['sprint'] }), vec(0));
        await storage.memories.insert(makeMemory(scopeB, { title: 'Planning secrets', tags: ['planet'] }), vec(0));
        expect(await storage.memories.suggestTags(scopeA, 'pla', 10)).toEqual([{ text: 'planning', frequency: 2 }, { text: 'plans', frequency: 1 }]);
        expect(await storage.memories.suggestTags(scopeA, '%', 10)).toEqual([]);
        expect(await storage.memories.suggestTitles(scopeA, 'plan', 10)).toEqual([
          { text: 'Planning Q3', frequency: 2 }, { text: 'Sprint planning', frequency: 1 }]);
        expect(await storage.memories.suggestTitles(scopeA, 'plan', 1)).toHaveLength(1);
      });

      it('logs searches and suggests past queries per scope', async () => {
        const entry = (scope: Scope, query: string, at: number) => ({
          scope, userId: 'u', surface: 'g4', kind: 'semantic' as const, query, resultsCount: 1, executionMs: 2.5,
          avgScore: 0.8, filters: { tags: ['x'] }, at: new Date(at),
        });
        await storage.searchLog.appendMany([entry(scopeA, 'Deploy  pipeline', 1)]);
        await storage.searchLog.appendMany([entry(scopeA, 'deploy pipeline', 2)]);
        await storage.searchLog.appendMany([entry(scopeA, 'deploy keys', 3)]);
        await storage.searchLog.appendMany([entry(scopeB, 'deploy secrets', 4)]);
        // A batch (the search recorder's) lands whole, across scopes; an empty one writes nothing.
        await storage.searchLog.appendMany([entry(scopeA, 'deploy keys', 5), entry(scopeB, 'deploy secrets', 6), entry(scopeA, 'release', 7)]);
        await storage.searchLog.appendMany([]);
        // Text that array and JSON literals must escape, inside a batch.
        const awkward = 'say "hi", {a\\b} \'NULL\'';
        await storage.searchLog.appendMany([entry(scopeA, 'warm up', 8), { ...entry(scopeA, awkward, 9), filters: { tags: [awkward, 'NULL', ''] }, avgScore: null }]);
        expect(await storage.searchLog.suggestQueries(scopeA, 'say', 5)).toEqual([{ text: awkward.toLowerCase(), frequency: 1 }]);
        expect(await storage.searchLog.suggestQueries(scopeA, 'rel', 5)).toEqual([{ text: 'release', frequency: 1 }]);
        expect(await storage.searchLog.suggestQueries(scopeB, 'dep', 5)).toEqual([{ text: 'deploy secrets', frequency: 2 }]);
        expect(await storage.searchLog.suggestQueries(scopeA, 'DEP', 5)).toEqual([
          { text: 'deploy keys', frequency: 2 }, { text: 'deploy pipeline', frequency: 2 }]);
        expect(await storage.searchLog.suggestQueries(scopeA, 'x', 5)).toEqual([]);
      });

      it('sums up searches per scope and time range, with per-bucket counts', async () => {
        const t0 = Date.UTC(2026, 0, 5); // a Monday
        const H = 3_600_000;
        const log = (scope: Scope, query: string, hour: number, results: number, ms: number, avgScore: number | null) =>
          storage.searchLog.appendMany([{
            scope, userId: 'u', surface: 'g4', kind: query ? 'semantic' : 'vector', query, resultsCount: results, executionMs: ms,
            avgScore, filters: {}, at: new Date(t0 + hour * H),
          }]);
        await log(scopeA, 'Deploy  Pipeline', 0, 2, 10, 0.8);
        await log(scopeA, 'deploy pipeline', 1, 4, 20, 0.6);
        await log(scopeA, 'deploy pipeline', 1.5, 0, 30, null);
        await log(scopeA, 'lunch', 3, 1, 40, 0.9);
        await log(scopeA, '', 3.5, 3, 100, 0.7); // a vector search: in the totals, not among the queries
        await log(scopeA, 'lunch', 5, 1, 1, 0.5); // at `to`: out
        await log(scopeA, 'early', -1, 1, 1, 0.5); // before `from`: out
        await log({ ...scopeA, workspace: 'w2' }, 'lunch', 1, 1, 1, 0.5);
        await log({ ...scopeA, mode: 'test' }, 'lunch', 1, 1, 1, 0.5);
        await log(scopeB, 'lunch', 1, 1, 1, 0.5);
        const slice = (from: number, to: number) => ({ start: new Date(t0 + from * H), end: new Date(t0 + to * H) });
        const stats = await storage.searchLog.stats({
          scope: scopeA, from: new Date(t0), to: new Date(t0 + 5 * H), topLimit: 10,
          buckets: [slice(-2, 0), slice(0, 1), slice(1, 2), slice(2, 3), slice(3, 6)],
        });
        expect(stats).toEqual({
          totalSearches: 5, uniqueQueries: 2, avgResults: 2, avgExecutionMs: 40, zeroResultSearches: 1,
          topQueries: [{ query: 'deploy pipeline', count: 3, avgScore: expect.closeTo(0.7, 9) }, { query: 'lunch', count: 1, avgScore: 0.9 }],
          // The first bucket lies before `from` and the last is clipped at `to`.
          buckets: [
            { searches: 0, avgExecutionMs: null }, { searches: 1, avgExecutionMs: 10 }, { searches: 2, avgExecutionMs: 25 },
            { searches: 0, avgExecutionMs: null }, { searches: 2, avgExecutionMs: 70 },
          ],
        });
        const top1 = await storage.searchLog.stats({ scope: scopeA, from: new Date(t0), to: new Date(t0 + 5 * H), topLimit: 1, buckets: [] });
        expect(top1.topQueries).toEqual([{ query: 'deploy pipeline', count: 3, avgScore: expect.closeTo(0.7, 9) }]);
        expect(top1.buckets).toEqual([]);
        expect(await storage.searchLog.stats({ scope: { ...scopeB, workspace: 'none' }, from: new Date(t0), to: new Date(t0 + H), topLimit: 10, buckets: [slice(0, 1)] }))
          .toEqual({
            totalSearches: 0, uniqueQueries: 0, avgResults: null, avgExecutionMs: null, zeroResultSearches: 0, topQueries: [],
            buckets: [{ searches: 0, avgExecutionMs: null }],
          });
        // Ties are broken alphabetically (byte order).
        await log(scopeB, 'beta', 2, 1, 1, 0.5);
        await log(scopeB, 'Alpha', 2, 1, 1, 0.5);
        const ties = await storage.searchLog.stats({ scope: scopeB, from: new Date(t0), to: new Date(t0 + 5 * H), topLimit: 10, buckets: [] });
        expect(ties.topQueries.map((q) => q.query)).toEqual(['alpha', 'beta', 'lunch']);
      });

      it('lists the queries that found nothing per scope and time range, most such searches first', async () => {
        const t0 = Date.UTC(2026, 0, 5);
        const M = 60_000;
        const entry = (scope: Scope, query: string, minute: number, results: number) => ({
          scope, userId: 'u', surface: 'g4', kind: query ? 'semantic' as const : 'vector' as const, query, resultsCount: results,
          executionMs: 1, avgScore: results > 0 ? 0.5 : null, filters: {}, at: new Date(t0 + minute * M),
        });
        const others: Scope[] = [scopeB, { ...scopeA, mode: 'test' }, { ...scopeA, workspace: 'w2' }];
        await storage.searchLog.appendMany([
          entry(scopeA, 'Quantum  Lunch', 1, 0),
          entry(scopeA, 'quantum lunch', 7, 0),
          entry(scopeA, 'quantum lunch', 8, 2), // found something: not counted
          entry(scopeA, 'zebra', 2, 0),
          entry(scopeA, 'apple', 2, 0),
          entry(scopeA, 'mango', 3, 0), // ties with apple and zebra, but seen later
          entry(scopeA, 'deploy', 4, 3), // never empty: not listed
          entry(scopeA, '', 5, 0), // a vector search has no query to list
          entry(scopeA, 'too late', 60, 0), // at `to`: out
          entry(scopeA, 'too early', -1, 0), // before `from`: out
          ...others.map((other) => entry(other, 'elsewhere', 1, 0)),
        ]);
        const range = { scope: scopeA, from: new Date(t0), to: new Date(t0 + 60 * M) };
        expect(await storage.searchLog.zeroResultQueries({ ...range, limit: 10 })).toEqual([
          { query: 'quantum lunch', count: 2, lastSeen: new Date(t0 + 7 * M) },
          { query: 'mango', count: 1, lastSeen: new Date(t0 + 3 * M) },
          { query: 'apple', count: 1, lastSeen: new Date(t0 + 2 * M) },
          { query: 'zebra', count: 1, lastSeen: new Date(t0 + 2 * M) },
        ]);
        expect((await storage.searchLog.zeroResultQueries({ ...range, limit: 2 })).map((q) => q.query)).toEqual(['quantum lunch', 'mango']);
        expect(await storage.searchLog.zeroResultQueries({ ...range, scope: scopeB, limit: 10 })).toEqual([
          { query: 'elsewhere', count: 1, lastSeen: new Date(t0 + M) }]);
        expect(await storage.searchLog.zeroResultQueries({ ...range, scope: { ...scopeB, workspace: 'none' }, limit: 10 })).toEqual([]);
      });
    });

    describe('rankings without rows, cosines and rows by id (hybrid search)', () => {
      /** Neighbouring scopes holding the same content and vectors as scopeA: none of their ids may ever show. */
      const elsewhere: Scope[] = [scopeB, { ...scopeA, mode: 'test' }, { ...scopeA, workspace: 'other' }];
      const CONTENTS = [
        ['Deploy guide', 'How we deploy services to production'],
        ['Notes', 'Lunch, then a quick deploy, then more lunch'],
        ['Cooking', 'Pasta with tomatoes and a deploy of sauce'],
        ['Travel', 'Train to Lyon on Friday'],
        ['Deploy log', 'deploy deploy rollback'],
      ] as const;

      /**
       * Five memories of scopeA on axes 0..4 (with some weight on axis 1, so none is orthogonal to the query), the
       * same five in each neighbouring scope, one of scopeA with only another model's vector, and one of scopeA
       * deleted. Returns scopeA's live ids, the foreign ids, and the other model's and the deleted memory's ids.
       */
      async function seed() {
        const mine: string[] = [];
        for (const [i, [title, content]] of CONTENTS.entries()) {
          const m = makeMemory(scopeA, { title, content, tags: i % 2 ? ['odd'] : [] });
          await storage.memories.insert(m, vec(i, i === 1 ? 2 : 1, 0.25 * (i + 1)));
          mine.push(m.id);
        }
        const foreign: string[] = [];
        for (const scope of elsewhere) {
          for (const [i, [title, content]] of CONTENTS.entries()) {
            const m = makeMemory(scope, { title, content });
            await storage.memories.insert(m, vec(i, i === 1 ? 2 : 1, 0.25 * (i + 1)));
            foreign.push(m.id);
          }
        }
        const otherModel = makeMemory(scopeA, { title: 'Deploy elsewhere', content: 'deploy' });
        await storage.memories.insert(otherModel, { modelId: 'test:other-8', vector: axisVector(DIMS, 0) });
        const deleted = makeMemory(scopeA, { title: 'Deploy gone', content: 'deploy' });
        await storage.memories.insert(deleted, vec(0));
        await storage.memories.delete(scopeA, deleted.id, { at: new Date(), by: 'test', reason: 'user_request' });
        return { mine, foreign, otherModel: otherModel.id, deleted: deleted.id };
      }

      /** The refs the store gives `scope`'s memories with a vector of `modelId` (through rankSimilar), by memory id. */
      async function refsById(scope: Scope, modelId = MODEL, dims = DIMS): Promise<Map<string, MemoryRef>> {
        const { hits } = await storage.memories.rankSimilar(scope, { vector: axisVector(dims, 0), modelId, limit: 100, minCosine: -1, filter: {} });
        const read = await storage.memories.findByRefs(scope, hits.map((h) => h.ref));
        return new Map(hits.map((h) => [read.get(h.ref)!.id, h.ref]));
      }

      it('ranks as searchSimilar and searchKeyword do, by ref (same hits, order, scores, totals), in scope only', async () => {
        const { otherModel } = await seed();
        const cases: [number, number, MemoryFilter][] = [[-1, 10, {}], [-1, 2, {}], [0.6, 10, {}], [-1, 10, { tagsAny: ['odd'] }]];
        for (const [minCosine, limit, filter] of cases) {
          const query = { vector: axisVector(DIMS, 0, 1, 0.5), modelId: MODEL, limit, minCosine, filter };
          const full = await storage.memories.searchSimilar(scopeA, query);
          const ranked = await storage.memories.rankSimilar(scopeA, query);
          // Each ref reads back (findByRefs, in the scope) as the memory searchSimilar returns at that place.
          const rows = await storage.memories.findByRefs(scopeA, ranked.hits.map((h) => h.ref));
          expect({ hits: ranked.hits.map((h) => ({ id: rows.get(h.ref)?.id, cosine: h.cosine })), total: ranked.total }, JSON.stringify([minCosine, limit, filter])).toEqual({
            hits: full.hits.map((h) => ({ id: h.memory.id, cosine: h.cosine })), total: full.total,
          });
          expect(ranked.hits.length).toBeGreaterThan(0);

          const words = { terms: ['deploy', 'pasta'], limit, filter };
          const keyword = await storage.memories.searchKeyword(scopeA, words);
          const rankedKeyword = await storage.memories.rankKeyword(scopeA, words);
          const keywordRows = await storage.memories.findByRefs(scopeA, rankedKeyword.hits.map((h) => h.ref));
          expect({
            hits: rankedKeyword.hits.map((h) => ({ id: keywordRows.get(h.ref)?.id, relevance: h.relevance, coverage: h.coverage })), total: rankedKeyword.total,
          }, JSON.stringify([limit, filter])).toEqual({
            hits: keyword.hits.map((h) => ({ id: h.memory.id, relevance: h.relevance, coverage: h.coverage })), total: keyword.total,
          });
          expect(rankedKeyword.hits.length).toBeGreaterThan(0);
          // Every ref reads back in this scope: none names a memory of another scope, or one deleted.
          expect(rows.size).toBe(ranked.hits.length);
          expect(keywordRows.size).toBe(rankedKeyword.hits.length);
          expect([...rows.values()].map((m) => m.id)).not.toContain(otherModel);
          // A memory both legs find has one ref.
          for (const h of rankedKeyword.hits) {
            const same = ranked.hits.find((r) => rows.get(r.ref)?.id === keywordRows.get(h.ref)?.id);
            if (same) expect(same.ref).toBe(h.ref);
          }
        }
        expect((await storage.memories.rankKeyword(scopeA, { terms: ['deploy'], limit: 10, filter: {} })).total).toBe(5);
      });

      it('scores chosen memories as similarity search does (cosinesOf): scope, model and width only', async () => {
        const { mine, foreign } = await seed();
        const refs = await refsById(scopeA);
        expect(refs.size).toBe(mine.length);
        const mineRefs = mine.map((id) => refs.get(id)!);
        const otherModelRef = [...(await refsById(scopeA, 'test:other-8')).values()][0]!;
        const foreignRefs = (await Promise.all(elsewhere.map(async (scope) => [...(await refsById(scope)).values()]))).flat();
        expect(foreignRefs.length).toBe(foreign.length);
        const vector = axisVector(DIMS, 0, 3, 0.3);
        const asked = [...mineRefs, ...foreignRefs, otherModelRef, 'no-such-ref', -1, 2 ** 40];
        // Before any similarity search with this query, after one, and after an update: each time the cosines
        // similarity search gives, to the last bit.
        const before = await storage.memories.cosinesOf(scopeA, asked, { vector, modelId: MODEL });
        const expected = async () => new Map((await storage.memories.rankSimilar(scopeA,
          { vector, modelId: MODEL, limit: 100, minCosine: -1, filter: {} })).hits.map((h) => [h.ref, h.cosine]));
        const searched = await expected();
        expect(searched.size).toBe(mine.length);
        expect(before).toEqual(searched);
        expect(await storage.memories.cosinesOf(scopeA, asked, { vector, modelId: MODEL })).toEqual(searched);
        expect(before.get(mineRefs[0]!)).toBeCloseTo(1 / Math.sqrt(1.0625 * 1.09), 6);

        await storage.memories.update(scopeA, mine[3]!, { title: 'moved' }, new Date(), 'u', vec(0));
        const updated = await storage.memories.cosinesOf(scopeA, [mineRefs[3]!], { vector, modelId: MODEL });
        expect(updated.get(mineRefs[3]!)).toBeCloseTo(1 / Math.sqrt(1.09), 6);
        expect(updated.get(mineRefs[3]!)).toBe((await expected()).get(mineRefs[3]!));

        // Another model, another width, another scope, nothing asked, an all-zero query.
        expect((await storage.memories.cosinesOf(scopeA, asked, { vector, modelId: 'test:other-8' })).get(otherModelRef)).toBeCloseTo(1 / Math.sqrt(1.09), 6);
        expect((await storage.memories.cosinesOf(scopeA, asked, { vector, modelId: 'test:other-8' })).size).toBe(1);
        expect((await storage.memories.cosinesOf(scopeA, mineRefs, { vector: axisVector(DIMS * 2, 0), modelId: MODEL })).size).toBe(0);
        expect((await storage.memories.cosinesOf(scopeB, mineRefs, { vector, modelId: MODEL })).size).toBe(0);
        expect((await storage.memories.cosinesOf(scopeA, [], { vector, modelId: MODEL })).size).toBe(0);
        const zero = await storage.memories.cosinesOf(scopeA, mineRefs, { vector: new Float32Array(DIMS), modelId: MODEL });
        expect([...zero.values()]).toEqual(mine.map(() => 0));
      });

      it('bounds those cosines (cosineEstimatesOf): each exact cosine within its error, in scope, model and width only', async () => {
        const { mine } = await seed();
        const refs = await refsById(scopeA);
        const mineRefs = mine.map((id) => refs.get(id)!);
        const foreignRefs = (await Promise.all(elsewhere.map(async (scope) => [...(await refsById(scope)).values()]))).flat();
        const otherModelRef = [...(await refsById(scopeA, 'test:other-8')).values()][0]!;
        const asked = [...mineRefs, ...foreignRefs, otherModelRef, 'no-such-ref', -1];
        const check = async (vector: Float32Array) => {
          const exact = await storage.memories.cosinesOf(scopeA, asked, { vector, modelId: MODEL });
          // The narrowest bounds (without `sharpen`, or for every ref it names), and the widest the store gives first
          // (a store with one level gives the same), each holding the exact one.
          const named: MemoryRef[][] = [];
          const everyRef = (bounds: ReadonlyMap<MemoryRef, CosineEstimate>) => { named.push([...bounds.keys()]); return [...bounds.keys()]; };
          const noRef = (bounds: ReadonlyMap<MemoryRef, CosineEstimate>) => { named.push([...bounds.keys()]); return []; };
          for (const [sharpen, widest] of [[undefined, 0.01], [everyRef, 0.01], [noRef, 0.1]] as const) {
            const estimates = await storage.memories.cosineEstimatesOf(scopeA, asked, { vector, modelId: MODEL }, sharpen);
            expect([...estimates.keys()].sort()).toEqual([...exact.keys()].sort());
            for (const [ref, e] of estimates) {
              expect(e.error).toBeGreaterThanOrEqual(0);
              expect(e.error).toBeLessThan(widest);
              expect(Math.abs(exact.get(ref)! - e.cosine)).toBeLessThanOrEqual(e.error);
            }
          }
          // `sharpen`, when a store asks it at all, is asked once about refs of this scope it has bounds for.
          for (const refs of named.splice(0)) expect(refs.every((ref) => exact.has(ref))).toBe(true);
        };
        await check(axisVector(DIMS, 0, 3, 0.3));
        await check(axisVector(DIMS, 2, 5, -0.7));
        // After an update, the estimate bounds the new vector's cosine.
        await storage.memories.update(scopeA, mine[3]!, { title: 'moved' }, new Date(), 'u', vec(2, 1, 0.9));
        await check(axisVector(DIMS, 2, 1, 0.4));
        expect((await storage.memories.cosineEstimatesOf(scopeB, mineRefs, { vector: axisVector(DIMS, 0), modelId: MODEL })).size).toBe(0);
        expect((await storage.memories.cosineEstimatesOf(scopeA, [], { vector: axisVector(DIMS, 0), modelId: MODEL })).size).toBe(0);
        const zero = await storage.memories.cosineEstimatesOf(scopeA, mineRefs, { vector: new Float32Array(DIMS), modelId: MODEL });
        expect([...zero.values()].map((e) => e.cosine)).toEqual(mine.map(() => 0));
      });

      it('reads memories by ref, in scope only (findByRefs)', async () => {
        const { mine, foreign, otherModel } = await seed();
        const refs = await refsById(scopeA);
        const otherModelRef = [...(await refsById(scopeA, 'test:other-8')).values()][0]!;
        const foreignRefs = (await Promise.all(elsewhere.map(async (scope) => [...(await refsById(scope)).values()]))).flat();
        const order = [refs.get(mine[3]!)!, otherModelRef, foreignRefs[0]!, refs.get(mine[0]!)!, 'no-such-ref', -1, refs.get(mine[4]!)!];
        const found = await storage.memories.findByRefs(scopeA, order);
        expect([...found.entries()].map(([ref, m]) => [ref, m.id]).sort()).toEqual(
          [[refs.get(mine[3]!)!, mine[3]!], [otherModelRef, otherModel], [refs.get(mine[0]!)!, mine[0]!], [refs.get(mine[4]!)!, mine[4]!]].sort());
        expect(found.get(refs.get(mine[3]!)!)).toEqual(await storage.memories.findById(scopeA, mine[3]!));
        expect(foreign).not.toContain(found.get(foreignRefs[0]!)?.id);
        for (const scope of elsewhere) expect((await storage.memories.findByRefs(scope, [...refs.values()])).size).toBe(0);
        expect((await storage.memories.findByRefs(scopeA, [])).size).toBe(0);
      });
    });

    describe('topics and client ids', () => {
      const topic = (scope: Scope, over: Partial<Topic> = {}): Topic => ({
        id: randomUUID(), scope, name: 'T', description: null, parentId: null, metadata: {},
        createdAt: new Date(Date.UTC(2026, 0, 1)), updatedAt: new Date(Date.UTC(2026, 0, 1)), createdBy: 'u', ...over,
      });

      it('stores topics per scope, refuses duplicate names under one parent, and deletes with care', async () => {
        const root = topic(scopeA, { name: 'Root', metadata: { a: 1 } });
        const child = topic(scopeA, { name: 'Child', parentId: root.id });
        const grandchild = topic(scopeA, { name: 'Grandchild', parentId: child.id });
        for (const t of [root, child, grandchild]) await storage.topics.insert(t);
        expect(await storage.topics.findById(scopeA, root.id)).toEqual(root);
        expect(await storage.topics.findById(scopeB, root.id)).toBeNull();
        await expect(storage.topics.insert(topic(scopeA, { name: 'Root' }))).rejects.toMatchObject({ code: 'CONFLICT' });
        await storage.topics.insert(topic(scopeA, { name: 'Root', parentId: root.id }));
        await storage.topics.insert(topic(scopeB, { name: 'Root' }));
        expect((await storage.topics.list(scopeA, { limit: 2, offset: 0 })).total).toBe(4);
        expect((await storage.topics.listAll(scopeB)).map((t) => t.name)).toEqual(['Root']);

        const updated = await storage.topics.update(scopeA, child.id, { name: 'Kid', metadata: { b: 2 } }, new Date(Date.UTC(2026, 0, 1)));
        expect(updated).toMatchObject({ name: 'Kid', metadata: { b: 2 }, parentId: root.id });
        expect(updated!.updatedAt.getTime()).toBeGreaterThan(child.updatedAt.getTime());
        expect(await storage.topics.update(scopeB, child.id, { name: 'x' }, new Date())).toBeNull();

        const m = makeMemory(scopeA, { topicId: child.id });
        await storage.memories.insert(m, vec(0));
        expect(await storage.memories.countByTopic(scopeA, [child.id, root.id])).toEqual(new Map([[child.id, 1]]));
        expect((await storage.memories.list(scopeA, listAll({ filter: { topicId: child.id } }))).total).toBe(1);
        expect(await storage.topics.delete(scopeB, child.id)).toBe(false);
        expect(await storage.topics.delete(scopeA, child.id)).toBe(true);
        expect((await storage.memories.findById(scopeA, m.id))!.topicId).toBeNull();
        expect((await storage.topics.findById(scopeA, grandchild.id))!.parentId).toBe(root.id);
      });

      it('keeps client ids unique within a scope only', async () => {
        const a = makeMemory(scopeA, { clientId: 'note-1' });
        await storage.memories.insert(a, vec(0));
        expect(await storage.memories.findByClientId(scopeA, 'note-1')).toEqual(a);
        expect(await storage.memories.findByClientId(scopeB, 'note-1')).toBeNull();
        await expect(storage.memories.insert(makeMemory(scopeA, { clientId: 'note-1' }), vec(0))).rejects.toMatchObject({ code: 'CONFLICT' });
        await storage.memories.insert(makeMemory(scopeB, { clientId: 'note-1' }), vec(0));
        await storage.memories.insert(makeMemory({ ...scopeA, workspace: 'w2' }, { clientId: 'note-1' }), vec(0));
        expect((await storage.memories.list(scopeA, listAll())).total).toBe(1);
      });
    });

    describe('deduplication (content hashes)', () => {
      it('inserts unless the scope holds identical content (whitespace-normalised); other scopes are never matched', async () => {
        const first = makeMemory(scopeA, { content: 'Deploy with blue/green on Fridays' });
        expect(await storage.memories.insertUnlessDuplicate(first, vec(0))).toBeNull();
        const again = makeMemory(scopeA, { content: '  Deploy with\tblue/green \n on Fridays ' });
        expect(await storage.memories.insertUnlessDuplicate(again, vec(1))).toEqual(first);
        expect(await storage.memories.findById(scopeA, again.id)).toBeNull();
        expect((await storage.memories.list(scopeA, listAll())).total).toBe(1);
        // Case matters; other tenants, modes and workspaces keep their own copies and never see this one.
        expect(await storage.memories.insertUnlessDuplicate(makeMemory(scopeA, { content: 'deploy with blue/green on fridays' }), vec(2))).toBeNull();
        for (const scope of [scopeB, { ...scopeA, mode: 'test' as const }, { ...scopeA, workspace: 'other' }]) {
          expect(await storage.memories.findByContent(scope, first.content)).toBeNull();
          const copy = makeMemory(scope, { content: first.content });
          expect(await storage.memories.insertUnlessDuplicate(copy, vec(0))).toBeNull();
          expect(await storage.memories.findByContent(scope, first.content)).toEqual(copy);
        }
        expect(await storage.memories.findByContent(scopeA, 'Deploy with blue/green  on Fridays')).toEqual(first);
      });

      it('follows content changes: an update moves the hash, a plain insert is found too', async () => {
        const m = makeMemory(scopeA, { content: 'old text' });
        await storage.memories.insert(m, vec(0));
        expect((await storage.memories.findByContent(scopeA, 'old text'))?.id).toBe(m.id);
        await storage.memories.update(scopeA, m.id, { content: 'new text' }, new Date(), 'u', null);
        expect(await storage.memories.findByContent(scopeA, 'old text')).toBeNull();
        expect((await storage.memories.findByContent(scopeA, ' new   text'))?.id).toBe(m.id);
        const dup = makeMemory(scopeA, { content: 'new text' });
        expect((await storage.memories.insertUnlessDuplicate(dup, vec(0)))?.id).toBe(m.id);
        await storage.memories.delete(scopeA, m.id, { at: new Date(), by: 'test', reason: 'user_request' });
        expect(await storage.memories.insertUnlessDuplicate(dup, vec(0))).toBeNull();
      });

      it('sums a scope\'s usage (types, bytes, accesses, recent writes, top tags) and nothing of other scopes', async () => {
        const t0 = new Date(Date.UTC(2026, 0, 1));
        const later = new Date(Date.UTC(2026, 0, 2));
        const a = makeMemory(scopeA, { title: 'é', content: 'abc', memoryType: 'project', tags: ['x', 'y'], createdAt: t0, updatedAt: t0 });
        const b = makeMemory(scopeA, { title: 'T', content: 'defg', memoryType: 'project', tags: ['x'], createdAt: t0, updatedAt: t0 });
        const c = makeMemory(scopeA, { title: 'U', content: 'h', memoryType: 'context', tags: [], createdAt: later, updatedAt: later });
        for (const m of [a, b, c]) await storage.memories.insert(m, vec(0));
        for (const scope of [scopeB, { ...scopeA, mode: 'test' as const }, { ...scopeA, workspace: 'other' }]) {
          await storage.memories.insert(makeMemory(scope, { tags: ['x'], createdAt: later, updatedAt: later }), vec(0));
        }
        await storage.memories.recordAccess(scopeA, b.id, later);
        await storage.memories.recordAccess(scopeA, b.id, later);
        await storage.memories.recordAccess(scopeA, a.id, later);
        await storage.memories.update(scopeA, a.id, { title: 'é2' }, later, 'u', null);
        const u = await storage.memories.usage(scopeA, { since: later, top: 5 });
        expect(u.total).toBe(3);
        expect(u.byType).toEqual({ project: 2, context: 1 });
        expect(u.bytes).toBe(Buffer.byteLength('é2abc') + Buffer.byteLength('Tdefg') + Buffer.byteLength('Uh'));
        expect(u.totalAccesses).toBe(3);
        expect(u.mostAccessed.map((m) => [m.id, m.accessCount])).toEqual([[b.id, 2], [a.id, 1]]);
        expect(u.createdSince).toBe(1);
        expect(u.updatedSince).toBe(1);
        expect(u.topTags).toEqual([{ tag: 'x', count: 2 }, { tag: 'y', count: 1 }]);
        expect((await storage.memories.usage(scopeA, { since: later, top: 1 })).mostAccessed).toHaveLength(1);
        const empty = await storage.memories.usage({ ...scopeA, workspace: 'none' }, { since: t0, top: 5 });
        expect(empty).toEqual({ total: 0, byType: {}, bytes: 0, totalAccesses: 0, mostAccessed: [], createdSince: 0, updatedSince: 0, topTags: [] });
      });

      it('stores one memory when identical creates race (across connections when the adapter has them)', async () => {
        const stores = await connections();
        const racers = Array.from({ length: 8 }, (_, i) => makeMemory(scopeA, { content: 'raced content', title: `r${i}` }));
        const results = await Promise.all(racers.map((m, i) => stores[i % stores.length]!.memories.insertUnlessDuplicate(m, vec(0))));
        const winners = racers.filter((_, i) => results[i] === null);
        expect(winners).toHaveLength(1);
        for (const r of results) if (r) expect(r.id).toBe(winners[0]!.id);
        expect((await storage.memories.list(scopeA, listAll())).total).toBe(1);
      });
    });

    describe('atomic groups of writes', () => {
      it('commits every step in order, or none of them', async () => {
        const existing = makeMemory(scopeA, { title: 'existing' });
        await storage.memories.insert(existing, vec(1));
        const fresh = makeMemory(scopeA, { title: 'fresh' });
        const at = new Date(Date.UTC(2026, 5, 1));
        const out = await storage.memories.applyAtomically(scopeA, [
          { kind: 'insert', memory: fresh, vector: vec(2) },
          { kind: 'update', id: fresh.id, patch: { title: 'fresher' }, at, by: 'u2', vector: vec(3) },
          { kind: 'read', id: existing.id, at },
          { kind: 'delete', id: existing.id, deletion: { at: new Date(), by: 'test', reason: 'user_request' } },
        ]);
        expect(out.map((m) => m.title)).toEqual(['fresh', 'fresher', 'existing', 'existing']);
        expect(out[2]!.accessCount).toBe(1);
        expect(await storage.memories.findById(scopeA, existing.id)).toBeNull();
        expect((await storage.memories.findById(scopeA, fresh.id))!.title).toBe('fresher');
        const probe = (axis: number) => storage.memories.searchSimilar(scopeA, { vector: axisVector(DIMS, axis), modelId: MODEL, limit: 5, minCosine: 0.8, filter: {} });
        expect((await probe(3)).hits.map((h) => h.memory.id)).toEqual([fresh.id]);
        expect((await probe(1)).total).toBe(0);

        // A failing step (absent id) rolls back the steps before it.
        const doomed = makeMemory(scopeA, { title: 'doomed', tags: ['doomed'] });
        const failure = await storage.memories.applyAtomically(scopeA, [
          { kind: 'insert', memory: doomed, vector: vec(4) },
          { kind: 'delete', id: fresh.id, deletion: { at: new Date(), by: 'test', reason: 'user_request' } },
          { kind: 'update', id: existing.id, patch: { title: 'x' }, at, by: 'u', vector: null },
        ]).catch((e: unknown) => e);
        expect(failure).toBeInstanceOf(AtomicStepFailed);
        expect(failure).toMatchObject({ index: 2, error: { code: 'NOT_FOUND' } });
        expect(await storage.memories.findById(scopeA, doomed.id)).toBeNull();
        expect(await storage.memories.findById(scopeA, fresh.id)).not.toBeNull();
        expect((await probe(4)).total).toBe(0);
        expect((await storage.memories.searchKeyword(scopeA, { terms: ['doomed'], limit: 5, filter: {} })).total).toBe(0);

        // Another scope's id is absent too.
        const foreign = makeMemory(scopeB);
        await storage.memories.insert(foreign, vec(0));
        await expect(storage.memories.applyAtomically(scopeA, [{ kind: 'delete', id: foreign.id, deletion: { at: new Date(), by: 'test', reason: 'user_request' } }])).rejects.toBeInstanceOf(AtomicStepFailed);
        expect(await storage.memories.findById(scopeB, foreign.id)).not.toBeNull();
        const dup = makeMemory(scopeA, { clientId: 'c1' });
        await expect(storage.memories.applyAtomically(scopeA, [
          { kind: 'insert', memory: dup, vector: vec(0) },
          { kind: 'insert', memory: makeMemory(scopeA, { clientId: 'c1' }), vector: vec(0) },
        ])).rejects.toMatchObject({ index: 1, error: { code: 'CONFLICT' } });
        expect(await storage.memories.findById(scopeA, dup.id)).toBeNull();
      });

      it('fails a run of inserts at the first client-id conflict (stored or earlier in the run), writing none of it', async () => {
        const stored = makeMemory(scopeA, { clientId: 'taken' });
        await storage.memories.insert(stored, vec(0));
        const seqBefore = await storage.events.latestSeq();
        const created = (m: { id: string; scope: Scope; createdAt: Date }): NewEvent[] => [{ id: `evt_${randomUUID()}`, type: 'memory.created', scope: m.scope, createdAt: m.createdAt, data: { id: m.id } }];
        const run = (clientIds: (string | null)[]) => clientIds.map((clientId, i) => ({
          kind: 'insert' as const, memory: makeMemory(scopeA, { clientId, title: `run ${i}`, tags: ['run'] }), vector: vec(i % 4 + 1), events: created,
        }));
        for (const [clientIds, index] of [[[null, 'a', 'b', 'taken', 'c'], 3], [['x', null, 'y', 'x', 'taken'], 3]] as const) {
          const steps = run([...clientIds]);
          await expect(storage.memories.applyAtomically(scopeA, steps)).rejects.toMatchObject({ index, error: { code: 'CONFLICT' } });
          for (const s of steps) expect(await storage.memories.findById(scopeA, s.memory.id)).toBeNull();
        }
        expect(await storage.events.latestSeq()).toBe(seqBefore);
        expect((await storage.memories.list(scopeA, listAll())).total).toBe(1);
        expect((await storage.memories.searchKeyword(scopeA, { terms: ['run'], limit: 5, filter: {} })).total).toBe(0);
        // Another scope's client ids are no conflict; the run commits in step order, events too.
        const steps = run(['taken', 'b', null]).map((s) => ({ ...s, memory: { ...s.memory, scope: scopeB } }));
        const out = await storage.memories.applyAtomically(scopeB, steps);
        expect(out.map((m) => m.title)).toEqual(['run 0', 'run 1', 'run 2']);
        expect(out.map((m) => m.tags)).toEqual([['run'], ['run'], ['run']]);
        const appended = await storage.events.readAfter({ tenantId: scopeB.tenantId, mode: scopeB.mode, workspace: scopeB.workspace, afterSeq: seqBefore, limit: 10 });
        expect(appended.map((e) => e.data.id)).toEqual(out.map((m) => m.id));
      });
    });

    describe('event log and webhook deliveries (outbox)', () => {
      const hook = (scope: EventScope, over: Partial<Webhook> = {}): Webhook => ({
        id: `webhook_${randomUUID()}`, kind: 'g9', scope, url: 'http://127.0.0.1:9/hook', events: ['memory.created'],
        description: null, status: 'active', retryPolicy: { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 300_000 },
        filters: {}, createdAt: new Date(Date.UTC(2026, 0, 1)), updatedAt: new Date(Date.UTC(2026, 0, 1)), lastDeliveryAt: null,
        stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 }, ...over,
      });
      /** Any strings do: storage never opens a sealed value. */
      const hookSecret: SealedValue = { keyId: 'k1', wrappedKey: 'd2hr', payload: 'c2VjcmV0' };
      const created = (m: ReturnType<typeof makeMemory>): NewEvent[] => [{
        id: `evt_${randomUUID()}`, type: 'memory.created', scope: m.scope, createdAt: m.createdAt,
        data: { id: m.id, tags: m.tags, metadata: m.metadata, memory_type: m.memoryType },
      }];
      const readAll = (scope: Scope, afterSeq = 0, types?: string[]) =>
        storage.events.readAfter({ tenantId: scope.tenantId, mode: scope.mode, workspace: scope.workspace, afterSeq, types, limit: 100 });

      it('writes events with the change, in one transaction, in order, visible only in scope', async () => {
        const heard: string[] = [];
        const stop = storage.events.onAppended((events) => heard.push(...events.map((e) => e.type)));
        const m1 = makeMemory(scopeA);
        await storage.memories.insert(m1, vec(0), created);
        await storage.memories.update(scopeA, m1.id, { title: 'x' }, new Date(), 'u', null, (m) => [{ id: `evt_${randomUUID()}`, type: 'memory.updated', scope: m.scope, createdAt: m.updatedAt, data: { id: m.id, title: m.title } }]);
        await storage.memories.delete(scopeA, m1.id, { at: new Date(), by: 'test', reason: 'user_request' }, (m) => [{ id: `evt_${randomUUID()}`, type: 'memory.deleted', scope: m.scope, createdAt: new Date(), data: { id: m.id } }]);
        await storage.memories.insert(makeMemory(scopeB), vec(0), created);
        await storage.events.append([{ id: `evt_${randomUUID()}`, type: 'system.health', scope: { tenantId: null, mode: null, workspace: null }, createdAt: new Date(), data: { status: 'ok' } }]);
        stop();

        const mine = await readAll(scopeA);
        expect(mine.map((e) => e.type)).toEqual(['memory.created', 'memory.updated', 'memory.deleted', 'system.health']);
        expect(mine.map((e) => e.seq)).toEqual([...mine.map((e) => e.seq)].sort((a, b) => a - b));
        // The memory was deleted since: its earlier events keep its id only (forgetting, docs/events.md).
        expect(mine[1]!.data).toMatchObject({ id: m1.id, forgotten: true });
        expect(mine[1]!.data).not.toHaveProperty('title');
        expect((await readAll(scopeA, mine[1]!.seq)).map((e) => e.type)).toEqual(['memory.deleted', 'system.health']);
        expect((await readAll(scopeA, 0, ['memory.deleted'])).map((e) => e.type)).toEqual(['memory.deleted']);
        expect((await readAll({ ...scopeA, workspace: 'other' })).map((e) => e.type)).toEqual(['system.health']);
        expect(heard).toEqual(['memory.created', 'memory.updated', 'memory.deleted', 'memory.created', 'system.health']);
        expect(await storage.events.findById(mine[0]!.id)).toEqual(mine[0]);
        expect(await storage.events.latestSeq()).toBeGreaterThanOrEqual(mine[3]!.seq);

        // A write that fails writes no event.
        const before = await storage.events.latestSeq();
        await expect(storage.memories.insert(makeMemory(scopeA), { modelId: MODEL, vector: null as unknown as Float32Array }, created)).rejects.toThrow();
        expect(await storage.events.latestSeq()).toBe(before);
      });

      it('reads a bounded stretch of the log (uptoSeq, inclusive), within scope, paged by limit', async () => {
        const at = (scope: EventScope, type = 'memory.created'): NewEvent => ({ id: `evt_${randomUUID()}`, type, scope, createdAt: new Date(), data: {} });
        const [a1, b1, sys, a2, otherWorkspace, a3, b2] = await storage.events.append([
          at(scopeA), at(scopeB), at({ tenantId: null, mode: null, workspace: null }, 'system.health'), at(scopeA, 'memory.deleted'),
          at({ ...scopeA, workspace: 'w2' }), at(scopeA), at(scopeB),
        ]);
        const read = (afterSeq: number, uptoSeq: number | undefined, limit = 100, types?: string[]) => storage.events.readAfter({
          tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: scopeA.workspace, afterSeq, uptoSeq, types, limit,
        });
        const ids = (events: StoredEvent[]) => events.map((e) => e.id);
        expect(ids(await read(0, a2!.seq))).toEqual(ids([a1!, sys!, a2!]));
        expect(ids(await read(a1!.seq, a3!.seq))).toEqual(ids([sys!, a2!, a3!]));
        expect(ids(await read(a1!.seq, a3!.seq, 2))).toEqual(ids([sys!, a2!]));
        expect(ids(await read(0, a3!.seq, 100, ['memory.created']))).toEqual(ids([a1!, a3!]));
        // A stretch holding only what the caller may not see (another tenant, another workspace) reads empty.
        expect(await read(a1!.seq, b1!.seq)).toEqual([]);
        expect(await read(a2!.seq, otherWorkspace!.seq)).toEqual([]);
        expect(await read(a3!.seq, b2!.seq + 1000)).toEqual([]);
        expect(await read(a2!.seq, a2!.seq)).toEqual([]);
        // No upper bound, or one past the log's end, reads the same as the whole rest of the log.
        expect(ids(await read(a1!.seq, b2!.seq + 1000))).toEqual(ids(await read(a1!.seq, undefined)));
        expect(await read(a1!.seq, b2!.seq + 1000)).toEqual([sys!, a2!, a3!]);
      });

      it('fans events out to the webhooks that want them, and leases, retries and completes deliveries', async () => {
        const eventScope = (s: Scope): EventScope => ({ ...s });
        const wanted = hook(eventScope(scopeA), { filters: { tags: ['ops'] } });
        const otherType = hook(eventScope(scopeA), { events: ['memory.deleted'] });
        const disabled = hook(eventScope(scopeA), { status: 'disabled' });
        const otherTenant = hook(eventScope(scopeB));
        const otherWorkspace = hook({ ...eventScope(scopeA), workspace: 'w2' });
        for (const w of [wanted, otherType, disabled, otherTenant, otherWorkspace]) await storage.webhooks.insert(w, hookSecret);

        await storage.memories.insert(makeMemory(scopeA, { tags: ['ops'] }), vec(0), created);
        await storage.memories.insert(makeMemory(scopeA, { tags: ['misc'] }), vec(0), created);
        expect(await storage.webhooks.pendingCount()).toBe(1);

        const t0 = new Date(Date.UTC(2030, 0, 1));
        const [claim, ...rest] = await storage.webhooks.claimDue(t0, 10, 5, 30_000);
        expect(rest).toEqual([]);
        expect(claim).toMatchObject({ webhook: { id: wanted.id }, delivery: { attempts: 0 }, event: { type: 'memory.created' } });
        // The claim alone carries the signing secret, sealed as stored; no read of the webhook does.
        expect(claim!.secret).toEqual({ sealed: hookSecret });
        expect(Object.keys((await storage.webhooks.findById(eventScope(scopeA), 'g9', wanted.id))!)).not.toContain('secret');
        // Leased: not claimable again until the lease expires (a crashed worker), then it is.
        expect(await storage.webhooks.claimDue(t0, 10, 5, 30_000)).toEqual([]);
        const again = await storage.webhooks.claimDue(new Date(t0.getTime() + 30_000), 10, 5, 30_000);
        expect(again.map((c) => c.delivery.id)).toEqual([claim!.delivery.id]);

        const t1 = new Date(t0.getTime() + 31_000);
        await storage.webhooks.complete(claim!.delivery.id, { ok: false, at: t1, status: 500, error: 'HTTP 500', retryAt: new Date(t1.getTime() + 1000), failWebhook: false });
        expect(await storage.webhooks.claimDue(t1, 10, 5, 30_000)).toEqual([]);
        const retry = await storage.webhooks.claimDue(new Date(t1.getTime() + 1000), 10, 5, 30_000);
        expect(retry[0]!.delivery.attempts).toBe(1);
        await storage.webhooks.complete(retry[0]!.delivery.id, { ok: true, at: new Date(t1.getTime() + 1100), status: 204 });
        expect(await storage.webhooks.pendingCount()).toBe(0);
        const after = await storage.webhooks.findById(eventScope(scopeA), 'g9', wanted.id);
        expect(after).toMatchObject({ stats: { totalAttempts: 2, successfulDeliveries: 1, failedDeliveries: 0 }, lastDeliveryAt: new Date(t1.getTime() + 1100) });
      });

      it('lists a webhook\'s deliveries newest first (in its scope only) and requeues a finished one once', async () => {
        const w = hook({ ...scopeA });
        const stranger = hook({ ...scopeA }, { events: ['memory.deleted'] });
        await storage.webhooks.insert(w, hookSecret);
        await storage.webhooks.insert(stranger, hookSecret);
        const m1 = makeMemory(scopeA);
        const m2 = makeMemory(scopeA);
        await storage.memories.insert(m1, vec(0), created);
        await storage.memories.insert(m2, vec(0), created);
        const listed = await storage.webhooks.listDeliveries(scopeA, 'g9', w.id, { limit: 10, offset: 0 });
        expect(listed.total).toBe(2);
        expect(listed.items.map((d) => d.state)).toEqual(['pending', 'pending']);
        expect(listed.items[0]).toMatchObject({ webhookId: w.id, eventType: 'memory.created', attempts: 0, lastStatus: null, finishedAt: null });
        expect(listed.items[0]!.nextAttemptAt).toBeInstanceOf(Date);
        const events = await readAll(scopeA, 0, ['memory.created']);
        // Newest first: the second memory's event leads.
        expect(listed.items.map((d) => d.eventId)).toEqual(events.slice(-2).reverse().map((e) => e.id));
        expect((await storage.webhooks.listDeliveries(scopeA, 'g9', w.id, { limit: 1, offset: 1 })).items.map((d) => d.id)).toEqual([listed.items[1]!.id]);
        // Another scope, kind or webhook sees nothing and requeues nothing.
        expect(await storage.webhooks.listDeliveries(scopeB, 'g9', w.id, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
        expect(await storage.webhooks.listDeliveries({ ...scopeA, workspace: 'w2' }, 'g9', w.id, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
        expect(await storage.webhooks.listDeliveries(scopeA, 'g10', w.id, { limit: 10, offset: 0 })).toEqual({ items: [], total: 0 });
        const target = listed.items[1]!;
        const t0 = new Date(Date.UTC(2031, 0, 1));
        expect(await storage.webhooks.redeliver(scopeB, 'g9', w.id, target.id, t0)).toBe('not_found');
        expect(await storage.webhooks.redeliver(scopeA, 'g9', stranger.id, target.id, t0)).toBe('not_found');
        expect(await storage.webhooks.redeliver(scopeA, 'g9', w.id, 'dlv_missing', t0)).toBe('not_found');
        // Still pending: nothing to requeue.
        expect(await storage.webhooks.redeliver(scopeA, 'g9', w.id, target.id, t0)).toBe('pending');

        const claims = await storage.webhooks.claimDue(t0, 10, 5, 30_000);
        const claim = claims.find((c) => c.delivery.id === target.id)!;
        await storage.webhooks.complete(claim.delivery.id, { ok: false, at: t0, status: 410, error: 'HTTP 410', retryAt: null, failWebhook: false });
        const failed = (await storage.webhooks.listDeliveries(scopeA, 'g9', w.id, { limit: 10, offset: 0 })).items.find((d) => d.id === target.id)!;
        expect(failed).toMatchObject({ state: 'failed', attempts: 1, lastStatus: 410, lastError: 'HTTP 410', nextAttemptAt: null, finishedAt: t0 });

        const t1 = new Date(t0.getTime() + 60_000);
        const [first, second] = await Promise.all([
          storage.webhooks.redeliver(scopeA, 'g9', w.id, target.id, t1), storage.webhooks.redeliver(scopeA, 'g9', w.id, target.id, t1),
        ]);
        expect([first, second].sort()).toEqual(['pending', 'requeued']);
        const requeued = (await storage.webhooks.listDeliveries(scopeA, 'g9', w.id, { limit: 10, offset: 0 })).items.find((d) => d.id === target.id)!;
        expect(requeued).toMatchObject({ state: 'pending', attempts: 1, nextAttemptAt: t1, finishedAt: null });
        const again = await storage.webhooks.claimDue(t1, 10, 5, 30_000);
        expect(again.filter((c) => c.delivery.id === target.id).map((c) => c.delivery.attempts)).toEqual([1]);
      });

      it('caps deliveries in flight per webhook, gives up, and can fail a webhook', async () => {
        const w = hook({ ...scopeA }, { kind: 'g10', scope: { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: null }, events: ['transfer.completed'] });
        await storage.webhooks.insert(w, hookSecret);
        const evt = () => ({ id: `evt_${randomUUID()}`, type: 'transfer.completed', scope: { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: null }, createdAt: new Date(Date.UTC(2029, 0, 1)), data: {} });
        await storage.events.append([evt(), evt(), evt(), evt(), evt(), evt(), evt()]);
        const now = new Date(Date.UTC(2030, 0, 1));
        const first = await storage.webhooks.claimDue(now, 10, 5, 60_000);
        expect(first).toHaveLength(5);
        expect(await storage.webhooks.claimDue(now, 10, 5, 60_000)).toEqual([]);
        await storage.webhooks.complete(first[0]!.delivery.id, { ok: false, at: now, status: 410, error: 'gone', retryAt: null, failWebhook: true });
        expect((await storage.webhooks.findById(w.scope, 'g10', w.id))!).toMatchObject({ status: 'failed', stats: { failedDeliveries: 1 } });
        // A failed webhook gets nothing more claimed, and new events are not queued for it.
        for (const c of first.slice(1)) await storage.webhooks.release(c.delivery.id, now);
        expect(await storage.webhooks.claimDue(now, 10, 5, 60_000)).toEqual([]);
        const pending = await storage.webhooks.pendingCount();
        await storage.events.append([evt()]);
        expect(await storage.webhooks.pendingCount()).toBe(pending);
        // Back to active: the queued deliveries resume.
        await storage.webhooks.update(w.scope, 'g10', w.id, { status: 'active' }, now);
        expect((await storage.webhooks.claimDue(now, 10, 5, 60_000)).length).toBe(5);
      });

      it('keeps webhooks per scope and kind, lists, updates and deletes them', async () => {
        const a = hook({ ...scopeA }, { events: ['memory.created', 'memory.deleted'] });
        const b = hook({ ...scopeA }, { status: 'disabled' });
        await storage.webhooks.insert(a, hookSecret);
        await storage.webhooks.insert(b, hookSecret);
        await storage.webhooks.insert(hook({ ...scopeB }), hookSecret);
        expect((await storage.webhooks.list({ ...scopeA }, 'g9', { limit: 10, offset: 0 })).total).toBe(2);
        expect((await storage.webhooks.list({ ...scopeA }, 'g9', { active: true, limit: 10, offset: 0 })).items.map((w) => w.id)).toEqual([a.id]);
        expect((await storage.webhooks.list({ ...scopeA }, 'g9', { event: 'memory.deleted', limit: 10, offset: 0 })).items.map((w) => w.id)).toEqual([a.id]);
        expect((await storage.webhooks.list({ ...scopeA }, 'g10', { limit: 10, offset: 0 })).total).toBe(0);
        expect(await storage.webhooks.findById({ ...scopeB }, 'g9', a.id)).toBeNull();
        expect(await storage.webhooks.findById({ ...scopeA }, 'g10', a.id)).toBeNull();
        expect(await storage.webhooks.countCreatedSince({ ...scopeA }, 'g9', new Date(0))).toBe(2);
        const updated = await storage.webhooks.update({ ...scopeA }, 'g9', a.id, { events: ['memory.updated'], filters: { tags: ['x'] } }, new Date(Date.UTC(2027, 0, 1)));
        expect(updated).toMatchObject({ events: ['memory.updated'], filters: { tags: ['x'] } });
        expect(await storage.webhooks.update({ ...scopeB }, 'g9', a.id, { status: 'disabled' }, new Date())).toBeNull();
        expect(await storage.webhooks.delete({ ...scopeB }, 'g9', a.id)).toBe(false);
        expect(await storage.webhooks.delete({ ...scopeA }, 'g9', a.id)).toBe(true);
        expect(await storage.webhooks.findById({ ...scopeA }, 'g9', a.id)).toBeNull();
      });

      it('keeps G11 webhooks per tenant and mode, apart from G9\'s and G10\'s, and fans their events out to them', async () => {
        const tenantOf = (s: Scope): EventScope => ({ tenantId: s.tenantId, mode: s.mode, workspace: null });
        const mine = hook(tenantOf(scopeA), { kind: 'g11', events: ['secret.created', 'apikey.rotated'] });
        const otherTenant = hook(tenantOf(scopeB), { kind: 'g11', events: ['secret.created'] });
        const otherMode = hook({ ...tenantOf(scopeA), mode: 'test' }, { kind: 'g11', events: ['secret.created'] });
        const g10 = hook(tenantOf(scopeA), { kind: 'g10', events: ['transfer.completed'] });
        for (const w of [mine, otherTenant, otherMode, g10]) await storage.webhooks.insert(w, hookSecret);

        expect(await storage.webhooks.findById(tenantOf(scopeA), 'g11', mine.id)).toEqual(mine);
        for (const kind of ['g9', 'g10'] as const) expect(await storage.webhooks.findById(tenantOf(scopeA), kind, mine.id)).toBeNull();
        expect(await storage.webhooks.findById(tenantOf(scopeB), 'g11', mine.id)).toBeNull();
        expect((await storage.webhooks.list(tenantOf(scopeA), 'g11', { limit: 10, offset: 0 })).items.map((w) => w.id)).toEqual([mine.id]);
        expect((await storage.webhooks.list(tenantOf(scopeA), 'g11', { event: 'apikey.rotated', limit: 10, offset: 0 })).total).toBe(1);
        expect(await storage.webhooks.countCreatedSince(tenantOf(scopeA), 'g11', new Date(0))).toBe(1);

        const event = (type: string): NewEvent => ({ id: `evt_${randomUUID()}`, type, scope: tenantOf(scopeA), createdAt: new Date(Date.UTC(2029, 0, 1)), data: { id: 'sec_1' } });
        await storage.events.append([event('secret.created'), event('secret.accessed')]);
        const claims = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 30_000);
        expect(claims.map((c) => [c.webhook.id, c.webhook.kind, c.event.type])).toEqual([[mine.id, 'g11', 'secret.created']]);
        expect(claims[0]!.secret).toEqual({ sealed: hookSecret });
        expect(await storage.webhooks.delete(tenantOf(scopeA), 'g10', mine.id)).toBe(false);
        expect(await storage.webhooks.delete(tenantOf(scopeA), 'g11', mine.id)).toBe(true);
        expect(await storage.webhooks.pendingCount()).toBe(0);
      });

      describe('signing secrets (sealed at rest)', () => {
        const webhooksTable = TRANSFER_TABLES.find((t) => t.name === 'webhooks')!;
        let nextSeq = 10_000;
        /** A row as a store written before secrets were sealed holds it: the secret in plaintext (loaded as `mnemo migrate` would). */
        const legacyRow = (w: Webhook, plaintext: string): TransferRow => ({
          seq: nextSeq++, id: w.id, kind: w.kind, tenant_id: w.scope.tenantId, mode: w.scope.mode, workspace: w.scope.workspace,
          url: w.url, events: w.events, description: w.description, status: w.status, retry_policy: w.retryPolicy, filters: w.filters,
          created_at: w.createdAt.getTime(), updated_at: w.updatedAt.getTime(), last_delivery_at: null, total_attempts: 0,
          successful_deliveries: 0, failed_deliveries: 0,
          plaintext_secret: plaintext, secret_key_id: null, secret_wrapped_key: null, secret_payload: null,
        });
        const sealedAs = (n: number | string, keyId = 'k1'): SealedValue => ({ keyId, wrappedKey: `d2hr${n}=`, payload: `c2Vj${n}` });
        async function allSealed(store: Storage, limit: number): Promise<SealedRef[]> {
          const out: SealedRef[] = [];
          for (let after: string | null = null; ;) {
            const page = await store.webhooks.sealedSecrets(after, limit);
            expect(page.length).toBeLessThanOrEqual(limit);
            if (page.length === 0) return out;
            out.push(...page);
            after = page.at(-1)!.ref;
          }
        }

        it('pages through every sealed secret, with its webhook\'s context, in a stable order, and re-wraps one in place', async () => {
          const g10Scope: EventScope = { tenantId: scopeB.tenantId, mode: 'test', workspace: null };
          const hooks = [hook({ ...scopeA }), hook({ ...scopeA }, { status: 'disabled' }), hook(g10Scope, { kind: 'g10', events: ['transfer.completed'] })];
          for (const [i, w] of hooks.entries()) await storage.webhooks.insert(w, sealedAs(i));
          expect(await storage.webhooks.plaintextSecrets(10)).toEqual([]);

          const all = await allSealed(storage, 100);
          expect(all.map((r) => ({ context: r.context, sealed: r.sealed }))).toEqual(hooks.map((w, i) => ({ context: webhookSecretContext(w), sealed: sealedAs(i) })));
          expect(all.map((r) => r.context)).toContainEqual(['webhook-secret', scopeB.tenantId, 'test', hooks[2]!.id]);
          expect(new Set(all.map((r) => r.ref)).size).toBe(3);
          expect(await allSealed(storage, 1)).toEqual(all);
          expect(await allSealed(storage, 2)).toEqual(all);

          // Re-wrapping replaces that one secret only, and the next claim carries it.
          await storage.webhooks.rewrapSecret(all[0]!.ref, sealedAs('rewrapped', 'k2'));
          expect(await allSealed(storage, 100)).toEqual(all.map((r, i) => (i === 0 ? { ...r, sealed: sealedAs('rewrapped', 'k2') } : r)));
          await storage.memories.insert(makeMemory(scopeA), vec(0), created);
          const [claim] = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 30_000);
          expect(claim).toMatchObject({ webhook: { id: hooks[0]!.id }, secret: { sealed: sealedAs('rewrapped', 'k2') } });
          // A webhook deleted meanwhile is simply no longer there to re-wrap.
          expect(await storage.webhooks.delete(g10Scope, 'g10', hooks[2]!.id)).toBe(true);
          await storage.webhooks.rewrapSecret(all[2]!.ref, sealedAs('late', 'k2'));
          expect((await allSealed(storage, 100)).map((r) => r.sealed)).toEqual([sealedAs('rewrapped', 'k2'), sealedAs(1)]);
        });

        it('finds the plaintext secrets an older store left, seals each once (where still that plaintext), and claims either form', async () => {
          const legacy = [hook({ ...scopeA }), hook({ ...scopeA }, { events: ['memory.deleted'] }), hook({ ...scopeB }, { kind: 'g10', scope: { tenantId: scopeB.tenantId, mode: 'live', workspace: null }, events: ['transfer.completed'] })];
          expect(await storage.transfer.load(webhooksTable, legacy.map((w, i) => legacyRow(w, `legacy-plaintext-${i}`)))).toBe(3);
          const current = hook({ ...scopeA });
          await storage.webhooks.insert(current, sealedAs('current'));
          expect(await storage.webhooks.findById({ ...scopeA }, 'g9', legacy[0]!.id)).toMatchObject({ id: legacy[0]!.id, events: ['memory.created'] });

          // Oldest first, with what the context of its sealed value needs; never a sealed one.
          const found = await storage.webhooks.plaintextSecrets(2);
          expect(found).toEqual(legacy.slice(0, 2).map((w, i) => ({ id: w.id, kind: w.kind, scope: w.scope, plaintext: `legacy-plaintext-${i}` })));
          expect((await storage.webhooks.plaintextSecrets(10)).map((r) => r.id)).toEqual(legacy.map((w) => w.id));
          expect((await allSealed(storage, 100)).map((r) => r.sealed)).toEqual([sealedAs('current')]);
          // A claim of a row not yet sealed carries the plaintext.
          await storage.memories.insert(makeMemory(scopeA), vec(0), created);
          const claims = await storage.webhooks.claimDue(new Date(Date.UTC(2030, 0, 1)), 10, 5, 30_000);
          expect(claims.map((c) => [c.webhook.id, c.secret]).sort()).toEqual([
            [legacy[0]!.id, { plaintext: 'legacy-plaintext-0' }], [current.id, { sealed: sealedAs('current') }],
          ].sort());

          // Replaced only where the row still holds that plaintext; again, nothing.
          const seal = (w: Webhook, plaintext: string) => ({ id: w.id, plaintext, sealed: sealedAs(`of-${w.id}`) });
          expect(await storage.webhooks.sealSecrets([seal(legacy[0]!, 'legacy-plaintext-0'), seal(legacy[1]!, 'not-what-it-holds')])).toBe(1);
          expect(await storage.webhooks.sealSecrets([seal(legacy[0]!, 'legacy-plaintext-0')])).toBe(0);
          expect(await storage.webhooks.sealSecrets([])).toBe(0);
          expect((await storage.webhooks.plaintextSecrets(10)).map((r) => r.id)).toEqual([legacy[1]!.id, legacy[2]!.id]);
          // Sealers racing on several connections (nodes starting together) seal each row once.
          const stores = await connections();
          const rest = legacy.slice(1).map((w, i) => seal(w, `legacy-plaintext-${i + 1}`));
          const results = await Promise.all([0, 1, 2, 3].map((i) => stores[i % stores.length]!.webhooks.sealSecrets(rest)));
          expect(results.reduce((a, b) => a + b, 0)).toBe(2);
          expect(await storage.webhooks.plaintextSecrets(10)).toEqual([]);

          const sealed = await allSealed(storage, 100);
          expect(sealed.map((r) => r.context)).toEqual([...legacy, current].map((w) => webhookSecretContext(w)));
          expect(sealed.map((r) => r.sealed)).toEqual([...legacy, current].map((w) => sealedAs(w === current ? 'current' : `of-${w.id}`)));
          // No row holds a plaintext any more.
          const rows = JSON.stringify(await storage.transfer.dump(webhooksTable, null, 1000));
          for (let i = 0; i < 3; i++) expect(rows).not.toContain(`legacy-plaintext-${i}`);
        });
      });

      it('prunes old events, but never one a delivery still waits for', async () => {
        const w = hook({ ...scopeA });
        await storage.webhooks.insert(w, hookSecret);
        const old = makeMemory(scopeA, { createdAt: new Date(Date.UTC(2020, 0, 1)) });
        await storage.memories.insert(old, vec(0), created);
        await storage.events.append([{ id: `evt_${randomUUID()}`, type: 'search.performed', scope: { ...scopeA }, createdAt: new Date(Date.UTC(2020, 0, 1)), data: {} }]);
        expect(await storage.events.prune(new Date(Date.UTC(2021, 0, 1)))).toBe(1);
        expect((await readAll(scopeA)).map((e) => e.type)).toEqual(['memory.created']);
      });

      it('shows readers every event once, in seq order, with no hole, while appends run concurrently', async () => {
        const stores = await connections();
        const producerScope: EventScope = { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: null };
        const event = (scope: EventScope, type = 'transfer.completed'): NewEvent => ({ id: `evt_${randomUUID()}`, type, scope, createdAt: new Date(), data: {} });
        const ticks = async (n: number) => { for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve)); };
        const visibleToA = new Set<string>();
        // Every kind of append, on every connection, in scope A and elsewhere, started together and interleaved.
        const writer = async (i: number) => {
          const store = stores[i % stores.length]!;
          await ticks(i % 5);
          switch (i % 4) {
            case 0: {
              const stored = await store.events.append([event(producerScope), event(producerScope)]);
              stored.forEach((e) => visibleToA.add(e.id));
              break;
            }
            case 1: {
              const m = makeMemory(i % 8 === 1 ? scopeA : scopeB);
              await store.memories.insert(m, vec(0), (x) => {
                const events = created(x);
                if (x.scope.tenantId === scopeA.tenantId) events.forEach((e) => visibleToA.add(e.id));
                return events;
              });
              break;
            }
            case 2: {
              const result = await store.idempotency.appendEventOnce({ tenantId: scopeA.tenantId, mode: scopeA.mode, key: `order-${i}` },
                { requestHash: 'h', response: '{}', at: new Date(), notBefore: new Date(0) }, [event(producerScope)]);
              if (result.kind === 'appended') result.events.forEach((e) => visibleToA.add(e.id));
              break;
            }
            default: {
              const stored = await store.events.append([event({ tenantId: null, mode: null, workspace: null }, 'system.health')]);
              stored.forEach((e) => visibleToA.add(e.id));
            }
          }
        };
        const page = (afterSeq: number) => storage.events.readAfter({ tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: scopeA.workspace, afterSeq, limit: 7 });

        let writing = true;
        const tailed: StoredEvent[] = [];
        const tail = async () => {
          let cursor = 0;
          for (;;) {
            const finished = !writing; // read before the page: a page read after the last commit misses nothing
            const events = await page(cursor);
            for (const e of events) {
              expect(e.seq).toBeGreaterThan(cursor);
              tailed.push(e);
              cursor = e.seq;
            }
            if (events.length === 0) {
              if (finished) return;
              await ticks(1);
            }
          }
        };
        // "From now": everything up to latestSeq is already visible, so a stream starting there misses nothing.
        const snapshots: { latest: number; upTo: string[] }[] = [];
        const snapshot = async (after: number) => {
          await ticks(after);
          const latest = await storage.events.latestSeq();
          const upTo: string[] = [];
          for (let cursor = 0; ;) {
            const events = await page(cursor);
            for (const e of events) if (e.seq <= latest) upTo.push(e.id);
            if (events.length === 0 || events.at(-1)!.seq >= latest) break;
            cursor = events.at(-1)!.seq;
          }
          snapshots.push({ latest, upTo });
        };
        await Promise.all([
          tail(),
          snapshot(1), snapshot(3), snapshot(6),
          Promise.all(Array.from({ length: 32 }, (_, i) => writer(i))).finally(() => { writing = false; }),
        ]);

        const all: StoredEvent[] = [];
        for (let events = await page(0); events.length > 0; events = await page(all.at(-1)!.seq)) all.push(...events);
        expect(all.map((e) => e.seq)).toEqual([...new Set(all.map((e) => e.seq))].sort((a, b) => a - b));
        expect(new Set(all.map((e) => e.id))).toEqual(visibleToA);
        expect(tailed.map((e) => e.id)).toEqual(all.map((e) => e.id));
        for (const { latest, upTo } of snapshots) {
          expect(upTo).toEqual(all.filter((e) => e.seq <= latest).map((e) => e.id));
        }
      });

      describe('idempotent producer events (appendEventOnce)', () => {
        const producerScope: EventScope = { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: null };
        const at = new Date(Date.UTC(2030, 0, 1));
        const ref = { tenantId: scopeA.tenantId, mode: scopeA.mode, key: 'k1' };
        const write = (requestHash: string, when = at, ttlMs = 60_000) =>
          ({ requestHash, response: JSON.stringify({ requestHash }), at: when, notBefore: new Date(when.getTime() - ttlMs) });
        const walletCreated = (scope: EventScope = producerScope): NewEvent =>
          ({ id: `evt_${randomUUID()}`, type: 'wallet.created', scope, createdAt: at, data: { n: 1 } });

        it('appends once per key, tenant and mode, with its deliveries; an expired record is replaced', async () => {
          await storage.webhooks.insert(hook(producerScope, { kind: 'g10', events: ['wallet.created'] }), hookSecret);
          const first = await storage.idempotency.appendEventOnce(ref, write('h1'), [walletCreated()]);
          expect(first.kind).toBe('appended');
          const [stored] = first.kind === 'appended' ? first.events : [];
          expect(stored).toMatchObject({ type: 'wallet.created', scope: producerScope, data: { n: 1 } });
          expect(await storage.events.findById(stored!.id)).toEqual(stored);
          expect(await storage.webhooks.pendingCount()).toBe(1);

          // The same key again, within its lifetime: the first answer, and nothing written.
          const latest = await storage.events.latestSeq();
          const again = await storage.idempotency.appendEventOnce(ref, write('h2', new Date(at.getTime() + 1000)), [walletCreated()]);
          expect(again).toEqual({ kind: 'existing', record: { requestHash: 'h1', response: JSON.stringify({ requestHash: 'h1' }), createdAt: at } });
          expect(await storage.events.latestSeq()).toBe(latest);
          expect(await storage.webhooks.pendingCount()).toBe(1);

          // Keys are per tenant and mode.
          const testMode = { ...producerScope, mode: 'test' as const };
          expect((await storage.idempotency.appendEventOnce({ ...ref, mode: 'test' }, write('h1'), [walletCreated(testMode)])).kind).toBe('appended');
          const otherTenant = { ...producerScope, tenantId: scopeB.tenantId };
          expect((await storage.idempotency.appendEventOnce({ ...ref, tenantId: scopeB.tenantId }, write('h1'), [walletCreated(otherTenant)])).kind).toBe('appended');

          // Past its lifetime the record counts as absent: replaced, and the events appended.
          const later = new Date(at.getTime() + 120_000);
          expect((await storage.idempotency.appendEventOnce(ref, write('h3', later), [walletCreated()])).kind).toBe('appended');
          expect(await storage.idempotency.appendEventOnce(ref, write('h4', later), [walletCreated()]))
            .toMatchObject({ kind: 'existing', record: { requestHash: 'h3', createdAt: later } });
          expect(await storage.webhooks.pendingCount()).toBe(2);

          // Prune drops records created before the cut (the other tenant's and mode's), not the fresh one.
          expect(await storage.idempotency.prune(new Date(at.getTime() + 1))).toBe(2);
          expect((await storage.idempotency.appendEventOnce(ref, write('h5', later), [walletCreated()])).kind).toBe('existing');
          expect((await storage.idempotency.appendEventOnce({ ...ref, mode: 'test' }, write('h6', later), [walletCreated(testMode)])).kind).toBe('appended');
        });

        it('stores neither the record nor any event when the append fails', async () => {
          const taken = walletCreated();
          await storage.events.append([taken]);
          const latest = await storage.events.latestSeq();
          // An event id already in the log cannot be appended: the whole write rolls back.
          await expect(storage.idempotency.appendEventOnce(ref, write('h1'), [walletCreated(), taken])).rejects.toThrow();
          expect(await storage.events.latestSeq()).toBe(latest);
          const retry = await storage.idempotency.appendEventOnce(ref, write('h2'), [walletCreated()]);
          expect(retry.kind).toBe('appended');
        });

        it('appends once when callers race on one key', async () => {
          const stores = await connections();
          const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
            stores[i % stores.length]!.idempotency.appendEventOnce(ref, write(`h${i}`), [walletCreated()])));
          const winners = results.filter((r) => r.kind === 'appended');
          expect(winners).toHaveLength(1);
          const winner = results.indexOf(winners[0]!);
          for (const r of results) if (r.kind === 'existing') expect(r.record.requestHash).toBe(`h${winner}`);
          const log = await readAll(scopeA, 0, ['wallet.created']);
          expect(log.map((e) => e.id)).toEqual(winners[0]!.kind === 'appended' ? winners[0]!.events.map((e) => e.id) : []);
        });
      });

      it('never claims one delivery twice when claimers race, and keeps the per-webhook cap across them', async () => {
        const stores = await connections();
        const producerScope: EventScope = { tenantId: scopeA.tenantId, mode: scopeA.mode, workspace: null };
        const hooks = [0, 1].map(() => hook(producerScope, { kind: 'g10', events: ['transfer.completed'] }));
        for (const w of hooks) await storage.webhooks.insert(w, hookSecret);
        const at = new Date(Date.UTC(2029, 0, 1));
        await storage.events.append(Array.from({ length: 12 }, () =>
          ({ id: `evt_${randomUUID()}`, type: 'transfer.completed', scope: producerScope, createdAt: at, data: {} })));
        expect(await storage.webhooks.pendingCount()).toBe(24);
        const now = new Date(Date.UTC(2030, 0, 1));
        const race = async (claimers: number, limit: number, perWebhook: number) => (await Promise.all(Array.from({ length: claimers },
          (_, i) => stores[i % stores.length]!.webhooks.claimDue(now, limit, perWebhook, 60_000)))).flat();
        const perHook = (claims: ClaimedDelivery[]) => hooks.map((w) => claims.filter((c) => c.webhook.id === w.id).length);

        // At most 3 in flight per webhook, however many claim at once.
        const capped = await race(4, 10, 3);
        expect(new Set(capped.map((c) => c.delivery.id)).size).toBe(capped.length);
        for (const n of perHook(capped)) expect(n).toBeLessThanOrEqual(3);
        const topUp = await storage.webhooks.claimDue(now, 10, 3, 60_000);
        expect(perHook([...capped, ...topUp])).toEqual([3, 3]);
        for (const c of [...capped, ...topUp]) await storage.webhooks.complete(c.delivery.id, { ok: true, at: now, status: 204 });

        // Uncapped: racing rounds until nothing is left claim each remaining delivery exactly once.
        const claimed: ClaimedDelivery[] = [];
        for (let round = await race(3, 4, 100); round.length > 0; round = await race(3, 4, 100)) claimed.push(...round);
        expect(claimed).toHaveLength(18);
        expect(new Set(claimed.map((c) => c.delivery.id)).size).toBe(18);
        expect(new Set(claimed.map((c) => `${c.webhook.id} ${c.event.id}`)).size).toBe(18);
      });
    });

    describe('usage figures (analytics summary)', () => {
      it('counts memories, memory operations and searches per tenant + mode in a window, and lists active scopes', async () => {
        const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
        const event = (type: string, scope: Scope | EventScope, minute: number): NewEvent => ({ id: `evt_${randomUUID()}`, type, scope: { ...scope }, createdAt: at(minute), data: {} });
        await storage.memories.insert(makeMemory(scopeA), vec(0));
        await storage.memories.insert(makeMemory({ ...scopeA, workspace: 'w2' }), vec(0));
        await storage.memories.insert(makeMemory(scopeB), vec(0));
        await storage.events.append([
          event('memory.created', scopeA, 5), event('memory.created', { ...scopeA, workspace: 'w2' }, 6), event('memory.updated', scopeA, 7),
          event('memory.deleted', scopeA, 10), event('memory.created', scopeA, 1), event('memory.created', { ...scopeA, mode: 'test' }, 5),
          event('analytics.update', { tenantId: 'tenant-c', mode: 'live', workspace: null }, 6),
          event('user.activity', { ...scopeA, tenantId: 'tenant-d' }, 6),
          event('system.health', { tenantId: null, mode: null, workspace: null }, 6),
        ]);
        const search = (scope: Scope, minute: number, ms: number) => storage.searchLog.appendMany([{
          scope, userId: 'u', surface: 'g4', kind: 'semantic', query: 'q', resultsCount: 1, executionMs: ms, avgScore: 0.8, filters: {}, at: at(minute),
        }]);
        await search(scopeA, 6, 10);
        await search({ ...scopeA, workspace: 'w2' }, 8, 30);
        await search(scopeA, 20, 1000);
        await search(scopeB, 6, 500);

        // The window is (start, end]: minute 10 is in, minute 2 is out.
        expect(await storage.usage.counts(scopeA.tenantId, 'live', at(2), at(10))).toEqual({
          totalMemories: 2, creates: 2, updates: 1, deletes: 1, searches: 2, avgSearchMs: 20,
        });
        expect(await storage.usage.counts('nobody', 'live', at(0), at(60))).toEqual({
          totalMemories: 0, creates: 0, updates: 0, deletes: 0, searches: 0, avgSearchMs: null,
        });
        expect(await storage.usage.activeScopes(at(2), at(10))).toEqual([
          { tenantId: scopeA.tenantId, mode: 'live' }, { tenantId: scopeA.tenantId, mode: 'test' },
        ]);
      });
    });

    describe('request metrics (G7 analytics)', () => {
      it('stores a flush in one write and lists a tenant + mode\'s rows by minute in [from, to), oldest first', async () => {
        const minute = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
        await storage.requestMetrics.append([
          metricRow({ minute: minute(5), requests: 3, histogram: { 10: 2, 40: 1 } }),
          metricRow({ minute: minute(1), route: 'POST /api/v1/memories', statusClass: 4 }),
          metricRow({ minute: minute(10) }),
          metricRow({ minute: minute(5), tenantId: scopeB.tenantId }),
          metricRow({ minute: minute(5), mode: 'test' }),
        ]);
        await storage.requestMetrics.append([]);
        const rows = await storage.requestMetrics.list(scopeA.tenantId, 'live', minute(1), minute(10));
        expect(rows.map((r) => r.minute.getTime())).toEqual([minute(1).getTime(), minute(5).getTime()]);
        expect(rows[0]).toEqual(metricRow({ minute: minute(1), route: 'POST /api/v1/memories', statusClass: 4 }));
        expect(rows[1]).toEqual(metricRow({ minute: minute(5), requests: 3, histogram: { 10: 2, 40: 1 } }));
        expect(await storage.requestMetrics.list('nobody', 'live', minute(0), minute(60))).toEqual([]);
      });

      it('sums a minute\'s rows (every route, key, user and flush) and counts distinct users', async () => {
        const minute = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
        await storage.requestMetrics.append([
          metricRow({ minute: minute(5), requests: 3, latencySumMs: 30, histogram: { 10: 2, 40: 1 } }),
          metricRow({ minute: minute(5), route: 'POST /x', userId: 'u2', statusClass: 4, requests: 2, latencySumMs: 5, histogram: { 10: 2 } }),
          metricRow({ minute: minute(5), userId: '', keyId: '', statusClass: 5, requests: 1, latencySumMs: 100, histogram: { 50: 1 } }),
          metricRow({ minute: minute(7), userId: 'u3' }),
          metricRow({ minute: minute(9), userId: 'u4' }),
          metricRow({ minute: minute(5), tenantId: scopeB.tenantId, userId: 'other', requests: 50 }),
          metricRow({ minute: minute(5), mode: 'test', userId: 'test-user', requests: 50 }),
        ]);
        // A second flush of the same minute.
        await storage.requestMetrics.append([metricRow({ minute: minute(5), requests: 1, latencySumMs: 1, histogram: { 10: 1 } })]);
        expect(await storage.requestMetrics.minutes(scopeA.tenantId, 'live', minute(5), minute(9))).toEqual([
          { minute: minute(5), requests: 7, errors: 3, serverErrors: 1, latencySumMs: 136, histogram: { 10: 5, 40: 1, 50: 1 } },
          { minute: minute(7), requests: 1, errors: 0, serverErrors: 0, latencySumMs: 12.5, histogram: { 22: 1 } },
        ]);
        expect(await storage.requestMetrics.activeUsers(scopeA.tenantId, 'live', minute(5), minute(9))).toBe(3); // u1, u2, u3
        expect(await storage.requestMetrics.minutes('nobody', 'live', minute(0), minute(60))).toEqual([]);
        expect(await storage.requestMetrics.activeUsers('nobody', 'live', minute(0), minute(60))).toBe(0);
      });

      it('prunes rows of minutes before a time', async () => {
        const minute = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
        await storage.requestMetrics.append([metricRow({ minute: minute(1) }), metricRow({ minute: minute(2) }), metricRow({ minute: minute(3) })]);
        expect(await storage.requestMetrics.prune(minute(3))).toBe(2);
        expect((await storage.requestMetrics.list(scopeA.tenantId, 'live', minute(0), minute(60))).map((r) => r.minute)).toEqual([minute(3)]);
      });
    });

    describe('usage figures (G7 report)', () => {
      const at = (minute: number, second = 0) => new Date(Date.UTC(2026, 0, 1, 0, minute, second));
      it('sizes memories by memory_type (UTF-8 bytes of title + content), with the part created since a time', async () => {
        await storage.memories.insert(makeMemory(scopeA, { title: 'é', content: '12345', memoryType: 'fact', createdAt: at(1) }), vec(0));
        await storage.memories.insert(makeMemory({ ...scopeA, workspace: 'w2' }, { title: 'a', content: '1234567890', memoryType: 'fact', createdAt: at(9) }), vec(0));
        await storage.memories.insert(makeMemory(scopeA, { title: 'b', content: '1', memoryType: 'context', createdAt: at(9) }), vec(0));
        await storage.memories.insert(makeMemory(scopeB, { title: 'other', content: 'tenant', memoryType: 'fact' }), vec(0));
        expect(await storage.usage.memoryStorage(scopeA.tenantId, 'live', at(5))).toEqual([
          { memoryType: 'fact', count: 2, bytes: 18, bytesSince: 11 },
          { memoryType: 'context', count: 1, bytes: 2, bytesSince: 2 },
        ]);
        expect(await storage.usage.memoryStorage('nobody', 'live', at(0))).toEqual([]);
      });

      it('counts searches and memory operations per minute in [from, to), and ranks queries', async () => {
        const search = (scope: Scope, minute: number, second: number, query: string, ms: number) => storage.searchLog.appendMany([{
          scope, userId: 'u', surface: 'g1', kind: 'keyword', query, resultsCount: 1, executionMs: ms, avgScore: 0.5, filters: {}, at: at(minute, second),
        }]);
        await search(scopeA, 1, 0, 'Deploy', 10);
        await search(scopeA, 1, 59, 'deploy ', 30);
        await search({ ...scopeA, workspace: 'w2' }, 3, 5, 'lunch', 5);
        await search(scopeA, 3, 6, '', 7);
        await search(scopeA, 10, 0, 'late', 1);
        await search(scopeB, 1, 0, 'deploy', 100);
        expect(await storage.usage.searchesPerMinute(scopeA.tenantId, 'live', at(1), at(10))).toEqual([
          { minute: at(1), count: 2, totalMs: 40 }, { minute: at(3), count: 2, totalMs: 12 },
        ]);
        expect(await storage.usage.topQueries(scopeA.tenantId, 'live', at(1), at(10), 5)).toEqual([
          { query: 'deploy', count: 2, avgMs: 20 }, { query: 'lunch', count: 1, avgMs: 5 },
        ]);
        expect(await storage.usage.topQueries(scopeA.tenantId, 'live', at(1), at(10), 1)).toHaveLength(1);
        const event = (type: string, scope: Scope, minute: number, second: number): NewEvent =>
          ({ id: `evt_${randomUUID()}`, type, scope: { ...scope }, createdAt: at(minute, second), data: {} });
        await storage.events.append([
          event('memory.created', scopeA, 2, 1), event('memory.updated', scopeA, 2, 30), event('memory.deleted', { ...scopeA, workspace: 'w2' }, 4, 0),
          event('search.performed', scopeA, 2, 0), event('memory.created', scopeB, 2, 0), event('memory.created', scopeA, 10, 0),
        ]);
        expect(await storage.usage.operationsPerMinute(scopeA.tenantId, 'live', at(1), at(10))).toEqual([
          { minute: at(2), count: 2, totalMs: 0 }, { minute: at(4), count: 1, totalMs: 0 },
        ]);
      });

      it('sums the model calls and tokens of the ingestion jobs finished in [from, to), per minute', async () => {
        /** Stores a job, then has a worker claim it and end it at `finishedAt` (null: parked for a review). */
        const ran = async (scope: Scope, modelCalls: number, tokens: [prompt: number, completion: number], finishedAt: Date | null) => {
          await storage.ingestions.insert(makeIngestion(scope));
          const leased = (await storage.ingestions.claimNext(at(0), 60_000, 100))!;
          expect(await storage.ingestions.finish(leased.job.id, leased.lease, {
            state: finishedAt === null ? 'pending_review' : 'completed', proposals: [], error: null, promptVersion: 'v1',
            usage: { model: 'm', modelCalls, promptTokens: tokens[0], completionTokens: tokens[1] }, updatedAt: finishedAt ?? at(3), finishedAt,
          })).toBe(true);
        };
        await ran(scopeA, 2, [100, 20], at(1, 0));
        await ran({ ...scopeA, workspace: 'w2' }, 1, [50, 5], at(1, 59));
        await ran(scopeA, 3, [300, 30], at(4, 0));
        await ran(scopeA, 1, [7, 7], null); // waiting for a review: not finished
        await ran(scopeA, 0, [0, 0], at(5, 0)); // a `raw` job: no model calls
        await ran(scopeA, 1, [9, 9], at(10, 0)); // at `to`: out
        await ran(scopeB, 1, [1000, 100], at(2, 0));
        await ran({ ...scopeA, mode: 'test' }, 1, [1000, 100], at(2, 0));
        expect(await storage.usage.llmUsagePerMinute(scopeA.tenantId, 'live', at(1), at(10))).toEqual([
          { minute: at(1), modelCalls: 3, promptTokens: 150, completionTokens: 25 },
          { minute: at(4), modelCalls: 3, promptTokens: 300, completionTokens: 30 },
        ]);
        expect(await storage.usage.llmUsagePerMinute('nobody', 'live', at(0), at(60))).toEqual([]);
      });
    });

    describe('api keys', () => {
      const t0 = new Date(Date.UTC(2026, 0, 1));
      const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
      const record = (over: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
        id: `key_${randomUUID().replace(/-/g, '')}`, tenantId: 't1', userId: 'u1', name: 'CI deploys', tier: 'pro', mode: 'live',
        scopes: ['memories:read'], displayPrefix: 'mnemo_live_abcd', digest: randomUUID().replace(/-/g, '').padEnd(64, '0'),
        createdAt: t0, expiresAt: null, revokedAt: null, replacedBy: null, ...over,
      });
      const live: ApiKeyOwner = { tenantId: 't1', mode: 'live' };
      const strangers: ApiKeyOwner[] = [{ tenantId: 't1', mode: 'test' }, { tenantId: 't2', mode: 'live' }];
      async function insert(over: Partial<ApiKeyRecord> = {}): Promise<ApiKeyRecord> {
        const k = record(over);
        await storage.apiKeys.insert(k);
        return k;
      }

      it('stores keys by digest and finds them', async () => {
        const k = await insert({ name: 'Zoë\'s laptop ✓', scopes: ['secrets:read', 'apikeys:manage'], expiresAt: at(3600), replacedBy: 'key_next' });
        expect(await storage.apiKeys.findByDigest(k.digest)).toEqual(k);
        expect(await storage.apiKeys.findById(k.id)).toEqual(k);
        expect(await storage.apiKeys.find(live, k.id)).toEqual(k);
        expect(await storage.apiKeys.findByDigest('0'.repeat(64))).toBeNull();
      });

      it('revokes once and lists per tenant', async () => {
        const k1 = await insert();
        const k2 = await insert({ tenantId: 't2' });
        expect(await storage.apiKeys.revoke(k1.id, at(60))).toBe(true);
        expect(await storage.apiKeys.revoke(k1.id, at(61))).toBe(false);
        expect((await storage.apiKeys.findById(k1.id))!.revokedAt).toEqual(at(60));
        expect((await storage.apiKeys.list('t2')).map((k) => k.id)).toEqual([k2.id]);
        expect(await storage.apiKeys.list()).toHaveLength(2);
      });

      it("finds, lists, updates and rotates a key for its owner only: another tenant's or mode's answers as missing", async () => {
        const k = await insert();
        for (const owner of strangers) {
          expect(await storage.apiKeys.find(owner, k.id)).toBeNull();
          expect(await storage.apiKeys.listPage(owner, { limit: 10, after: null })).toEqual({ items: [], total: 0 });
          expect(await storage.apiKeys.update(owner, k.id, { name: 'pwned', scopes: ['apikeys:manage'] })).toBeNull();
          expect(await storage.apiKeys.rotate(owner, k.id, record({ tenantId: owner.tenantId, mode: owner.mode }), at(10), at(1))).toBe(false);
        }
        expect(await storage.apiKeys.find(live, k.id)).toEqual(k);
        expect(await storage.apiKeys.list()).toHaveLength(1);
      });

      it("pages an owner's keys oldest first (ties by id, byte-wise), revoked and replaced ones too, with the total", async () => {
        const keys = [
          await insert({ id: 'key_b', createdAt: at(2) }),
          await insert({ id: 'key_a', createdAt: at(1), revokedAt: at(5) }),
          // Same instant: the id decides, upper case before lower case (byte order).
          await insert({ id: 'key_Z', createdAt: at(3) }),
          await insert({ id: 'key_c', createdAt: at(3), replacedBy: 'key_d', expiresAt: at(100) }),
          await insert({ id: 'key_d', createdAt: at(4) }),
        ];
        await insert({ id: 'key_other_mode', mode: 'test', createdAt: at(1) });
        await insert({ id: 'key_other_tenant', tenantId: 't2', createdAt: at(1) });
        const order = ['key_a', 'key_b', 'key_Z', 'key_c', 'key_d'];
        const seen: string[] = [];
        let after: { createdAt: Date; id: string } | null = null;
        for (let pages = 0; pages < 10; pages++) {
          const page = await storage.apiKeys.listPage(live, { limit: 2, after });
          expect(page.total).toBe(5);
          expect(page.items.length).toBeLessThanOrEqual(2);
          if (page.items.length === 0) break;
          seen.push(...page.items.map((x) => x.id));
          const last: ApiKeyRecord = page.items.at(-1)!;
          after = { createdAt: last.createdAt, id: last.id };
        }
        expect(seen).toEqual(order);
        const all = await storage.apiKeys.listPage(live, { limit: 100, after: null });
        expect(all.items).toEqual(order.map((id) => keys.find((k) => k.id === id)));
      });

      it('updates the name, the scopes or both, and leaves everything else', async () => {
        const k = await insert({ scopes: ['memories:read', 'memories:write'], expiresAt: at(900) });
        const renamed = await storage.apiKeys.update(live, k.id, { name: 'Renamed' });
        expect(renamed).toEqual({ ...k, name: 'Renamed' });
        const narrowed = await storage.apiKeys.update(live, k.id, { scopes: ['memories:read'] });
        expect(narrowed).toEqual({ ...k, name: 'Renamed', scopes: ['memories:read'] });
        const both = await storage.apiKeys.update(live, k.id, { name: 'Both', scopes: ['secrets:read', 'audit:read'] });
        expect(both).toEqual({ ...k, name: 'Both', scopes: ['secrets:read', 'audit:read'] });
        expect(await storage.apiKeys.findByDigest(k.digest)).toEqual(both);
        expect(await storage.apiKeys.update(live, 'key_missing', { name: 'x' })).toBeNull();
      });

      it('rotates a live key once: the old one is marked replaced with its grace expiry, the new one stored, in one step', async () => {
        const old = await insert({ expiresAt: at(10_000) });
        const next = record({ createdAt: at(50) });
        expect(await storage.apiKeys.rotate(live, old.id, next, at(50 + 86_400), at(50))).toBe(true);
        expect(await storage.apiKeys.find(live, old.id)).toEqual({ ...old, replacedBy: next.id, expiresAt: at(50 + 86_400) });
        expect(await storage.apiKeys.findByDigest(next.digest)).toEqual(next);
        // Rotated already: a second rotation writes nothing.
        const again = record();
        expect(await storage.apiKeys.rotate(live, old.id, again, at(60), at(55))).toBe(false);
        expect(await storage.apiKeys.findById(again.id)).toBeNull();
        expect((await storage.apiKeys.find(live, old.id))!.replacedBy).toBe(next.id);

        // A revoked key, an expired one (expiry at or before the instant) and a missing one are not rotated.
        const revoked = await insert({ revokedAt: at(1) });
        const expired = await insert({ expiresAt: at(100) });
        for (const id of [revoked.id, expired.id, 'key_missing']) {
          const r = record();
          expect(await storage.apiKeys.rotate(live, id, r, at(200), at(100)), id).toBe(false);
          expect(await storage.apiKeys.findById(r.id)).toBeNull();
        }
        expect(await storage.apiKeys.find(live, revoked.id)).toEqual(revoked);
        expect(await storage.apiKeys.find(live, expired.id)).toEqual(expired);
        // A grace of zero: the old key's expiry is the instant of rotation.
        const instant = await insert();
        expect(await storage.apiKeys.rotate(live, instant.id, record(), at(7), at(7))).toBe(true);
        expect((await storage.apiKeys.find(live, instant.id))!.expiresAt).toEqual(at(7));
      });

      it('appends a rotation\'s events (and their deliveries) with it, and none when it does not rotate', async () => {
        const scope: EventScope = { tenantId: live.tenantId, mode: live.mode, workspace: null };
        const readAll = () => storage.events.readAfter({ ...live, workspace: null, afterSeq: 0, limit: 100 });
        const rotated = (id: string): NewEvent => ({ id: `evt_${randomUUID()}`, type: 'apikey.rotated', scope, createdAt: at(50), data: { id } });
        await storage.webhooks.insert({
          id: `whk_${randomUUID().replace(/-/g, '')}`, kind: 'g11', scope, url: 'http://127.0.0.1:9/hook', events: ['apikey.rotated'],
          description: null, status: 'active', retryPolicy: { maxAttempts: 7, backoffMultiplier: 1, maxDelayMs: 86_400_000 }, filters: {},
          createdAt: t0, updatedAt: t0, lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
        }, { keyId: 'k1', wrappedKey: 'd2hr', payload: 'c2VjcmV0' });
        const heard: string[] = [];
        const stop = storage.events.onAppended((events) => heard.push(...events.map((e) => e.id)));
        const old = await insert();
        const event = rotated(old.id);
        expect(await storage.apiKeys.rotate(live, old.id, record({ createdAt: at(50) }), at(100), at(50), [event])).toBe(true);
        const [stored] = await readAll();
        expect(stored).toMatchObject({ id: event.id, type: 'apikey.rotated', scope, data: { id: old.id } });
        expect(await storage.webhooks.pendingCount()).toBe(1);
        // Not rotated (already replaced, or another owner's key): nothing is appended.
        expect(await storage.apiKeys.rotate(live, old.id, record(), at(100), at(60), [rotated(old.id)])).toBe(false);
        expect(await storage.apiKeys.rotate(strangers[0]!, (await insert()).id, record(), at(100), at(60), [rotated('x')])).toBe(false);
        stop();
        expect((await readAll()).map((e) => e.id)).toEqual([event.id]);
        expect(heard).toEqual([event.id]);
        expect(await storage.webhooks.pendingCount()).toBe(1);
      });

      it('lets exactly one of several concurrent rotations of one key win', async () => {
        const stores = await connections();
        const old = await insert();
        const replacements = Array.from({ length: 6 }, () => record({ createdAt: at(5) }));
        const results = await Promise.all(replacements.map((r, i) => stores[i % stores.length]!.apiKeys.rotate(live, old.id, r, at(100), at(5))));
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = replacements[results.indexOf(true)]!;
        expect((await storage.apiKeys.find(live, old.id))!.replacedBy).toBe(winner.id);
        for (const r of replacements) expect(await storage.apiKeys.findById(r.id)).toEqual(r === winner ? winner : null);
      });
    });

    describe('secrets', () => {
      const live: SecretOwner = { tenantId: scopeA.tenantId, mode: 'live' };
      const sandbox: SecretOwner = { tenantId: scopeA.tenantId, mode: 'test' };
      const otherTenant: SecretOwner = { tenantId: scopeB.tenantId, mode: 'live' };
      const t0 = new Date(Date.UTC(2026, 0, 1));
      const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
      /** Any strings do: storage never opens a sealed value. */
      const sealed = (n: number | string, keyId = 'k1'): SealedValue => ({ keyId, wrappedKey: `d2s${n}=`, payload: `cGF5${n}` });
      const secret = (owner: SecretOwner, name: string, over: Partial<StoredSecret> = {}): StoredSecret => ({
        id: `sec_${randomUUID()}`, owner: { ...owner }, name, tags: [], version: 1, createdAt: t0, updatedAt: t0, expiresAt: null,
        region: null, createdBy: 'u1', updatedBy: 'u1', ...over,
      });
      const version = (n: number, over: Partial<StoredSecretVersion> = {}): StoredSecretVersion =>
        ({ version: n, sealed: sealed(n), createdAt: at(n), createdBy: `u${n}`, ...over });
      const changes = (n: number, over: Partial<SecretVersionChanges> = {}): SecretVersionChanges =>
        ({ tags: [], expiresAt: null, region: null, updatedAt: at(n), updatedBy: `u${n}`, ...over });
      async function create(owner: SecretOwner, name: string, over: Partial<StoredSecret> = {}, first = version(1)) {
        const s = secret(owner, name, over);
        await storage.secrets.create(s, first);
        return s;
      }
      const query = (over: Partial<SecretListQuery> = {}): SecretListQuery => ({ tagsAny: [], limit: 100, afterName: null, now: t0, ...over });
      const names = async (owner: SecretOwner, over: Partial<SecretListQuery> = {}) =>
        (await storage.secrets.list(owner, query(over))).items.map((s) => s.name);
      async function allSealed(limit: number): Promise<SealedRef[]> {
        const out: SealedRef[] = [];
        for (let after: string | null = null; ;) {
          const page = await storage.secrets.sealedValues(after, limit);
          expect(page.length).toBeLessThanOrEqual(limit);
          if (page.length === 0) return out;
          out.push(...page);
          after = page[page.length - 1]!.ref;
        }
      }

      it('creates a secret with its first version and finds it, the newest or by version', async () => {
        const s = await create(live, 'DB_PASSWORD', { tags: ['db', 'prod'], expiresAt: at(3600), region: 'eu-west-1', createdBy: 'u9', updatedBy: 'u9' });
        expect(await storage.secrets.find(live, 'DB_PASSWORD')).toEqual({ secret: s, version: version(1) });
        expect(await storage.secrets.find(live, 'DB_PASSWORD', 1)).toEqual({ secret: s, version: version(1) });
        expect(await storage.secrets.find(live, 'DB_PASSWORD', 2)).toBeNull();
        expect(await storage.secrets.find(live, 'db_password')).toBeNull();
        expect(await storage.secrets.find(live, 'NOPE')).toBeNull();
      });

      it('refuses a second secret of one name for one owner; another tenant or the test mode has its own, unseen', async () => {
        const first = await create(live, 'API_TOKEN');
        const again = storage.secrets.create(secret(live, 'API_TOKEN'), version(1, { sealed: sealed('other') }));
        await expect(again).rejects.toBeInstanceOf(DomainError);
        await expect(again).rejects.toMatchObject({ code: 'CONFLICT' });
        expect(await storage.secrets.find(live, 'API_TOKEN')).toEqual({ secret: first, version: version(1) });

        const inSandbox = await create(sandbox, 'API_TOKEN', {}, version(1, { sealed: sealed('sandbox') }));
        const ofB = await create(otherTenant, 'API_TOKEN', {}, version(1, { sealed: sealed('b') }));
        expect((await storage.secrets.find(sandbox, 'API_TOKEN'))).toEqual({ secret: inSandbox, version: version(1, { sealed: sealed('sandbox') }) });
        expect((await storage.secrets.find(otherTenant, 'API_TOKEN'))!.secret.id).toBe(ofB.id);
        expect((await storage.secrets.find(live, 'API_TOKEN'))!.version.sealed).toEqual(sealed(1));

        // A secret only the live owner has answers every other owner as a missing one.
        await create(live, 'ONLY_LIVE', { tags: ['t'] });
        for (const owner of [sandbox, otherTenant, { tenantId: 'tenant-c', mode: 'live' } as SecretOwner]) {
          expect(await storage.secrets.find(owner, 'ONLY_LIVE')).toBeNull();
          expect(await storage.secrets.find(owner, 'ONLY_LIVE', 1)).toBeNull();
          expect(await storage.secrets.addVersion(owner, 'ONLY_LIVE', 1, version(2), changes(2), 10)).toBeNull();
          expect(await storage.secrets.delete(owner, 'ONLY_LIVE')).toBe(false);
          expect(await names(owner)).not.toContain('ONLY_LIVE');
          expect((await storage.secrets.list(owner, query({ tagsAny: ['t'] }))).total).toBe(0);
        }
        expect(await storage.secrets.find(live, 'ONLY_LIVE', 1)).not.toBeNull();
        expect(await storage.secrets.find(live, 'ONLY_LIVE', 2)).toBeNull();
        expect(await names(live)).toEqual(['API_TOKEN', 'ONLY_LIVE']);
      });

      it('adds the next version with its changes and returns the secret as stored; a stale version is a conflict', async () => {
        const s = await create(live, 'KEY', { tags: ['a'], region: 'eu' });
        const next = changes(2, { tags: ['b', 'c'], expiresAt: at(86_400), region: 'us-east-1', updatedBy: 'u7' });
        const stored = await storage.secrets.addVersion(live, 'KEY', 1, version(2), next, 10);
        const expected: StoredSecret = { ...s, version: 2, tags: ['b', 'c'], expiresAt: at(86_400), region: 'us-east-1', updatedAt: at(2), updatedBy: 'u7' };
        expect(stored).toEqual(expected);
        expect(await storage.secrets.find(live, 'KEY')).toEqual({ secret: expected, version: version(2) });
        expect(await storage.secrets.find(live, 'KEY', 1)).toEqual({ secret: expected, version: version(1) });
        // Changes replace: no tags, no expiry, no region.
        expect(await storage.secrets.addVersion(live, 'KEY', 2, version(3), changes(3), 10))
          .toEqual({ ...expected, version: 3, tags: [], expiresAt: null, region: null, updatedAt: at(3), updatedBy: 'u3' });

        expect(await storage.secrets.addVersion(live, 'MISSING', 1, version(2), changes(2), 10)).toBeNull();
        for (const stale of [1, 2, 7]) {
          await expect(storage.secrets.addVersion(live, 'KEY', stale, version(stale + 1), changes(9), 10)).rejects.toMatchObject({ code: 'CONFLICT' });
        }
        expect((await storage.secrets.find(live, 'KEY'))!.secret).toMatchObject({ version: 3, updatedAt: at(3) });
        expect(await storage.secrets.find(live, 'KEY', 4)).toBeNull();
      });

      it('appends a creation\'s events (and their deliveries) with it, and none when the creation is refused', async () => {
        const scope: EventScope = { tenantId: live.tenantId, mode: live.mode, workspace: null };
        const readAll = () => storage.events.readAfter({ ...live, workspace: null, afterSeq: 0, limit: 100 });
        const created = (name: string): NewEvent => ({ id: `evt_${randomUUID()}`, type: 'secret.created', scope, createdAt: t0, data: { name } });
        await storage.webhooks.insert({
          id: `whk_${randomUUID().replace(/-/g, '')}`, kind: 'g11', scope, url: 'http://127.0.0.1:9/hook', events: ['secret.created'],
          description: null, status: 'active', retryPolicy: { maxAttempts: 7, backoffMultiplier: 1, maxDelayMs: 86_400_000 }, filters: {},
          createdAt: t0, updatedAt: t0, lastDeliveryAt: null, stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
        }, sealed('hook'));
        const heard: string[] = [];
        const stop = storage.events.onAppended((events) => heard.push(...events.map((e) => e.id)));
        const first = created('API_TOKEN');
        await storage.secrets.create(secret(live, 'API_TOKEN'), version(1), [first]);
        expect(await readAll()).toEqual([expect.objectContaining({ id: first.id, type: 'secret.created', scope, data: { name: 'API_TOKEN' } })]);
        expect(await storage.webhooks.pendingCount()).toBe(1);
        // A duplicate name is refused: neither the secret nor its event is written.
        await expect(storage.secrets.create(secret(live, 'API_TOKEN'), version(1), [created('API_TOKEN')])).rejects.toMatchObject({ code: 'CONFLICT' });
        stop();
        expect((await readAll()).map((e) => e.id)).toEqual([first.id]);
        expect(heard).toEqual([first.id]);
        expect(await storage.webhooks.pendingCount()).toBe(1);
      });

      it('lets exactly one of the writers that read the same version add the next one', async () => {
        const stores = await connections();
        await create(live, 'RACE');
        const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => stores[i % stores.length]!.secrets.addVersion(
          live, 'RACE', 1, version(2, { sealed: sealed(`w${i}`) }), changes(2, { updatedBy: `w${i}` }), 10)));
        const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
        expect(won).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'CONFLICT' });
        const found = await storage.secrets.find(live, 'RACE');
        expect(found!.secret).toMatchObject({ version: 2, updatedBy: `w${won[0]}` });
        expect(found!.version.sealed).toEqual(sealed(`w${won[0]}`));
        expect(await storage.secrets.find(live, 'RACE', 3)).toBeNull();
        expect((await allSealed(100)).length).toBe(2);
      });

      it('keeps exactly the newest `keep` versions', async () => {
        await create(live, 'ROTATED');
        await create(live, 'SHORT');
        for (let v = 2; v <= 6; v++) await storage.secrets.addVersion(live, 'ROTATED', v - 1, version(v), changes(v), 3);
        for (let v = 2; v <= 3; v++) await storage.secrets.addVersion(live, 'SHORT', v - 1, version(v), changes(v), 10);
        for (let v = 1; v <= 6; v++) {
          const found = await storage.secrets.find(live, 'ROTATED', v);
          if (v <= 3) expect(found, `version ${v}`).toBeNull();
          else expect(found!.version).toEqual(version(v));
        }
        expect((await storage.secrets.find(live, 'ROTATED'))!.version).toEqual(version(6));
        for (let v = 1; v <= 3; v++) expect(await storage.secrets.find(live, 'SHORT', v), `version ${v}`).not.toBeNull();
        expect((await allSealed(100)).map((r) => r.context.slice(3))).toEqual(expect.arrayContaining([
          ['ROTATED', '4'], ['ROTATED', '5'], ['ROTATED', '6'], ['SHORT', '1'], ['SHORT', '2'], ['SHORT', '3'],
        ]));
        expect(await allSealed(100)).toHaveLength(6);
      });

      it('deletes a secret with all its versions; the name can then be used again', async () => {
        const gone = await create(live, 'GONE');
        await storage.secrets.addVersion(live, 'GONE', 1, version(2), changes(2), 10);
        await create(live, 'KEPT');
        expect(await storage.secrets.delete(live, 'GONE')).toBe(true);
        expect(await storage.secrets.find(live, 'GONE')).toBeNull();
        expect(await storage.secrets.find(live, 'GONE', 1)).toBeNull();
        expect(await storage.secrets.delete(live, 'GONE')).toBe(false);
        expect(await names(live)).toEqual(['KEPT']);
        expect((await allSealed(100)).map((r) => r.context[3])).toEqual(['KEPT']);
        const reborn = await create(live, 'GONE', {}, version(1, { sealed: sealed('reborn') }));
        expect(reborn.id).not.toBe(gone.id);
        expect(await storage.secrets.find(live, 'GONE')).toEqual({ secret: reborn, version: version(1, { sealed: sealed('reborn') }) });
        expect(await storage.secrets.find(live, 'GONE', 2)).toBeNull();
      });

      it('lists names in byte order, by any of some tags, without expired secrets, a page at a time', async () => {
        // Byte order: upper case before `_` before lower case, and a non-ASCII letter last.
        const rows: [string, string[], Date | null][] = [
          ['b', ['db'], null], ['B', ['ops'], null], ['a', ['db', 'ops'], at(1)], ['Z', [], null], ['\u00e9t\u00e9', ['db'], null],
          ['_x', ['misc'], null], ['a2', ['ops'], at(86_400)],
          // Expired: at or before `now`, whatever their tags.
          ['expired', ['db'], t0], ['long-expired', ['ops'], at(-3600)],
        ];
        for (const [name, tags, expiresAt] of rows) await create(live, name, { tags, expiresAt });
        await create(sandbox, 'a', { tags: ['db'] });
        await create(otherTenant, 'a0', { tags: ['db'] });
        const everything = ['B', 'Z', '_x', 'a', 'a2', 'b', '\u00e9t\u00e9'];

        const all = await storage.secrets.list(live, query());
        expect(all.items.map((s) => s.name)).toEqual(everything);
        expect(all.total).toBe(7);
        expect(all.items.find((s) => s.name === 'a')).toMatchObject({ tags: ['db', 'ops'], expiresAt: at(1), owner: live });
        expect(await storage.secrets.list(live, query({ tagsAny: ['db'] }))).toMatchObject({ total: 3 });
        expect(await names(live, { tagsAny: ['db'] })).toEqual(['a', 'b', '\u00e9t\u00e9']);
        expect(await names(live, { tagsAny: ['db', 'ops'] })).toEqual(['B', 'a', 'a2', 'b', '\u00e9t\u00e9']);
        expect(await storage.secrets.list(live, query({ tagsAny: ['nothing'] }))).toEqual({ items: [], total: 0 });
        // Later, `a` has expired too.
        expect(await names(live, { now: at(1) })).toEqual(everything.filter((n) => n !== 'a'));
        // The expired ones are still there for find (the service decides what an expired secret answers).
        expect(await storage.secrets.find(live, 'expired')).not.toBeNull();

        // Pages: after the last name of the previous page; every page counts the whole match.
        for (const [limit, tagsAny, expected] of [[2, [], everything], [1, ['ops'], ['B', 'a', 'a2']], [3, ['db'], ['a', 'b', '\u00e9t\u00e9']]] as const) {
          const seen: string[] = [];
          for (let afterName: string | null = null; ;) {
            const page = await storage.secrets.list(live, query({ limit, afterName, tagsAny: [...tagsAny] }));
            expect(page.total).toBe(expected.length);
            expect(page.items.length).toBeLessThanOrEqual(limit);
            if (page.items.length === 0) break;
            seen.push(...page.items.map((s) => s.name));
            afterName = page.items[page.items.length - 1]!.name;
          }
          expect(seen).toEqual(expected);
        }
        // A cursor need not be a stored name.
        expect(await names(live, { afterName: 'a1' })).toEqual(['a2', 'b', '\u00e9t\u00e9']);
        expect(await names(live, { afterName: '\u00e9t\u00e9' })).toEqual([]);
      });

      it('lists by region (X-Region of the last write), exactly, with tags and pages', async () => {
        await create(live, 'eu-1', { region: 'eu-west-1', tags: ['db'] });
        await create(live, 'eu-2', { region: 'eu-west-1' });
        await create(live, 'us-1', { region: 'us-east-1', tags: ['db'] });
        await create(live, 'none');
        await create(sandbox, 'eu-sandbox', { region: 'eu-west-1' });
        await create(otherTenant, 'eu-other', { region: 'eu-west-1' });
        expect(await storage.secrets.list(live, query({ region: 'eu-west-1' }))).toMatchObject({ total: 2, items: [{ name: 'eu-1' }, { name: 'eu-2' }] });
        expect(await names(live, { region: 'EU-WEST-1' })).toEqual([]);
        expect(await names(live, { region: 'eu-west-1', tagsAny: ['db'] })).toEqual(['eu-1']);
        expect(await storage.secrets.list(live, query({ region: 'eu-west-1', limit: 1, afterName: 'eu-1' }))).toMatchObject({ total: 2, items: [{ name: 'eu-2' }] });
        // A new version moves the secret to the region of its write.
        await storage.secrets.addVersion(live, 'none', 1, version(2), changes(2, { region: 'us-east-1' }), 10);
        expect(await names(live, { region: 'us-east-1' })).toEqual(['none', 'us-1']);
        expect(await names(live)).toEqual(['eu-1', 'eu-2', 'none', 'us-1']);
      });

      it('pages through every sealed value of every owner, in a stable order, and re-wraps one in place', async () => {
        const expected: SealedRef[] = [];
        const add = async (owner: SecretOwner, name: string, versions: number) => {
          await create(owner, name, {}, version(1, { sealed: sealed(`${owner.tenantId}/${owner.mode}/${name}/1`) }));
          for (let v = 2; v <= versions; v++) {
            await storage.secrets.addVersion(owner, name, v - 1, version(v, { sealed: sealed(`${owner.tenantId}/${owner.mode}/${name}/${v}`) }), changes(v), 10);
          }
          for (let v = 1; v <= versions; v++) {
            expected.push({ ref: '', context: secretVersionContext(owner, name, v), sealed: sealed(`${owner.tenantId}/${owner.mode}/${name}/${v}`) });
          }
        };
        await add(live, 'ONE', 3);
        await add(live, 'TWO', 1);
        await add(sandbox, 'ONE', 2);
        await add(otherTenant, 'THREE', 1);
        // Key checks are not among them (rotation keeps each key's own check value).
        await storage.secrets.putKeyCheck('k1', sealed('check'));

        const all = await allSealed(100);
        const withoutRef = (refs: SealedRef[]) => refs.map((r) => ({ context: r.context, sealed: r.sealed }));
        const byContext = (refs: { context: string[] }[]) => [...refs].sort((x, y) => (x.context.join('\u0000') < y.context.join('\u0000') ? -1 : 1));
        expect(byContext(withoutRef(all))).toEqual(byContext(withoutRef(expected)));
        expect(new Set(all.map((r) => r.ref)).size).toBe(all.length);
        for (const r of all) expect(typeof r.ref).toBe('string');
        // Any page size walks the same order.
        expect(await allSealed(1)).toEqual(all);
        expect(await allSealed(3)).toEqual(all);
        // Versions of one secret come in ascending order.
        const ones = all.filter((r) => r.context[1] === live.tenantId && r.context[2] === 'live' && r.context[3] === 'ONE');
        expect(ones.map((r) => r.context[4])).toEqual(['1', '2', '3']);

        // Re-wrapping replaces that one value only, in place.
        const target = ones[1]!;
        const rewrapped = sealed('rewrapped', 'k2');
        await storage.secrets.rewrap(target.ref, rewrapped);
        expect((await storage.secrets.find(live, 'ONE', 2))!.version).toEqual(version(2, { sealed: rewrapped }));
        const after = await allSealed(2);
        expect(after).toEqual(all.map((r) => (r.ref === target.ref ? { ...r, sealed: rewrapped } : r)));
        expect((await storage.secrets.find(live, 'ONE', 1))!.version.sealed).toEqual(sealed(`${live.tenantId}/live/ONE/1`));
        expect((await storage.secrets.find(sandbox, 'ONE', 2))!.version.sealed).toEqual(sealed(`${sandbox.tenantId}/test/ONE/2`));
        expect(await storage.secrets.keyCheck('k1')).toEqual(sealed('check'));
        // A value deleted meanwhile is simply no longer there to re-wrap.
        const gone = all.find((r) => r.context[3] === 'THREE')!;
        expect(await storage.secrets.delete(otherTenant, 'THREE')).toBe(true);
        await storage.secrets.rewrap(gone.ref, rewrapped);
        expect(await allSealed(100)).toHaveLength(all.length - 1);
      });

      it('keeps the first check value stored for each master key', async () => {
        expect(await storage.secrets.keyCheck('k1')).toBeNull();
        expect(await storage.secrets.keyCheckIds()).toEqual([]);
        await storage.secrets.putKeyCheck('k1', sealed('first'));
        await storage.secrets.putKeyCheck('k1', sealed('second'));
        expect(await storage.secrets.keyCheck('k1')).toEqual(sealed('first'));
        await storage.secrets.putKeyCheck('k0', sealed('zero', 'k0'));
        expect(await storage.secrets.keyCheck('k0')).toEqual(sealed('zero', 'k0'));
        expect(await storage.secrets.keyCheck('k2')).toBeNull();
        expect(await storage.secrets.keyCheckIds()).toEqual(['k0', 'k1']);
      });

      it('forgets the check value of a retired key, and only that one', async () => {
        await storage.secrets.putKeyCheck('k0', sealed('zero', 'k0'));
        await storage.secrets.putKeyCheck('k1', sealed('one'));
        expect(await storage.secrets.deleteKeyCheck('k0')).toBe(true);
        expect(await storage.secrets.deleteKeyCheck('k0')).toBe(false);
        expect(await storage.secrets.deleteKeyCheck('k9')).toBe(false);
        expect(await storage.secrets.keyCheckIds()).toEqual(['k1']);
        expect(await storage.secrets.keyCheck('k0')).toBeNull();
        expect(await storage.secrets.keyCheck('k1')).toEqual(sealed('one'));
        // A key that seals again later gets a new check value.
        await storage.secrets.putKeyCheck('k0', sealed('again', 'k0'));
        expect(await storage.secrets.keyCheck('k0')).toEqual(sealed('again', 'k0'));
      });
    });

    describe('G11 idempotent requests', () => {
      const t0 = new Date(Date.UTC(2026, 0, 1));
      const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
      const ref = (over: Partial<IdempotentRequestRef> = {}): IdempotentRequestRef =>
        ({ tenantId: scopeA.tenantId, mode: 'live', apiKeyId: 'key_1', key: 'order-1', ...over });
      /** A reservation at `seconds`, locked for a minute, with records older than a day expired. */
      const reservation = (name: string, seconds = 0): IdempotentReservation =>
        ({ reservation: name, at: at(seconds), lockedUntil: at(seconds + 60), notBefore: at(seconds - 86_400 + 1) });
      /** Any strings do: storage never opens a sealed value. */
      const sealed = (n: number | string, keyId = 'k1'): SealedValue => ({ keyId, wrappedKey: `d3I${n}=`, payload: `YW5z${n}` });
      async function answered(r: IdempotentRequestRef, name: string, seconds = 0, value = sealed(name)) {
        expect(await storage.idempotentRequests.reserve(r, reservation(name, seconds))).toEqual({ kind: 'reserved' });
        expect(await storage.idempotentRequests.complete(r, name, value)).toBe(true);
      }
      async function allSealed(limit: number): Promise<SealedRef[]> {
        const out: SealedRef[] = [];
        for (let after: string | null = null; ;) {
          const page = await storage.idempotentRequests.sealedValues(after, limit);
          expect(page.length).toBeLessThanOrEqual(limit);
          if (page.length === 0) return out;
          out.push(...page);
          after = page[page.length - 1]!.ref;
        }
      }

      it('reserves a key once; only its reservation completes it; then answers with the sealed record', async () => {
        const r = ref();
        expect(await storage.idempotentRequests.reserve(r, reservation('r1'))).toEqual({ kind: 'reserved' });
        expect(await storage.idempotentRequests.reserve(r, reservation('r2', 59))).toEqual({ kind: 'in_progress' });
        expect(await storage.idempotentRequests.complete(r, 'r2', sealed('wrong'))).toBe(false);
        expect(await storage.idempotentRequests.complete(r, 'r1', sealed(1))).toBe(true);
        // Once: a second completion, or a release, of an answered key changes nothing.
        expect(await storage.idempotentRequests.complete(r, 'r1', sealed(2))).toBe(false);
        expect(await storage.idempotentRequests.release(r, 'r1')).toBe(false);
        expect(await storage.idempotentRequests.reserve(r, reservation('r3', 3600))).toEqual({ kind: 'completed', reservation: 'r1', createdAt: t0, sealed: sealed(1) });

        // Every part of the key counts: another tenant, mode, API key or key text is another key.
        for (const other of [ref({ tenantId: scopeB.tenantId }), ref({ mode: 'test' }), ref({ apiKeyId: 'key_2' }), ref({ key: 'order-2' }), ref({ key: 'ORDER-1' })]) {
          expect(await storage.idempotentRequests.reserve(other, reservation('o1', 10)), JSON.stringify(other)).toEqual({ kind: 'reserved' });
        }
        expect(await storage.idempotentRequests.reserve(r, reservation('r4', 20))).toMatchObject({ kind: 'completed', reservation: 'r1' });
      });

      it('frees a key when its reservation is released, and only by that reservation', async () => {
        const r = ref();
        await storage.idempotentRequests.reserve(r, reservation('r1'));
        expect(await storage.idempotentRequests.release(r, 'other')).toBe(false);
        expect(await storage.idempotentRequests.reserve(r, reservation('r2', 1))).toEqual({ kind: 'in_progress' });
        expect(await storage.idempotentRequests.release(r, 'r1')).toBe(true);
        expect(await storage.idempotentRequests.release(r, 'r1')).toBe(false);
        expect(await storage.idempotentRequests.reserve(r, reservation('r2', 2))).toEqual({ kind: 'reserved' });
      });

      it('lets a new reservation take a key whose lock lapsed; the old one can then neither complete nor release it', async () => {
        const r = ref();
        await storage.idempotentRequests.reserve(r, reservation('dead'));
        expect(await storage.idempotentRequests.reserve(r, reservation('early', 59))).toEqual({ kind: 'in_progress' });
        expect(await storage.idempotentRequests.reserve(r, reservation('late', 60))).toEqual({ kind: 'reserved' });
        expect(await storage.idempotentRequests.complete(r, 'dead', sealed('dead'))).toBe(false);
        expect(await storage.idempotentRequests.release(r, 'dead')).toBe(false);
        expect(await storage.idempotentRequests.complete(r, 'late', sealed('late'))).toBe(true);
        // The lifetime counts from the new reservation.
        expect(await storage.idempotentRequests.reserve(r, reservation('next', 60 + 86_399))).toMatchObject({ kind: 'completed', reservation: 'late', createdAt: at(60) });
      });

      it('replaces an expired record as if absent', async () => {
        const r = ref();
        await answered(r, 'old');
        expect(await storage.idempotentRequests.reserve(r, reservation('x', 86_399))).toMatchObject({ kind: 'completed', reservation: 'old' });
        expect(await storage.idempotentRequests.reserve(r, reservation('new', 86_400))).toEqual({ kind: 'reserved' });
        // The old answer is gone with it: the key is pending again.
        expect(await storage.idempotentRequests.reserve(r, reservation('y', 86_401))).toEqual({ kind: 'in_progress' });
        expect(await storage.idempotentRequests.sealedValues(null, 10)).toEqual([]);
      });

      it('reserves once when callers race on one key', async () => {
        const stores = await connections();
        const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
          stores[i % stores.length]!.idempotentRequests.reserve(ref(), reservation(`r${i}`))));
        expect(results.filter((x) => x.kind === 'reserved')).toHaveLength(1);
        expect(results.filter((x) => x.kind === 'in_progress')).toHaveLength(7);
        // And once when they race to take over a lapsed reservation.
        const takeover = await Promise.all(Array.from({ length: 8 }, (_, i) =>
          stores[i % stores.length]!.idempotentRequests.reserve(ref(), reservation(`t${i}`, 61))));
        expect(takeover.filter((x) => x.kind === 'reserved')).toHaveLength(1);
      });

      it('prunes rows created before a cut, answered or not', async () => {
        await answered(ref({ key: 'a' }), 'a', 0);
        await storage.idempotentRequests.reserve(ref({ key: 'b' }), reservation('b', 10));
        await answered(ref({ key: 'c', tenantId: scopeB.tenantId }), 'c', 20);
        expect(await storage.idempotentRequests.prune(at(20))).toBe(2);
        expect(await storage.idempotentRequests.prune(at(20))).toBe(0);
        expect(await storage.idempotentRequests.reserve(ref({ key: 'a' }), reservation('a2', 30))).toEqual({ kind: 'reserved' });
        expect(await storage.idempotentRequests.reserve(ref({ key: 'c', tenantId: scopeB.tenantId }), reservation('c2', 30)))
          .toMatchObject({ kind: 'completed', reservation: 'c' });
      });

      it('pages through every kept answer in a stable order, and re-wraps one in place (not a later answer of its key)', async () => {
        const refs = [
          ref(), ref({ key: 'a key, with "quotes" and [brackets]' }), ref({ apiKeyId: 'key_0' }), ref({ mode: 'test' }),
          ref({ tenantId: scopeB.tenantId }), ref({ key: 'order-0' }),
        ];
        for (const [i, r] of refs.entries()) await answered(r, `res${i}`, i);
        // A pending reservation has nothing sealed.
        await storage.idempotentRequests.reserve(ref({ key: 'pending' }), reservation('p'));
        const all = await allSealed(100);
        expect(all).toHaveLength(refs.length);
        const byContext = (xs: { context: string[] }[]) => xs.map((x) => x.context.join('\u0000')).sort();
        expect(byContext(all)).toEqual(byContext(refs.map((r, i) => ({ context: idempotentRecordContext(r, `res${i}`) }))));
        for (const x of all) expect(x.sealed).toEqual(sealed(x.context.at(-1)!));
        expect(new Set(all.map((x) => x.ref)).size).toBe(all.length);
        expect(await allSealed(1)).toEqual(all);
        expect(await allSealed(4)).toEqual(all);

        const target = all[2]!;
        await storage.idempotentRequests.rewrap(target.ref, sealed('rewrapped', 'k2'));
        expect(await allSealed(3)).toEqual(all.map((x) => (x.ref === target.ref ? { ...x, sealed: sealed('rewrapped', 'k2') } : x)));
        const [tenantId, mode, apiKeyId, key] = target.context.slice(1, 5) as [string, 'live' | 'test', string, string];
        expect(await storage.idempotentRequests.reserve({ tenantId, mode, apiKeyId, key }, reservation('look', 10)))
          .toMatchObject({ kind: 'completed', sealed: sealed('rewrapped', 'k2') });

        // The key expired and was answered again meanwhile: the old ref re-wraps nothing.
        const first = all[0]!;
        const [t1, m1, k1, key1] = first.context.slice(1, 5) as [string, 'live' | 'test', string, string];
        const again = { tenantId: t1, mode: m1, apiKeyId: k1, key: key1 };
        await answered(again, 'newer', 86_400 * 2);
        await storage.idempotentRequests.rewrap(first.ref, sealed('stale', 'k2'));
        expect(await storage.idempotentRequests.reserve(again, reservation('look2', 86_400 * 2 + 1)))
          .toMatchObject({ kind: 'completed', reservation: 'newer', sealed: sealed('newer') });
      });
    });

    describe('audit log', () => {
      const live: AuditOwner = { tenantId: scopeA.tenantId, mode: 'live' };
      const sandbox: AuditOwner = { tenantId: scopeA.tenantId, mode: 'test' };
      const otherTenant: AuditOwner = { tenantId: scopeB.tenantId, mode: 'live' };
      const t0 = Date.UTC(2026, 5, 1, 12);
      let n = 0;
      const entry = (owner: AuditOwner, over: Partial<AuditEntry> = {}): AuditEntry => {
        n++;
        return {
          id: `aud_${randomUUID().replaceAll('-', '')}`, owner: { ...owner }, timestamp: new Date(t0 + n * 1000),
          actor: { userId: 'u1', keyId: 'key_1' }, action: 'secret.read', resource: `secret:s${n}`, outcome: 'success', status: 200,
          ip: '10.0.0.1', userAgent: 'agent/1', region: null, requestId: `req_${n}`, metadata: { version: n, note: 'é "q"', ok: true, none: null },
          ...over,
        };
      };
      const query = (over: Partial<AuditListQuery> = {}): AuditListQuery => ({ filter: {}, order: 'asc', afterSeq: null, limit: 100, ...over });
      const ids = async (owner: AuditOwner, over: Partial<AuditListQuery> = {}) => (await storage.audit.list(owner, query(over))).items.map((r) => r.id);
      async function appendAll(owner: AuditOwner, count: number, over: Partial<AuditEntry> = {}): Promise<AuditRow[]> {
        const rows: AuditRow[] = [];
        for (let i = 0; i < count; i++) rows.push(await storage.audit.append(entry(owner, over), auditSigner));
        return rows;
      }

      it('appends rows to the owner\'s chain and reads them back exactly as hashed', async () => {
        const first = entry(live, { actor: { userId: 'u1', keyId: null }, region: 'eu-west-1', userAgent: null, ip: null, requestId: null, metadata: {} });
        const rows = [await storage.audit.append(first, auditSigner), ...(await appendAll(live, 2))];
        expect(rows.map((r) => r.seq)).toEqual([1, 2, 3]);
        expect(rows[0]).toEqual({ ...first, seq: 1, prevHash: GENESIS_HASH, hash: auditRowHash({ ...first, seq: 1, prevHash: GENESIS_HASH }) });
        expect(rows[1]!.prevHash).toBe(rows[0]!.hash);
        expect(rows[2]!.prevHash).toBe(rows[1]!.hash);
        for (const r of rows) {
          const read = await storage.audit.findById(live, r.id);
          expect(read).toEqual(r);
          expect(auditRowHash(read!)).toBe(r.hash);
        }
        expect(await storage.audit.list(live, query())).toEqual({ items: rows, total: 3 });
        expect(await storage.audit.scan(null, 10)).toEqual(rows);
      });

      it('keeps one chain per tenant and mode, each invisible to the others', async () => {
        const a = await appendAll(live, 2);
        const s = await appendAll(sandbox, 1);
        const b = await appendAll(otherTenant, 3);
        expect([a, s, b].map((rows) => rows.map((r) => r.seq))).toEqual([[1, 2], [1], [1, 2, 3]]);
        expect(s[0]!.prevHash).toBe(GENESIS_HASH);
        for (const [owner, others] of [[live, [...s, ...b]], [sandbox, [...a, ...b]], [otherTenant, [...a, ...s]]] as const) {
          for (const r of others) expect(await storage.audit.findById(owner, r.id)).toBeNull();
        }
        expect(await ids(live)).toEqual(a.map((r) => r.id));
        expect(await ids(sandbox)).toEqual(s.map((r) => r.id));
        expect((await storage.audit.list({ tenantId: 'nobody', mode: 'live' }, query())).total).toBe(0);
        // scan walks every chain whole, owners in byte order, any page size alike.
        const all = [...a, ...s, ...b];
        for (const size of [1, 2, 100]) {
          const seen: AuditRow[] = [];
          for (let after: AuditRow | null = null; ;) {
            const page: AuditRow[] = await storage.audit.scan(after && { ...after.owner, seq: after.seq }, size);
            seen.push(...page);
            if (page.length < size) break;
            after = page.at(-1)!;
          }
          expect(seen.map((r) => r.id), `page size ${size}`).toEqual(all.map((r) => r.id));
        }
        expect(await verifyAuditChains(storage.audit, auditSigner, { pageSize: 2 })).toMatchObject({ ok: true, rows: 6 });
      });

      it('filters by actor, action, resource, region and time, newest or oldest first, a page at a time', async () => {
        const rows = [
          await storage.audit.append(entry(live, { actor: { userId: 'alice', keyId: 'key_a' }, action: 'secret.create', resource: 'secret:db', region: 'eu-west-1' }), auditSigner),
          await storage.audit.append(entry(live, { actor: { userId: 'alice', keyId: 'key_b' }, action: 'secret.read', resource: 'secret:db', region: 'us-east-1' }), auditSigner),
          await storage.audit.append(entry(live, { actor: { userId: 'bob', keyId: 'key_c' }, action: 'secret.list', resource: 'secret:*' }), auditSigner),
          await storage.audit.append(entry(live, { actor: { userId: 'bob', keyId: 'key_c' }, action: 'audit.read', resource: 'audit-log:*' }), auditSigner),
          await storage.audit.append(entry(live, { actor: { userId: 'key_a', keyId: 'key_z' }, action: 'secret_x.read', resource: 'secret:db' }), auditSigner),
        ];
        const id = (...i: number[]) => i.map((k) => rows[k]!.id);
        expect(await ids(live, { filter: { actor: 'alice' } })).toEqual(id(0, 1));
        // A key id matches too (and a user named like a key).
        expect(await ids(live, { filter: { actor: 'key_a' } })).toEqual(id(0, 4));
        expect(await ids(live, { filter: { action: { exact: 'secret.read' } } })).toEqual(id(1));
        // A family is a plain prefix: `_` is not a wildcard, `secret.` does not match `secret_x.`.
        expect(await ids(live, { filter: { action: { prefix: 'secret.' } } })).toEqual(id(0, 1, 2));
        expect(await ids(live, { filter: { action: { prefix: 'secret_x.' } } })).toEqual(id(4));
        expect(await ids(live, { filter: { resource: 'secret:db' } })).toEqual(id(0, 1, 4));
        // from is inclusive, to exclusive.
        expect(await ids(live, { filter: { from: rows[1]!.timestamp, to: rows[3]!.timestamp } })).toEqual(id(1, 2));
        expect(await ids(live, { filter: { actor: 'bob', action: { prefix: 'secret.' } } })).toEqual(id(2));
        expect(await ids(live, { filter: { resource: 'secret:none' } })).toEqual([]);
        // A region exactly as recorded (case and all); rows without one match no region.
        expect(await ids(live, { filter: { region: 'eu-west-1' } })).toEqual(id(0));
        expect(await ids(live, { filter: { region: 'EU-WEST-1' } })).toEqual([]);
        expect(await ids(live, { filter: { region: 'us-east-1', resource: 'secret:db' } })).toEqual(id(1));
        expect(await storage.audit.list(live, query({ filter: { region: 'eu-west-1' } }))).toMatchObject({ total: 1 });

        expect(await ids(live, { order: 'desc' })).toEqual(id(4, 3, 2, 1, 0));
        const page = await storage.audit.list(live, query({ order: 'desc', afterSeq: 4, limit: 2, filter: { resource: 'secret:db' } }));
        expect(page.items.map((r) => r.id)).toEqual(id(1, 0));
        expect(page.total).toBe(3);
        const next = await storage.audit.list(live, query({ order: 'asc', afterSeq: 2, limit: 2 }));
        expect(next).toMatchObject({ items: [{ id: rows[2]!.id }, { id: rows[3]!.id }], total: 5 });
      });

      it('makes one unbroken chain of concurrent appends, from every connection', async () => {
        const stores = await connections();
        const appended = await Promise.all(Array.from({ length: 24 }, (_, i) =>
          stores[i % stores.length]!.audit.append(entry(i % 3 === 0 ? sandbox : live), auditSigner)));
        const chainOf = async (owner: AuditOwner) => (await storage.audit.list(owner, query())).items;
        const lives = await chainOf(live);
        expect(lives.map((r) => r.seq)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
        expect((await chainOf(sandbox)).map((r) => r.seq)).toEqual(Array.from({ length: 8 }, (_, i) => i + 1));
        expect(new Set(appended.map((r) => r.id)).size).toBe(24);
        // What each append returned is what was stored.
        for (const r of appended) expect(await storage.audit.findById(r.owner, r.id)).toEqual(r);
        const verified = await verifyAuditChains(storage.audit, auditSigner);
        expect(verified).toMatchObject({ ok: true, rows: 24, broken: [] });
        expect(verified.intact.map((c) => [c.owner.mode, c.headSeq])).toEqual([['live', 16], ['test', 8]]);
        // Each chain's head was replaced in the transaction of each append: it names the last row.
        expect(await storage.audit.head(live)).toMatchObject({ seq: 16, hash: lives.at(-1)!.hash });
      });

      it('signs each chain\'s head in the append\'s transaction: its last row, under the master key, listed by owner', async () => {
        const a = await appendAll(live, 3);
        const b = await appendAll(otherTenant, 1);
        // The MAC is a function of the head: the one signed for the last row is the one stored.
        const headOf = (rows: AuditRow[]) => auditSigner.sign(rows.at(-1)!.owner, rows.at(-1)!, rows.at(-1)!.timestamp);
        expect(await storage.audit.head(live)).toEqual(headOf(a));
        expect(auditSigner.check(headOf(a))).toBe('valid');
        expect(await storage.audit.head(sandbox)).toBeNull();
        const all = [headOf(a), headOf(b)];
        expect(await storage.audit.heads(null, 10)).toEqual(all);
        expect(await storage.audit.heads(null, 1)).toEqual([all[0]]);
        expect(await storage.audit.heads(live, 10)).toEqual([all[1]]);
        // Signed heads are left to themselves by the start's signing of unsigned ones.
        expect(await signUnsignedAuditHeads(storage.audit, auditSigner, new Date())).toEqual([]);
        expect(await storage.audit.heads(null, 10)).toEqual(all);
      });

      describe('tampering through SQL', () => {
        const tamper = extras.audit;
        const verifyBreak = async () => {
          const result = await verifyAuditChains(storage.audit, auditSigner, { pageSize: 2 });
          expect(result.ok).toBe(false);
          // The other tenant's chain still holds.
          expect(result.intact.map((c) => c.owner.tenantId)).toEqual([otherTenant.tenantId]);
          expect(result.broken).toHaveLength(1);
          return result.broken[0]!;
        };
        /** Five rows of `live` and an untouched chain beside them; the guard lifted, as a tamperer would. */
        async function setUp(): Promise<AuditRow[]> {
          const rows = await appendAll(live, 5);
          await appendAll(otherTenant, 2);
          expect((await verifyAuditChains(storage.audit, auditSigner)).ok).toBe(true);
          await tamper!.liftAppendOnlyGuard();
          return rows;
        }

        it.skipIf(!tamper)('refuses UPDATE and DELETE of audit rows while its guard is in place', async () => {
          const [row] = await appendAll(live, 1);
          await expect(tamper!.sql('UPDATE audit_logs SET resource = ? WHERE id = ?', ['secret:x', row!.id])).rejects.toThrow(/append-only/);
          await expect(tamper!.sql('DELETE FROM audit_logs WHERE id = ?', [row!.id])).rejects.toThrow(/append-only/);
          expect(await storage.audit.findById(live, row!.id)).toEqual(row);
        });

        it.skipIf(!tamper)('finds an edited row', async () => {
          const rows = await setUp();
          await tamper!.sql('UPDATE audit_logs SET action = ? WHERE id = ?', ['secret.list', rows[2]!.id]);
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 3, id: rows[2]!.id, reason: 'hash_mismatch' });
        });

        it.skipIf(!tamper)('finds a deleted row', async () => {
          const rows = await setUp();
          await tamper!.sql('DELETE FROM audit_logs WHERE id = ?', [rows[1]!.id]);
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 3, id: rows[2]!.id, reason: 'missing_rows' });
        });

        it.skipIf(!tamper)('finds an inserted row and moved rows', async () => {
          const rows = await setUp();
          // Make room after row 2 (two steps, so that no seq is ever taken twice), then copy row 1 in as seq 3.
          await tamper!.sql('UPDATE audit_logs SET seq = seq + 1000 WHERE id IN (?, ?, ?)', rows.slice(2).map((r) => r.id));
          await tamper!.sql('UPDATE audit_logs SET seq = seq - 999 WHERE id IN (?, ?, ?)', rows.slice(2).map((r) => r.id));
          await tamper!.sql(`INSERT INTO audit_logs (tenant_id, mode, seq, id, created_at, user_id, key_id, action, resource, outcome,
            status, ip, user_agent, region, request_id, metadata, prev_hash, hash)
            SELECT tenant_id, mode, 3, ?, created_at, user_id, key_id, action, resource, outcome, status, ip, user_agent, region,
            request_id, metadata, ?, hash FROM audit_logs WHERE id = ?`, ['aud_forged', rows[1]!.hash, rows[0]!.id]);
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 3, id: 'aud_forged', reason: 'hash_mismatch' });
        });

        /** `head` stored as `live`'s head, as someone writing the database could (through the adapter: no SQL per store). */
        const putHead = (head: SignedAuditHead) => storage.audit.reviseHeads('all', (stored) => (stored.owner.tenantId === live.tenantId
          && stored.owner.mode === live.mode ? head : null));
        /** A signer of the same key id without the master key. */
        const forger = createAuditHeadSigner({ activeId: auditSigner.keyId, keys: new Map([[auditSigner.keyId, randomBytes(32)]]) });

        it.skipIf(!tamper)('finds rows cut from the end and a chain deleted; a chain deleted with its head only against a kept head', async () => {
          const rows = await setUp();
          const kept = (await storage.audit.head(live)) as SignedAuditHead;
          await tamper!.sql('DELETE FROM audit_logs WHERE id IN (?, ?)', [rows[3]!.id, rows[4]!.id]);
          expect(await verifyBreak()).toEqual({
            owner: live, seq: 3, id: rows[2]!.id, reason: 'truncated', head: { seq: 5, hash: rows[4]!.hash },
            message: `its signed head is row 5 but the chain ends at row 3 (${rows[2]!.id}): rows 4-5 were cut from its end`,
          });
          // The next append links to row 3 but leaves the head where it was: the cut stays visible.
          await storage.audit.append(entry(live), auditSigner);
          expect(await verifyBreak()).toMatchObject({ seq: 4, reason: 'truncated' });

          await tamper!.sql('DELETE FROM audit_logs WHERE tenant_id = ? AND mode = ?', [live.tenantId, live.mode]);
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 0, id: null, reason: 'chain_missing', head: { seq: 5 } });
          // With its head row too, the database alone shows nothing; a head kept elsewhere does.
          await tamper!.sql('DELETE FROM audit_heads WHERE tenant_id = ? AND mode = ?', [live.tenantId, live.mode]);
          expect(await verifyAuditChains(storage.audit, auditSigner)).toMatchObject({ ok: true, broken: [] });
          expect(await verifyAuditChains(storage.audit, auditSigner, { since: [kept] })).toMatchObject({
            ok: false, broken: [{ owner: live, reason: 'chain_missing', message: 'the kept head is row 5 but the chain has no rows: the whole chain was deleted' }],
          });
        });

        it.skipIf(!tamper)('finds a chain rewritten with fresh hashes, and a head forged for it without the master key', async () => {
          const rows = await setUp();
          // Row 3 edited, and it and every later row hashed again: the links hold, the head no longer names the last row.
          let previous = rows[1]!;
          for (const r of rows.slice(2)) {
            const rewritten = linkAuditRow({ ...r, action: r.seq === 3 ? 'secret.list' : r.action }, previous);
            await tamper!.sql('UPDATE audit_logs SET action = ?, prev_hash = ?, hash = ? WHERE id = ?', [rewritten.action, rewritten.prevHash, rewritten.hash, r.id]);
            previous = rewritten;
          }
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 5, reason: 'head_mismatch', message: expect.stringContaining('the chain was rewritten') });
          await putHead(forger.sign(live, previous, new Date()));
          expect(await verifyBreak()).toMatchObject({
            seq: 5, reason: 'head_forged', message: `its head (row 5) does not verify under master key ${auditSigner.keyId}: this server did not sign it`,
          });
          // A head under a key the keyring lacks does not verify either.
          await putHead({ ...auditSigner.sign(live, previous, new Date()), keyId: 'mk_other' });
          expect(await verifyBreak()).toMatchObject({ reason: 'head_forged', message: expect.stringContaining('mk_other, which the keyring does not hold') });
        });

        it.skipIf(!tamper)('finds rows appended without the master key, and a chain whose head was deleted; appends re-sign neither', async () => {
          const rows = await setUp();
          // An append by someone without the key: the stored head does not verify under theirs, so it stays at row 5.
          const added = await storage.audit.append(entry(live), forger);
          expect(await verifyBreak()).toMatchObject({
            seq: 6, id: added.id, reason: 'head_mismatch', message: `row 6 (${added.id}) follows its signed head (row 5): appended without the master key`,
          });
          await tamper!.sql('DELETE FROM audit_heads WHERE tenant_id = ? AND mode = ?', [live.tenantId, live.mode]);
          expect(await verifyBreak()).toMatchObject({ seq: 6, reason: 'head_missing', message: expect.stringContaining('its head row was deleted') });
          await storage.audit.append(entry(live), auditSigner);
          expect(await storage.audit.head(live)).toBeNull();
          expect(await verifyBreak()).toMatchObject({ seq: 7, reason: 'head_missing' });
          expect(rows).toHaveLength(5);
        });

        it.skipIf(!tamper)('signs a head the upgrade left unsigned at the next start or append, trusting the rows so far', async () => {
          const rows = await setUp();
          const unsign = () => tamper!.sql('UPDATE audit_heads SET key_id = NULL, signed_at = NULL, mac = NULL WHERE tenant_id = ? AND mode = ?',
            [live.tenantId, live.mode]);
          await unsign();
          expect(await storage.audit.head(live)).toEqual({ owner: live, seq: 5, hash: rows[4]!.hash, keyId: null, signedAt: null, mac: null });
          expect(await verifyBreak()).toMatchObject({ seq: 5, reason: 'head_missing', message: expect.stringContaining('not signed yet') });
          const at = new Date(t0 + 3_600_000);
          expect(await signUnsignedAuditHeads(storage.audit, auditSigner, at)).toEqual([live]);
          expect(await storage.audit.head(live)).toEqual(auditSigner.sign(live, rows[4]!, at));
          expect(await signUnsignedAuditHeads(storage.audit, auditSigner, at)).toEqual([]);
          expect((await verifyAuditChains(storage.audit, auditSigner)).ok).toBe(true);
          await unsign();
          const next = await storage.audit.append(entry(live), auditSigner);
          expect(await storage.audit.head(live)).toEqual(auditSigner.sign(live, next, next.timestamp));
          expect((await verifyAuditChains(storage.audit, auditSigner)).ok).toBe(true);
        });

        it.skipIf(!tamper)('a chain rolled back with its older head passes alone, and fails against a head kept since', async () => {
          const rows = await setUp();
          const kept = (await storage.audit.head(live)) as SignedAuditHead;
          await tamper!.sql('DELETE FROM audit_logs WHERE id IN (?, ?)', [rows[3]!.id, rows[4]!.id]);
          // The head stored when row 3 was appended (a head is a function of the row it names), put back from a copy.
          await putHead(auditSigner.sign(live, rows[2]!, rows[2]!.timestamp));
          expect((await verifyAuditChains(storage.audit, auditSigner)).ok).toBe(true);
          const against = await verifyAuditChains(storage.audit, auditSigner, { pageSize: 2, since: [kept] });
          expect(against.broken).toEqual([{
            owner: live, seq: 3, id: rows[2]!.id, reason: 'truncated', head: { seq: 5, hash: rows[4]!.hash },
            message: `the kept head is row 5 but the chain ends at row 3 (${rows[2]!.id}): rows 4-5 were cut from its end, or the database was rolled back`,
          }]);
        });

        it.skipIf(!tamper)('finds two rows swapped', async () => {
          const rows = await setUp();
          await tamper!.sql('UPDATE audit_logs SET seq = 1000 WHERE id = ?', [rows[1]!.id]);
          await tamper!.sql('UPDATE audit_logs SET seq = 2 WHERE id = ?', [rows[2]!.id]);
          await tamper!.sql('UPDATE audit_logs SET seq = 3 WHERE id = ?', [rows[1]!.id]);
          expect(await verifyBreak()).toMatchObject({ owner: live, seq: 2, id: rows[2]!.id, reason: 'prev_hash_mismatch' });
        });
      });
    });

    describe('mcp resources and approvals', () => {
      const live: McpOwner = { tenantId: scopeA.tenantId, mode: 'live' };
      const sandbox: McpOwner = { tenantId: scopeA.tenantId, mode: 'test' };
      const otherTenant: McpOwner = { tenantId: scopeB.tenantId, mode: 'live' };
      const t0 = Date.UTC(2026, 5, 1, 12);
      const at = (seconds: number) => new Date(t0 + seconds * 1000);
      const resource = (owner: McpOwner, uri: string, over: Partial<StoredMcpResource> = {}): StoredMcpResource => ({
        id: `mcr_${randomUUID().replaceAll('-', '')}`, owner: { ...owner }, uri, type: 'secret', name: `Access to ${uri}`, description: 'd é "q"',
        permissions: ['read'], requiresApproval: true, approvers: ['alice', 'bob'],
        autoApprove: { enabled: true, conditions: { timeWindow: '09:00-17:00 Europe/London', requester: ['bot'] } }, sealedValue: null,
        createdAt: at(0), createdBy: 'alice', accessedAt: null, accessCount: 0, ...over,
      });
      const approval = (r: StoredMcpResource, over: Partial<StoredMcpApproval> = {}): StoredMcpApproval => ({
        id: `appr_${randomUUID().replaceAll('-', '')}`, owner: { ...r.owner }, resourceId: r.id, resource: r.uri, operation: 'read',
        reason: 'deploy', requestedBy: 'bot', requestedAt: at(0), expiresAt: at(3600), status: 'pending', respondedBy: null, respondedAt: null,
        responseReason: null, autoApproved: false, tokenDigest: null, ...over,
      });
      const answer = (over: Partial<McpApprovalAnswer> = {}): McpApprovalAnswer => ({
        status: 'approved', respondedBy: 'alice', respondedAt: at(60), responseReason: 'ok', tokenDigest: randomUUID().replaceAll('-', '').padEnd(64, 'a'), ...over,
      });
      async function registered(owner: McpOwner, uri: string, over: Partial<StoredMcpResource> = {}) {
        const r = resource(owner, uri, over);
        await storage.mcpResources.insert(r);
        return r;
      }
      const listQuery = (over: Partial<McpApprovalListQuery> = {}): McpApprovalListQuery => ({ limit: 100, after: null, now: at(0), ...over });
      const approvalIds = async (owner: McpOwner, over: Partial<McpApprovalListQuery> = {}) =>
        (await storage.mcpApprovals.list(owner, listQuery(over))).items.map((a) => a.id);

      it('stores registrations and finds them by URI or id, for their owner only', async () => {
        const wildcard = await registered(live, 'svc://secrets/prod/*');
        const custom = await registered(live, 'svc://custom/config/flags', {
          type: 'custom', permissions: ['read', 'write'], requiresApproval: false, approvers: [], autoApprove: { enabled: false, conditions: {} },
          sealedValue: { keyId: 'k1', wrappedKey: 'd3JhcA==', payload: 'cGF5' },
        });
        expect(await storage.mcpResources.findById(live, wildcard.id)).toEqual(wildcard);
        expect(await storage.mcpResources.findById(live, custom.id)).toEqual(custom);
        const found = await storage.mcpResources.findByUris(live, ['svc://secrets/prod/db', 'svc://secrets/prod/*', 'svc://secrets/*']);
        expect(found).toEqual([wildcard]);
        expect(await storage.mcpResources.findByUris(live, [])).toEqual([]);
        for (const owner of [sandbox, otherTenant]) {
          expect(await storage.mcpResources.findById(owner, wildcard.id)).toBeNull();
          expect(await storage.mcpResources.findByUris(owner, ['svc://secrets/prod/*', 'svc://custom/config/flags'])).toEqual([]);
          expect(await storage.mcpResources.recordAccess(owner, wildcard.id, at(1))).toBeNull();
          expect(await storage.mcpResources.list(owner, { limit: 10, afterUri: null })).toEqual({ items: [], total: 0 });
        }
        // One URI per owner; another owner registers the same URI for itself.
        const again = storage.mcpResources.insert(resource(live, 'svc://secrets/prod/*'));
        await expect(again).rejects.toBeInstanceOf(DomainError);
        await expect(again).rejects.toMatchObject({ code: 'CONFLICT', details: { field: 'uri' } });
        const ofB = await registered(otherTenant, 'svc://secrets/prod/*');
        expect(await storage.mcpResources.findByUris(otherTenant, ['svc://secrets/prod/*'])).toEqual([ofB]);
        expect(await storage.mcpResources.findByUris(live, ['svc://secrets/prod/*'])).toEqual([wildcard]);
      });

      it('lists an owner\'s registrations by URI in byte order, a page at a time', async () => {
        const uris = ['svc://secrets/prod/*', 'svc://api-keys/*', 'svc://secrets/*', 'svc://custom/a/B', 'svc://custom/a/a', 'svc://secrets/Prod/*'];
        for (const uri of uris) await registered(live, uri);
        await registered(sandbox, 'svc://secrets/*');
        const sorted = [...uris].sort((x, y) => (Buffer.compare(Buffer.from(x), Buffer.from(y))));
        const first = await storage.mcpResources.list(live, { limit: 4, afterUri: null });
        expect(first.total).toBe(6);
        expect(first.items.map((r) => r.uri)).toEqual(sorted.slice(0, 4));
        const second = await storage.mcpResources.list(live, { limit: 4, afterUri: sorted[3]! });
        expect(second).toMatchObject({ total: 6 });
        expect(second.items.map((r) => r.uri)).toEqual(sorted.slice(4));
      });

      it('counts every read, concurrent ones too, from every connection', async () => {
        const r = await registered(live, 'svc://secrets/*');
        const stores = await connections();
        const counted = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % stores.length]!.mcpResources.recordAccess(live, r.id, at(i + 1))));
        expect(counted.map((c) => c!.accessCount).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(await storage.mcpResources.findById(live, r.id)).toMatchObject({ accessCount: 12 });
        expect(await storage.mcpResources.recordAccess(live, r.id, at(100))).toEqual({ accessedAt: at(100), accessCount: 13 });
      });

      it('walks the sealed custom values of every owner for rotation, and re-wraps one in place', async () => {
        const sealed = (n: string) => ({ keyId: 'k1', wrappedKey: `d${n}=`, payload: `p${n}` });
        const values = [
          await registered(live, 'svc://custom/t/one', { type: 'custom', sealedValue: sealed('1') }),
          await registered(otherTenant, 'svc://custom/t/two', { type: 'custom', sealedValue: sealed('2') }),
          await registered(sandbox, 'svc://custom/t/three', { type: 'custom', sealedValue: sealed('3') }),
        ];
        await registered(live, 'svc://secrets/*');
        const walk = async (limit: number) => {
          const out: SealedRef[] = [];
          for (let after: string | null = null; ;) {
            const page = await storage.mcpResources.sealedValues(after, limit);
            if (page.length === 0) return out;
            out.push(...page);
            after = page.at(-1)!.ref;
          }
        };
        const all = await walk(1);
        expect(all.map((r) => r.ref)).toEqual(values.map((v) => v.id).sort());
        expect(await walk(2)).toEqual(all);
        for (const v of values) {
          expect(all.find((r) => r.ref === v.id)).toEqual({ ref: v.id, context: mcpResourceValueContext(v.owner, v.id), sealed: v.sealedValue });
        }
        const rewrapped = { keyId: 'k2', wrappedKey: 'bmV3', payload: 'p2' };
        await storage.mcpResources.rewrap(values[1]!.id, rewrapped);
        expect((await storage.mcpResources.findById(otherTenant, values[1]!.id))!.sealedValue).toEqual(rewrapped);
        expect((await storage.mcpResources.findById(live, values[0]!.id))!.sealedValue).toEqual(sealed('1'));
      });

      it('changes a registration\'s mutable fields in place, for its owner only', async () => {
        const r = await registered(live, 'svc://custom/app/flags', { type: 'custom', sealedValue: { keyId: 'k1', wrappedKey: 'd1=', payload: 'p1' } });
        await storage.mcpResources.recordAccess(live, r.id, at(5));
        const changed: StoredMcpResource = {
          ...r, name: 'Flags é', description: 'new "d"', permissions: ['read', 'write'], requiresApproval: false, approvers: ['carol'],
          autoApprove: { enabled: false, conditions: { requester: ['bot', 'ci'] } }, sealedValue: { keyId: 'k2', wrappedKey: 'd2=', payload: 'p2' },
        };
        for (const owner of [sandbox, otherTenant]) expect(await storage.mcpResources.update({ ...changed, owner, name: 'not mine' })).toBe(false);
        expect(await storage.mcpResources.findById(live, r.id)).toEqual({ ...r, accessedAt: at(5), accessCount: 1 });
        expect(await storage.mcpResources.update(changed)).toBe(true);
        // Identity and access figures stay whatever the change carries.
        expect(await storage.mcpResources.update({ ...changed, uri: 'svc://custom/elsewhere', createdBy: 'mallory', accessCount: 99 })).toBe(true);
        expect(await storage.mcpResources.findById(live, r.id)).toEqual({ ...changed, accessedAt: at(5), accessCount: 1 });
        expect(await storage.mcpResources.update({ ...changed, id: 'mcr_missing' })).toBe(false);
      });

      it('deletes a registration with its approvals, for its owner only', async () => {
        const r = await registered(live, 'svc://secrets/prod/*');
        const kept = await registered(live, 'svc://secrets/*');
        const pending = approval(r, { resource: 'svc://secrets/prod/db' });
        const approved = approval(r, { resource: 'svc://secrets/prod/cache', status: 'approved', respondedBy: 'alice', respondedAt: at(1), tokenDigest: 'c'.repeat(64) });
        const other = approval(kept, { resource: 'svc://secrets/x' });
        for (const a of [pending, approved, other]) await storage.mcpApprovals.insert(a, at(0));
        for (const owner of [sandbox, otherTenant]) expect(await storage.mcpResources.delete(owner, r.id)).toBe(false);
        expect(await storage.mcpResources.findById(live, r.id)).toEqual(r);
        expect(await storage.mcpResources.delete(live, r.id)).toBe(true);
        expect(await storage.mcpResources.findById(live, r.id)).toBeNull();
        expect(await storage.mcpResources.findByUris(live, [r.uri])).toEqual([]);
        expect(await storage.mcpApprovals.find(live, pending.id)).toBeNull();
        expect(await storage.mcpApprovals.findByTokenDigest(live, 'c'.repeat(64))).toBeNull();
        expect(await approvalIds(live)).toEqual([other.id]);
        expect(await storage.mcpResources.delete(live, r.id)).toBe(false);
        // The URI is free again.
        await registered(live, 'svc://secrets/prod/*');
      });

      it('stores approvals and finds them by id or token digest, for their owner only', async () => {
        const r = await registered(live, 'svc://secrets/prod/*');
        const pending = approval(r, { resource: 'svc://secrets/prod/db', reason: 'why é\n"quoted"' });
        await storage.mcpApprovals.insert(pending, at(0));
        const auto = approval(r, {
          resource: 'svc://secrets/prod/cache', status: 'approved', respondedBy: 'auto-approve', respondedAt: at(0), autoApproved: true,
          tokenDigest: 'f'.repeat(64),
        });
        await storage.mcpApprovals.insert(auto, at(0));
        expect(await storage.mcpApprovals.find(live, pending.id)).toEqual(pending);
        expect(await storage.mcpApprovals.find(live, auto.id)).toEqual(auto);
        expect(await storage.mcpApprovals.findByTokenDigest(live, 'f'.repeat(64))).toEqual(auto);
        expect(await storage.mcpApprovals.findByTokenDigest(live, 'e'.repeat(64))).toBeNull();
        for (const owner of [sandbox, otherTenant]) {
          expect(await storage.mcpApprovals.find(owner, pending.id)).toBeNull();
          expect(await storage.mcpApprovals.findByTokenDigest(owner, 'f'.repeat(64))).toBeNull();
          expect(await storage.mcpApprovals.respond(owner, pending.id, answer())).toBeNull();
          expect(await storage.mcpApprovals.expire(owner, pending.id, at(7200))).toBeNull();
          expect(await storage.mcpApprovals.list(owner, listQuery())).toEqual({ items: [], total: 0 });
        }
        expect(await storage.mcpApprovals.find(live, pending.id)).toEqual(pending);
      });

      it('keeps one live pending approval per requester and resource; an expired one makes way', async () => {
        const r = await registered(live, 'svc://secrets/prod/*');
        const first = approval(r, { resource: 'svc://secrets/prod/db' });
        await storage.mcpApprovals.insert(first, at(0));
        const duplicate = storage.mcpApprovals.insert(approval(r, { resource: 'svc://secrets/prod/db', operation: 'write' }), at(10));
        await expect(duplicate).rejects.toBeInstanceOf(DomainError);
        await expect(duplicate).rejects.toMatchObject({ code: 'CONFLICT', details: { approvalId: first.id } });
        // Another requester, another resource, another owner: no conflict.
        await storage.mcpApprovals.insert(approval(r, { resource: 'svc://secrets/prod/db', requestedBy: 'other-bot' }), at(10));
        await storage.mcpApprovals.insert(approval(r, { resource: 'svc://secrets/prod/cache' }), at(10));
        const ofB = await registered(otherTenant, 'svc://secrets/prod/*');
        await storage.mcpApprovals.insert(approval(ofB, { resource: 'svc://secrets/prod/db' }), at(10));
        // Once the first is past its expiresAt, a new request takes its place and the first reads expired.
        const next = approval(r, { resource: 'svc://secrets/prod/db', requestedAt: at(3600), expiresAt: at(7200) });
        await storage.mcpApprovals.insert(next, at(3600));
        expect((await storage.mcpApprovals.find(live, first.id))!.status).toBe('expired');
        expect((await storage.mcpApprovals.find(live, next.id))!.status).toBe('pending');
        // An answered one never blocks.
        expect(await storage.mcpApprovals.respond(live, next.id, answer({ respondedAt: at(3700), status: 'denied', tokenDigest: null }))).toMatchObject({ status: 'denied' });
        await storage.mcpApprovals.insert(approval(r, { resource: 'svc://secrets/prod/db', requestedAt: at(3800), expiresAt: at(7400) }), at(3800));
      });

      it('makes one of concurrent duplicate requests, from every connection', async () => {
        const r = await registered(live, 'svc://secrets/*');
        const stores = await connections();
        const tries = await Promise.allSettled(Array.from({ length: 6 }, (_, i) =>
          stores[i % stores.length]!.mcpApprovals.insert(approval(r, { resource: 'svc://secrets/prod/db' }), at(0))));
        expect(tries.filter((t) => t.status === 'fulfilled')).toHaveLength(1);
        for (const t of tries.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) expect(t.reason).toMatchObject({ code: 'CONFLICT' });
        expect((await storage.mcpApprovals.list(live, listQuery())).total).toBe(1);
      });

      it('answers a pending approval once, and only before its expiresAt; concurrent answers: one is stored', async () => {
        const r = await registered(live, 'svc://secrets/*');
        const a = approval(r, { resource: 'svc://secrets/prod/db' });
        await storage.mcpApprovals.insert(a, at(0));
        const digest = 'a'.repeat(64);
        const stored = await storage.mcpApprovals.respond(live, a.id, answer({ tokenDigest: digest }));
        expect(stored).toEqual({ ...a, status: 'approved', respondedBy: 'alice', respondedAt: at(60), responseReason: 'ok', tokenDigest: digest });
        expect(await storage.mcpApprovals.respond(live, a.id, answer({ status: 'denied', tokenDigest: null }))).toBeNull();
        expect(await storage.mcpApprovals.find(live, a.id)).toEqual(stored);
        expect(await storage.mcpApprovals.findByTokenDigest(live, digest)).toEqual(stored);

        // Too late: nothing is written, and expire() then marks it.
        const late = approval(r, { resource: 'svc://secrets/prod/cache' });
        await storage.mcpApprovals.insert(late, at(0));
        expect(await storage.mcpApprovals.respond(live, late.id, answer({ respondedAt: at(3600) }))).toBeNull();
        expect(await storage.mcpApprovals.expire(live, late.id, at(3599))).toEqual(late);
        expect(await storage.mcpApprovals.expire(live, late.id, at(3600))).toEqual({ ...late, status: 'expired' });
        // expire() leaves an answered approval as it is.
        expect(await storage.mcpApprovals.expire(live, a.id, at(99_999))).toEqual(stored);

        const raced = approval(r, { resource: 'svc://secrets/staging/db' });
        await storage.mcpApprovals.insert(raced, at(0));
        const stores = await connections();
        const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => stores[i % stores.length]!.mcpApprovals.respond(live, raced.id,
          answer({ respondedBy: `approver-${i}`, status: i % 2 === 0 ? 'approved' : 'denied', tokenDigest: i % 2 === 0 ? String(i).repeat(64) : null }))));
        const won = answers.filter((x) => x !== null);
        expect(won).toHaveLength(1);
        expect(await storage.mcpApprovals.find(live, raced.id)).toEqual(won[0]);
      });

      it('lists approvals newest first by status as it reads at `now`, by resource, a page at a time', async () => {
        const r = await registered(live, 'svc://secrets/*');
        const make = async (seconds: number, over: Partial<StoredMcpApproval> = {}) => {
          const a = approval(r, { requestedAt: at(seconds), expiresAt: at(seconds + 600), resource: `svc://secrets/prod/s${seconds}`, ...over });
          await storage.mcpApprovals.insert(a, at(seconds));
          return a;
        };
        const old = await make(0);
        const approved = await make(100, { status: 'approved', respondedBy: 'alice', respondedAt: at(100), tokenDigest: 'b'.repeat(64) });
        const denied = await make(200, { status: 'denied', respondedBy: 'alice', respondedAt: at(200) });
        const fresh = await make(700);
        const sameTime = await make(700, { resource: 'svc://secrets/prod/other' });
        const now = at(650);
        // `old` (requested at 0) is past its expiresAt (600) at 650: it reads expired without being written so.
        expect(await approvalIds(live, { now, status: 'pending' })).toEqual([fresh, sameTime].sort((x, y) => (x.id < y.id ? 1 : -1)).map((a) => a.id));
        expect(await approvalIds(live, { now, status: 'expired' })).toEqual([old.id]);
        expect(await approvalIds(live, { now, status: 'approved' })).toEqual([approved.id]);
        expect(await approvalIds(live, { now, status: 'denied' })).toEqual([denied.id]);
        expect(await approvalIds(live, { now, resource: 'svc://secrets/prod/s100' })).toEqual([approved.id]);
        const all = await approvalIds(live, { now });
        expect(all).toHaveLength(5);
        expect(all.slice(2)).toEqual([denied.id, approved.id, old.id]);
        const first = await storage.mcpApprovals.list(live, listQuery({ now, limit: 2 }));
        expect(first.total).toBe(5);
        const last = first.items.at(-1)!;
        const rest = await storage.mcpApprovals.list(live, listQuery({ now, limit: 10, after: { requestedAt: last.requestedAt, id: last.id } }));
        expect([...first.items, ...rest.items].map((a) => a.id)).toEqual(all);
        expect(rest.total).toBe(5);
      });

      it('lists the approvals one user asked for, with the other filters', async () => {
        const r = await registered(live, 'svc://secrets/*');
        const ask = async (seconds: number, requestedBy: string, resource = 'svc://secrets/prod/db') => {
          const a = approval(r, { requestedAt: at(seconds), expiresAt: at(seconds + 600), resource, requestedBy });
          await storage.mcpApprovals.insert(a, at(seconds));
          return a;
        };
        const botDb = await ask(0, 'bot');
        const carolDb = await ask(10, 'carol');
        const botApi = await ask(20, 'bot', 'svc://secrets/prod/api');
        expect(await approvalIds(live, { now: at(30), requestedBy: 'bot' })).toEqual([botApi.id, botDb.id]);
        expect(await approvalIds(live, { now: at(30), requestedBy: 'carol', resource: 'svc://secrets/prod/db' })).toEqual([carolDb.id]);
        expect(await approvalIds(live, { now: at(30), requestedBy: 'bot', resource: 'svc://secrets/prod/db', status: 'pending' })).toEqual([botDb.id]);
        expect((await storage.mcpApprovals.list(live, listQuery({ now: at(30), requestedBy: 'nobody' }))).total).toBe(0);
        expect(await approvalIds(otherTenant, { now: at(30), requestedBy: 'bot' })).toEqual([]);
      });
    });

    describe('dump and load (mnemo migrate)', () => {
      /** Writes one of everything a store holds, through the repositories, as the services would. */
      async function fill(store: Storage) {
        const topic: Topic = {
          id: randomUUID(), scope: scopeA, name: 'Ops', description: 'runbooks', parentId: null, metadata: { colour: 'red' },
          createdAt: new Date(Date.UTC(2026, 0, 1)), updatedAt: new Date(Date.UTC(2026, 0, 2)), createdBy: 'u',
        };
        await store.topics.insert(topic);
        const key: ApiKeyRecord = {
          id: `key_${randomUUID()}`, tenantId: scopeA.tenantId, userId: 'u1', tier: 'pro', mode: 'live', scopes: ['memories:read'],
          displayPrefix: 'mnemo_live_abcd', digest: randomUUID().replace(/-/g, '').padEnd(64, '0'), name: 'Migrated key',
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 123)), expiresAt: new Date(Date.UTC(2026, 1, 2)), revokedAt: new Date(Date.UTC(2026, 1, 1)),
          replacedBy: 'key_successor',
        };
        await store.apiKeys.insert(key);
        const webhook: Webhook = {
          id: `webhook_${randomUUID()}`, kind: 'g9', scope: { ...scopeA }, url: 'http://127.0.0.1:9/hook', events: ['memory.created'],
          description: 'd', status: 'active', retryPolicy: { maxAttempts: 3, backoffMultiplier: 2, maxDelayMs: 300_000 },
          filters: {}, createdAt: new Date(Date.UTC(2026, 0, 1)), updatedAt: new Date(Date.UTC(2026, 0, 1)), lastDeliveryAt: null,
          stats: { totalAttempts: 0, successfulDeliveries: 0, failedDeliveries: 0 },
        };
        await store.webhooks.insert(webhook, { keyId: 'k1', wrappedKey: 'd2hr', payload: 'c2VjcmV0' });
        // And one from a store written before secrets were sealed, its secret still in plaintext (sealed at the next start).
        await store.transfer.load(TRANSFER_TABLES.find((t) => t.name === 'webhooks')!, [{
          seq: 500, id: `webhook_${randomUUID()}`, kind: 'g10', tenant_id: scopeB.tenantId, mode: 'live', workspace: null,
          url: 'http://127.0.0.1:9/legacy', events: ['transfer.completed'], description: null, status: 'active',
          retry_policy: { maxAttempts: 7, backoffMultiplier: 1, maxDelayMs: 86_400_000 }, filters: {}, created_at: Date.UTC(2026, 0, 1),
          updated_at: Date.UTC(2026, 0, 1), last_delivery_at: null, total_attempts: 0, successful_deliveries: 0, failed_deliveries: 0,
          plaintext_secret: 'legacy-plaintext', secret_key_id: null, secret_wrapped_key: null, secret_payload: null,
        }]);
        const memories = [
          makeMemory(scopeA, { title: 'Deploy notes', content: 'blue green deploy', tags: ['ops', 'deploy'], metadata: { n: [1, { b: null }] }, topicId: topic.id }),
          makeMemory(scopeA, { title: 'Lunch', content: 'pasta at noon', tags: [] }),
          makeMemory(scopeB, { title: 'Other tenant', content: 'deploy elsewhere', tags: ['ops'] }),
        ];
        for (const [i, m] of memories.entries()) {
          await store.memories.insert(m, vec(i, (i + 1) % DIMS, 0.3), (x) => [{
            id: `evt_${randomUUID()}`, type: 'memory.created', scope: x.scope, createdAt: x.createdAt, data: { id: x.id, tags: x.tags },
          }]);
        }
        const at = new Date(Date.UTC(2030, 0, 1));
        await store.idempotency.appendEventOnce({ tenantId: scopeA.tenantId, mode: scopeA.mode, key: 'k1' },
          { requestHash: 'h1', response: '{"ok":true}', at, notBefore: new Date(at.getTime() - 60_000) },
          [{ id: `evt_${randomUUID()}`, type: 'wallet.created', scope: { ...scopeA, workspace: null }, createdAt: at, data: { n: 1 } }]);
        // A second key, so paging walks the three-column key of this table.
        await store.idempotency.appendEventOnce({ tenantId: scopeB.tenantId, mode: scopeB.mode, key: 'k0' },
          { requestHash: 'h0', response: '{}', at, notBefore: new Date(at.getTime() - 60_000) }, []);
        await store.searchLog.appendMany([{
          scope: scopeA, userId: 'u1', surface: 'g1', kind: 'semantic', query: 'Deploy blue', resultsCount: 1,
          executionMs: 1.5, avgScore: 0.75, filters: { tags: ['ops'] }, at: new Date(Date.UTC(2026, 0, 3)),
        }]);
        // Secrets with their sealed versions (one pruned), in two owners, and the master-key check values.
        const sealedAt = (n: number): StoredSecretVersion => ({
          version: n, sealed: { keyId: 'k1', wrappedKey: `d2s${n}=`, payload: `cGF5${n}` }, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n, 7)), createdBy: 'u1',
        });
        const secret = (owner: SecretOwner, name: string, over: Partial<StoredSecret> = {}): StoredSecret => ({
          id: `sec_${randomUUID()}`, owner, name, tags: [], version: 1, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 1)),
          updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 1)), expiresAt: null, region: null, createdBy: 'u1', updatedBy: 'u1', ...over,
        });
        const owners: SecretOwner[] = [{ tenantId: scopeA.tenantId, mode: 'live' }, { tenantId: scopeB.tenantId, mode: 'test' }];
        await store.secrets.create(secret(owners[0]!, 'DB_PASSWORD', { tags: ['db', 'prod'], expiresAt: new Date(Date.UTC(2099, 0, 1)) }), sealedAt(1));
        for (let v = 2; v <= 4; v++) {
          await store.secrets.addVersion(owners[0]!, 'DB_PASSWORD', v - 1, sealedAt(v), {
            tags: ['db'], expiresAt: null, region: 'eu-west-1', updatedAt: new Date(Date.UTC(2026, 0, 2, 0, 0, v)), updatedBy: 'u2',
          }, 3);
        }
        await store.secrets.create(secret(owners[1]!, 'API_TOKEN', { region: 'us' }), sealedAt(1));
        await store.secrets.putKeyCheck('k1', { keyId: 'k1', wrappedKey: 'Y2hr', payload: 'Y2hlY2s=' });
        await store.secrets.putKeyCheck('k0', { keyId: 'k0', wrappedKey: 'Y2hr', payload: 'b2xk' });
        const secrets = [{ owner: owners[0]!, name: 'DB_PASSWORD', versions: [2, 3, 4] }, { owner: owners[1]!, name: 'API_TOKEN', versions: [1] }];
        // Audit rows in two chains, with every optional field both set and empty.
        for (const [i, owner] of [owners[0]!, owners[0]!, owners[1]!, owners[0]!].entries()) {
          await store.audit.append({
            id: `aud_${randomUUID().replaceAll('-', '')}`, owner, timestamp: new Date(Date.UTC(2026, 0, 4, 0, 0, i, 9)),
            actor: { userId: 'u1', keyId: i === 2 ? null : `key_${i}` }, action: 'secret.read', resource: `secret:s${i}`,
            outcome: i === 1 ? 'failure' : 'success', status: i === 1 ? 404 : 200, ip: i === 2 ? null : '::1', userAgent: 'agent "x", y',
            region: i === 0 ? 'eu' : null, requestId: `req_${i}`, metadata: i === 2 ? {} : { version: i, format: 'json', b: false, none: null },
          }, auditSigner);
        }
        // G11 idempotent requests: two kept answers (a key with a comma, so paging walks text keys) and a reservation.
        const idemAt = new Date(Date.UTC(2030, 0, 1));
        const idem = (key: string, apiKeyId = 'key_1') => ({ tenantId: scopeA.tenantId, mode: 'live' as const, apiKeyId, key });
        const idemReservation = (reservation: string) =>
          ({ reservation, at: idemAt, lockedUntil: new Date(idemAt.getTime() + 60_000), notBefore: new Date(idemAt.getTime() - 86_400_000) });
        for (const [key, apiKeyId] of [['k, 1', 'key_1'], ['k2', 'key_0'], ['pending', 'key_1']] as const) {
          await store.idempotentRequests.reserve(idem(key, apiKeyId), idemReservation(`res-${key}`));
          if (key !== 'pending') await store.idempotentRequests.complete(idem(key, apiKeyId), `res-${key}`, { keyId: 'k1', wrappedKey: 'aWRl', payload: `bXA${key}` });
        }
        // An MCP registration with a sealed value, read once, and approvals of it: one answered, one pending.
        const mcpOwner: McpOwner = { tenantId: scopeA.tenantId, mode: 'live' };
        const mcpResource: StoredMcpResource = {
          id: `mcr_${randomUUID().replaceAll('-', '')}`, owner: mcpOwner, uri: 'svc://custom/config/flags', type: 'custom', name: 'Flags',
          description: '', permissions: ['read', 'write'], requiresApproval: true, approvers: ['alice'],
          autoApprove: { enabled: true, conditions: { requester: ['bot'] } }, sealedValue: { keyId: 'k1', wrappedKey: 'd3I=', payload: 'cGw=' },
          createdAt: new Date(Date.UTC(2026, 0, 5, 0, 0, 0, 5)), createdBy: 'alice', accessedAt: null, accessCount: 0,
        };
        await store.mcpResources.insert(mcpResource);
        await store.mcpResources.recordAccess(mcpOwner, mcpResource.id, new Date(Date.UTC(2026, 0, 5, 1)));
        const mcpApprovals = ['approved', 'pending'].map((status, i): StoredMcpApproval => ({
          id: `appr_${randomUUID().replaceAll('-', '')}`, owner: mcpOwner, resourceId: mcpResource.id, resource: mcpResource.uri, operation: 'read',
          reason: 'why', requestedBy: `bot-${i}`, requestedAt: new Date(Date.UTC(2026, 0, 5, i)), expiresAt: new Date(Date.UTC(2099, 0, 1)),
          status: status as StoredMcpApproval['status'], respondedBy: status === 'approved' ? 'alice' : null,
          respondedAt: status === 'approved' ? new Date(Date.UTC(2026, 0, 5, 2)) : null, responseReason: null, autoApproved: false,
          tokenDigest: status === 'approved' ? 'c'.repeat(64) : null,
        }));
        for (const a of mcpApprovals) await store.mcpApprovals.insert(a, a.requestedAt);
        await store.requestMetrics.append([metricRow({ tenantId: scopeA.tenantId }), metricRow({ tenantId: '', mode: '', keyId: '', userId: '' })]);
        // Ingestion jobs: one waiting for a review (proposals, usage), one still leased by a worker.
        const ingestions = [makeIngestion(scopeA), makeIngestion({ ...scopeA, workspace: 'w2' }, { mode: 'raw', policy: 'auto', tags: [] })];
        for (const job of ingestions) await store.ingestions.insert(job);
        const reviewed = (await store.ingestions.claimNext(at, 60_000, 5))!;
        await store.ingestions.finish(reviewed.job.id, reviewed.lease, {
          state: 'pending_review', usage: { model: 'm', modelCalls: 1, promptTokens: 10, completionTokens: 5 }, error: null,
          promptVersion: 'v1', updatedAt: at, finishedAt: null, proposals: [{
            id: 'p1', action: 'supersede', content: 'We deploy on Fridays', supersedes: [memories[0]!.id], duplicateOf: null, sources: [0],
            reason: null, status: 'pending', memoryId: null, decidedBy: null, decidedAt: null,
          }],
        });
        const running = (await store.ingestions.claimNext(at, 60_000, 5))!;
        return {
          topic, key, webhook, memories, secrets, idem, idemReservation, mcp: { owner: mcpOwner, resource: mcpResource, approvals: mcpApprovals },
          ingestions: { running },
        };
      }
      type Filled = Awaited<ReturnType<typeof fill>>;
      const eventsOf = (store: Storage, scope: Scope) =>
        store.events.readAfter({ tenantId: scope.tenantId, mode: scope.mode, workspace: scope.workspace, afterSeq: 0, limit: 100 });

      async function expectSameReads(from: Storage, to: Storage, f: Filled) {
        for (const m of f.memories) {
          expect(await to.memories.findById(m.scope, m.id)).toEqual(await from.memories.findById(m.scope, m.id));
          expect(await to.memories.vectorsOf(m.scope, [m.id], MODEL)).toEqual(await from.memories.vectorsOf(m.scope, [m.id], MODEL));
        }
        const similar = (s: Storage) => s.memories.searchSimilar(scopeA, { vector: axisVector(DIMS, 0), modelId: MODEL, limit: 5, minCosine: -1, filter: {} });
        expect((await similar(to)).hits.map((h) => h.memory.id)).toEqual((await similar(from)).hits.map((h) => h.memory.id));
        const keyword = (s: Storage) => s.memories.searchKeyword(scopeA, { terms: ['deploy'], limit: 5, filter: {} });
        expect((await keyword(to)).hits.map((h) => h.memory.id)).toEqual([f.memories[0]!.id]);
        expect((await to.memories.list(scopeA, listAll({ filter: { tagsAny: ['deploy'] } }))).total).toBe(1);
        expect(await to.topics.findById(scopeA, f.topic.id)).toEqual(f.topic);
        const metricsOf = (s: Storage) => s.requestMetrics.list(scopeA.tenantId, 'live', new Date(0), new Date(Date.UTC(2100, 0)));
        expect(await metricsOf(to)).toEqual(await metricsOf(from));
        expect(await metricsOf(to)).toHaveLength(1);
        expect(await to.apiKeys.findByDigest(f.key.digest)).toEqual(f.key);
        expect(await to.webhooks.findById({ ...scopeA }, 'g9', f.webhook.id)).toEqual(await from.webhooks.findById({ ...scopeA }, 'g9', f.webhook.id));
        expect(await to.webhooks.pendingCount()).toBe(await from.webhooks.pendingCount());
        // Signing secrets as stored: sealed, and the older store's plaintext one (sealed by the target's next start).
        expect(await to.webhooks.sealedSecrets(null, 100)).toEqual(await from.webhooks.sealedSecrets(null, 100));
        expect((await to.webhooks.sealedSecrets(null, 100)).map((r) => r.context.at(-1))).toEqual([f.webhook.id]);
        expect(await to.webhooks.plaintextSecrets(100)).toEqual(await from.webhooks.plaintextSecrets(100));
        expect((await to.webhooks.plaintextSecrets(100)).map((r) => r.plaintext)).toEqual(['legacy-plaintext']);
        for (const scope of [scopeA, scopeB]) expect(await eventsOf(to, scope)).toEqual(await eventsOf(from, scope));
        expect(await to.events.latestSeq()).toBe(await from.events.latestSeq());
        expect(await to.searchLog.suggestQueries(scopeA, 'dep', 5)).toEqual(await from.searchLog.suggestQueries(scopeA, 'dep', 5));
        // The producer's idempotency key came along: the same key is answered from the record, not appended again.
        const again = await to.idempotency.appendEventOnce({ tenantId: scopeA.tenantId, mode: scopeA.mode, key: 'k1' },
          { requestHash: 'h2', response: '{}', at: new Date(Date.UTC(2030, 0, 1, 0, 0, 1)), notBefore: new Date(Date.UTC(2029, 0, 1)) }, []);
        expect(again).toMatchObject({ kind: 'existing', record: { requestHash: 'h1', response: '{"ok":true}' } });
        // Secrets: every kept version, the list, the values rotation would walk, and the key checks.
        for (const s of f.secrets) {
          for (const v of s.versions) expect(await to.secrets.find(s.owner, s.name, v)).toEqual(await from.secrets.find(s.owner, s.name, v));
          expect(await to.secrets.find(s.owner, s.name, s.versions[0]! - 1)).toBeNull();
          const listing = (store: Storage) => store.secrets.list(s.owner, { tagsAny: [], limit: 10, afterName: null, now: new Date(Date.UTC(2030, 0, 1)) });
          expect(await to.secrets.list(s.owner, { tagsAny: ['db'], limit: 10, afterName: null, now: new Date(Date.UTC(2030, 0, 1)) }))
            .toMatchObject({ total: s.name === 'DB_PASSWORD' ? 1 : 0 });
          expect(await listing(to)).toEqual(await listing(from));
        }
        expect((await to.secrets.find(f.secrets[0]!.owner, 'DB_PASSWORD'))!.secret).toMatchObject({ version: 4, tags: ['db'], region: 'eu-west-1' });
        expect(await to.secrets.sealedValues(null, 100)).toEqual(await from.secrets.sealedValues(null, 100));
        expect(await to.secrets.sealedValues(null, 100)).toHaveLength(4);
        expect(await to.secrets.keyCheckIds()).toEqual(['k0', 'k1']);
        for (const id of ['k0', 'k1']) expect(await to.secrets.keyCheck(id)).toEqual(await from.secrets.keyCheck(id));
        // The copied secrets take new versions as before.
        const stored = await to.secrets.addVersion(f.secrets[0]!.owner, 'DB_PASSWORD', 4, { ...(await to.secrets.find(f.secrets[0]!.owner, 'DB_PASSWORD'))!.version, version: 5 }, {
          tags: [], expiresAt: null, region: null, updatedAt: new Date(Date.UTC(2026, 0, 3)), updatedBy: 'u3',
        }, 3);
        expect(stored).toMatchObject({ version: 5 });
        expect(await to.secrets.find(f.secrets[0]!.owner, 'DB_PASSWORD', 2)).toBeNull();
        // The audit chains came along whole: same rows, still verifying, and new rows continue them.
        const auditRows = await from.audit.scan(null, 100);
        expect(await to.audit.scan(null, 100)).toEqual(auditRows);
        expect(auditRows).toHaveLength(4);
        // And their signed heads: the copy verifies under the same master key.
        expect(await to.audit.heads(null, 10)).toEqual(await from.audit.heads(null, 10));
        expect(await to.audit.heads(null, 10)).toHaveLength(2);
        const verified = await verifyAuditChains(to.audit, auditSigner);
        expect(verified).toEqual(await verifyAuditChains(from.audit, auditSigner));
        expect(verified).toMatchObject({ ok: true, rows: 4 });
        const owner = f.secrets[0]!.owner;
        const last = auditRows.filter((r) => r.owner.tenantId === owner.tenantId).at(-1)!;
        const next = await to.audit.append({
          id: `aud_${randomUUID().replaceAll('-', '')}`, owner, timestamp: new Date(Date.UTC(2026, 0, 5)), actor: last.actor,
          action: 'audit.read', resource: 'audit-log:*', outcome: 'success', status: 200, ip: null, userAgent: null, region: null,
          requestId: null, metadata: {},
        }, auditSigner);
        expect(next).toMatchObject({ seq: 4, prevHash: last.hash });
        expect((await verifyAuditChains(to.audit, auditSigner)).ok).toBe(true);
        // Idempotent requests: the kept answers as they were (rotation walks the same), the reservation still held.
        expect(await to.idempotentRequests.sealedValues(null, 100)).toEqual(await from.idempotentRequests.sealedValues(null, 100));
        expect(await to.idempotentRequests.sealedValues(null, 100)).toHaveLength(2);
        const later = new Date(Date.UTC(2030, 0, 1, 0, 0, 30));
        const look = { reservation: 'look', at: later, lockedUntil: new Date(later.getTime() + 60_000), notBefore: new Date(later.getTime() - 86_400_000) };
        expect(await to.idempotentRequests.reserve(f.idem('k, 1'), look)).toEqual({
          kind: 'completed', reservation: 'res-k, 1', createdAt: new Date(Date.UTC(2030, 0, 1)), sealed: { keyId: 'k1', wrappedKey: 'aWRl', payload: 'bXAk, 1' },
        });
        expect(await to.idempotentRequests.reserve(f.idem('pending'), look)).toEqual({ kind: 'in_progress' });
        expect(await to.idempotentRequests.complete(f.idem('pending'), 'res-pending', { keyId: 'k1', wrappedKey: 'aWRl', payload: 'ZG9uZQ' })).toBe(true);
        // MCP: the registration (its sealed value and access figures), its approvals, and what rotation walks.
        const { owner: mcpOwner, resource: mcpResource, approvals: mcpApprovals } = f.mcp;
        expect(await to.mcpResources.findById(mcpOwner, mcpResource.id)).toEqual(await from.mcpResources.findById(mcpOwner, mcpResource.id));
        expect(await to.mcpResources.findById(mcpOwner, mcpResource.id)).toMatchObject({ accessCount: 1, sealedValue: mcpResource.sealedValue });
        expect(await to.mcpResources.sealedValues(null, 10)).toEqual(await from.mcpResources.sealedValues(null, 10));
        for (const a of mcpApprovals) expect(await to.mcpApprovals.find(mcpOwner, a.id)).toEqual(a);
        expect(await to.mcpApprovals.findByTokenDigest(mcpOwner, 'c'.repeat(64))).toEqual(mcpApprovals[0]);
        // The copied pending approval still holds its place: a second one of that requester is refused.
        await expect(to.mcpApprovals.insert({ ...mcpApprovals[1]!, id: 'appr_again' }, new Date(Date.UTC(2026, 0, 6))))
          .rejects.toMatchObject({ code: 'CONFLICT', details: { approvalId: mcpApprovals[1]!.id } });
        // Ingestion jobs as they were, and the running one's lease with them: still held by its worker.
        for (const scope of [scopeA, { ...scopeA, workspace: 'w2' }]) {
          const jobs = (s: Storage) => s.ingestions.list(scope, { limit: 10, offset: 0 });
          expect(await to.ingestions.list(scope, { limit: 10, offset: 0 })).toEqual(await jobs(from));
          expect((await jobs(to)).total).toBe(1);
        }
        expect(await to.ingestions.countActive(scopeA.tenantId)).toBe(1);
        const { running } = f.ingestions;
        expect(await to.ingestions.claimNext(new Date(running.leaseUntil.getTime() - 1), 60_000, 5)).toBeNull();
        expect(await to.ingestions.renew(running.job.id, running.lease, new Date(running.leaseUntil.getTime() + 1000))).toBe(true);
      }

      /** New rows after a load continue the copied sequences: a new event reads after the copied ones. */
      async function expectSequencesContinue(to: Storage) {
        const before = await to.events.latestSeq();
        const [added] = await to.events.append([{ id: `evt_${randomUUID()}`, type: 'system.health', scope: { tenantId: null, mode: null, workspace: null }, createdAt: new Date(), data: {} }]);
        expect(added!.seq).toBeGreaterThan(before);
        await to.memories.insert(makeMemory(scopeA), vec(3));
        await to.topics.insert({ ...(await to.topics.listAll(scopeA))[0]!, id: randomUUID(), name: 'Second' });
      }

      it('dumps rows that another store loads and reads back the same', async () => {
        const reference = createSqliteStorage({ file: ':memory:' });
        try {
          const filled = await fill(storage);
          const result = await copyStore(storage, reference, { pageSize: 1 });
          expect(result.complete).toBe(true);
          for (const c of result.counts) expect(c.target, c.table).toBe(c.source);
          expect(result.counts.find((c) => c.table === 'memory_vectors')!.source).toBe(3);
          expect(result.counts.find((c) => c.table === 'idempotency_keys')!.source).toBe(2);
          expect(result.counts.find((c) => c.table === 'idempotent_requests')).toEqual({ table: 'idempotent_requests', source: 3, target: 3 });
          expect(result.counts.filter((c) => c.table.includes('secret') || c.table === 'master_key_checks')).toEqual([
            { table: 'secrets', source: 2, target: 2 }, { table: 'secret_versions', source: 4, target: 4 },
            { table: 'master_key_checks', source: 2, target: 2 },
          ]);
          await expectSameReads(storage, reference, filled);
          await expectSequencesContinue(reference);
        } finally {
          await reference.close();
        }
      });

      it('loads rows dumped from another store, skips them when loaded again, and continues their sequences', async () => {
        const reference = createSqliteStorage({ file: ':memory:' });
        try {
          const filled = await fill(reference);
          const partial = await copyStore(reference, storage, { pageSize: 2, maxRows: 5 });
          expect(partial).toMatchObject({ complete: false, inserted: 5 });
          const result = await copyStore(reference, storage, { pageSize: 3 });
          expect(result.complete).toBe(true);
          const total = result.counts.reduce((n, c) => n + c.source, 0);
          expect(result.inserted).toBe(total - 5);
          for (const c of result.counts) expect(c.target, c.table).toBe(c.source);
          expect((await copyStore(reference, storage)).inserted).toBe(0);
          await expectSameReads(reference, storage, filled);
          await expectSequencesContinue(storage);
        } finally {
          await reference.close();
        }
      });
    });

    it('answers a ping', async () => {
      expect(await storage.ping()).toBe(true);
    });

    it('reports its size in bytes, which does not shrink as memories are written', async () => {
      const before = await storage.sizeBytes();
      expect(Number.isInteger(before)).toBe(true);
      expect(before).toBeGreaterThan(0);
      for (let i = 0; i < 20; i++) {
        await storage.memories.insert(makeMemory(scopeA, { id: `size-${i}`, content: 'x'.repeat(4000) }), vec(0));
      }
      expect(await storage.sizeBytes()).toBeGreaterThanOrEqual(before);
    });
  });
}
