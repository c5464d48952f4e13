/**
 * The storage contract's operator section (MemoryMaintenance: reindex, import, /health coverage). Called from
 * describeStorageContract, so every adapter runs it unchanged.
 */
import { describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/scope.ts';
import type { Storage } from '../../src/core/storage.port.ts';
import type { SimilarityQuery } from '../../src/core/memories/memory.types.ts';
import { axisVector, makeMemory, scopeA, scopeB } from '../support/fixtures.ts';

const OLD = 'test:old-8';
const NEW = 'test:new-4';
const oldVec = (axis: number) => ({ modelId: OLD, vector: axisVector(8, axis) });
const newVec = (axis: number) => ({ modelId: NEW, vector: axisVector(4, axis) });
const probe = (modelId: string, vector: Float32Array): SimilarityQuery => ({ vector, modelId, limit: 10, minCosine: 0.8, filter: {} });

export function describeMemoryMaintenanceContract(current: () => Storage): void {
  describe('memory maintenance (reindex, import)', () => {
    const ids = async (scope: Scope, modelId: string, vector: Float32Array) =>
      (await current().memories.searchSimilar(scope, probe(modelId, vector))).hits.map((h) => h.memory.id);

    it('keeps a second model\'s vector beside the first; each search ranks only its own model', async () => {
      const repo = current().memories;
      const a = makeMemory(scopeA, { title: 'alpha', content: 'one' });
      const b = makeMemory(scopeA, { title: 'beta', content: 'two' });
      await repo.insert(a, oldVec(0));
      await repo.insert(b, oldVec(1));
      expect(await ids(scopeA, OLD, axisVector(8, 0))).toEqual([a.id]); // loads any in-process index first
      expect(await ids(scopeA, NEW, axisVector(4, 0))).toEqual([]);

      const written = await repo.putVectors([{ scope: scopeA, id: a.id, title: 'alpha', content: 'one', vector: newVec(0) }]);
      expect(written).toBe(1);
      expect(await ids(scopeA, NEW, axisVector(4, 0))).toEqual([a.id]);
      expect(await ids(scopeA, OLD, axisVector(8, 0))).toEqual([a.id]);
      expect(await ids(scopeA, OLD, axisVector(8, 1))).toEqual([b.id]);
      expect([...(await repo.vectorsOf(scopeA, [a.id, b.id], NEW)).keys()]).toEqual([a.id]);
      expect((await repo.vectorsOf(scopeA, [a.id], OLD)).get(a.id)).toEqual(axisVector(8, 0));

      const coverage = await repo.vectorCoverage({});
      expect(coverage).toEqual({ memories: 2, models: [{ modelId: NEW, dims: 4, vectors: 1 }, { modelId: OLD, dims: 8, vectors: 2 }] });
      expect(await repo.vectorCoverage({ tenantId: scopeB.tenantId })).toEqual({ memories: 0, models: [] });
      // The whole store's count (read from indexes in SQLite, for /health) agrees with the filtered one.
      expect(await repo.vectorCoverage({ tenantId: scopeA.tenantId })).toEqual(coverage);
    });

    it('writes no vector of a text that changed since it was read, and a re-embedding write drops the other models\' vectors', async () => {
      const repo = current().memories;
      const m = makeMemory(scopeA, { title: 't', content: 'before' });
      await repo.insert(m, oldVec(2));
      expect(await repo.putVectors([{ scope: scopeA, id: m.id, title: 't', content: 'stale', vector: newVec(2) }])).toBe(0);
      expect(await repo.putVectors([{ scope: scopeB, id: m.id, title: 't', content: 'before', vector: newVec(2) }])).toBe(0);
      expect(await repo.putVectors([{ scope: scopeA, id: m.id, title: 't', content: 'before', vector: newVec(2) }])).toBe(1);
      // Written again (a resumed run): replaced, not doubled.
      expect(await repo.putVectors([{ scope: scopeA, id: m.id, title: 't', content: 'before', vector: newVec(3) }])).toBe(1);
      expect(await ids(scopeA, NEW, axisVector(4, 3))).toEqual([m.id]);

      // The old-model server updates the text: the new model's vector was made from the old text, so it goes.
      await repo.update(scopeA, m.id, { content: 'after' }, new Date(), 'u', oldVec(2));
      expect(await ids(scopeA, NEW, axisVector(4, 3))).toEqual([]);
      expect(await ids(scopeA, OLD, axisVector(8, 2))).toEqual([m.id]);
      expect((await repo.vectorCoverage({})).models).toEqual([{ modelId: OLD, dims: 8, vectors: 1 }]);
      // A patch that does not re-embed keeps every vector.
      await repo.putVectors([{ scope: scopeA, id: m.id, title: 't', content: 'after', vector: newVec(1) }]);
      await repo.update(scopeA, m.id, { tags: ['x'] }, new Date(), 'u', null);
      expect((await repo.vectorCoverage({})).models.map((x) => x.vectors)).toEqual([1, 1]);
    });

    it('lists the memories lacking a model\'s vector in cursor order, within the filter', async () => {
      const repo = current().memories;
      const ws: Scope = { ...scopeA, workspace: 'other' };
      const made = [];
      for (const [scope, i] of [[scopeA, 0], [scopeB, 1], [scopeA, 2], [ws, 3], [scopeA, 4]] as const) {
        const m = makeMemory(scope, { content: `m${i}` });
        await repo.insert(m, oldVec(i));
        made.push(m);
      }
      await repo.putVectors([{ scope: scopeA, id: made[2]!.id, title: made[2]!.title, content: 'm2', vector: newVec(0) }]);
      const first = await repo.missingVectors(NEW, { tenantId: scopeA.tenantId }, 0, 1);
      expect(first.map((x) => x.memory.id)).toEqual([made[0]!.id]);
      expect(first[0]!.memory).toEqual(made[0]);
      const rest = await repo.missingVectors(NEW, { tenantId: scopeA.tenantId }, first[0]!.cursor, 10);
      expect(rest.map((x) => x.memory.id)).toEqual([made[3]!.id, made[4]!.id]);
      expect((await repo.missingVectors(NEW, { tenantId: scopeA.tenantId, workspace: 'default' }, 0, 10)).map((x) => x.memory.id))
        .toEqual([made[0]!.id, made[4]!.id]);
      expect((await repo.missingVectors(NEW, { mode: 'test' }, 0, 10))).toEqual([]);
      expect((await repo.missingVectors(NEW, {}, 0, 10)).length).toBe(4);
      expect((await repo.missingVectors(OLD, {}, 0, 10)).length).toBe(0);

      // Pruning the old model's vectors, within a filter.
      expect(await repo.dropOtherVectors({ tenantId: scopeB.tenantId }, NEW)).toBe(1);
      expect(await ids(scopeB, OLD, axisVector(8, 1))).toEqual([]);
      expect(await ids(scopeA, OLD, axisVector(8, 0))).toEqual([made[0]!.id]);
      expect((await repo.vectorCoverage({ tenantId: scopeA.tenantId })).models)
        .toEqual([{ modelId: NEW, dims: 4, vectors: 1 }, { modelId: OLD, dims: 8, vectors: 4 }]);
    });

    it('imports memories as they were, with every vector, in one go; skips ids and client ids already stored', async () => {
      const repo = current().memories;
      const existing = makeMemory(scopeA, { clientId: 'taken', content: 'already here' });
      await repo.insert(existing, oldVec(0));
      expect(await ids(scopeA, OLD, axisVector(8, 1))).toEqual([]); // loads any in-process index first
      expect((await repo.searchKeyword(scopeA, { terms: ['zebra'], limit: 10, filter: {} })).total).toBe(0);

      const restored = makeMemory(scopeA, {
        clientId: 'cli-1', title: 'Zebra notes', content: 'zebra crossing', memoryType: 'knowledge', tags: ['a', 'b'],
        metadata: { n: 1, nested: { k: ['v'] } }, createdBy: 'alice', updatedBy: 'bob', accessCount: 7,
        createdAt: new Date('2024-01-02T03:04:05.006Z'), updatedAt: new Date('2024-02-03T04:05:06.007Z'),
        lastAccessed: new Date('2024-03-04T05:06:07.008Z'),
      });
      const sameId = makeMemory(scopeB, { id: existing.id });
      const sameClient = makeMemory(scopeA, { clientId: 'taken' });
      const result = await repo.importMemories([
        { memory: restored, vectors: [oldVec(1), newVec(1)] },
        { memory: sameId, vectors: [oldVec(2)] },
        { memory: sameClient, vectors: [oldVec(3)] },
      ]);
      expect(result).toEqual({ inserted: 1, skipped: [sameId.id, sameClient.id] });
      expect(await repo.findById(scopeA, restored.id)).toEqual(restored);
      expect(await repo.findById(scopeB, existing.id)).toBeNull();
      expect(await ids(scopeA, OLD, axisVector(8, 1))).toEqual([restored.id]);
      expect(await ids(scopeA, NEW, axisVector(4, 1))).toEqual([restored.id]);
      expect((await repo.searchKeyword(scopeA, { terms: ['zebra'], limit: 10, filter: {} })).hits.map((h) => h.memory.id)).toEqual([restored.id]);
      expect((await repo.list(scopeA, { filter: { tagsAll: ['a', 'b'] }, limit: 10, offset: 0, sortBy: 'created_at', sortOrder: 'asc' })).total).toBe(1);
      // An imported memory is one a deduplicating create finds (its content hash is written with it).
      expect((await repo.findByContent(scopeA, '  zebra   crossing '))?.id).toBe(restored.id);
      // Imported again: nothing new.
      expect(await repo.importMemories([{ memory: restored, vectors: [oldVec(1)] }])).toEqual({ inserted: 0, skipped: [restored.id] });
    });
  });
}
