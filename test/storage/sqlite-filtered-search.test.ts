import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import type { Memory, MemoryFilter } from '../../src/core/memories/memory.types.ts';
import { makeMemory, scopeA } from '../support/fixtures.ts';

/**
 * A filtered similarity search on SQLite checks a filter without tags on the rows an unfiltered scan finds above a
 * real threshold when they are few, and applies it before the scan otherwise (sqlite-memory.repository.ts,
 * similarSeqs). Either way the answer must be a filter-then-scan's: checked against the plainest exact one, computed
 * here from the stored vectors, at thresholds that send the search each way.
 */
const dims = 32;
const size = 1500;
const dir = mkdtempSync(join(tmpdir(), 'mnemo-filtered-search-'));
const storage = createSqliteStorage({ file: join(dir, 'mnemo.db'), synchronous: 'normal', searchThreads: 0 });
let seed = 7;
const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 * 2 - 1; };
// Distinct random vectors (no ties between cosines, so "the top 10" is one list).
const vectors = Array.from({ length: size + 4 }, () => Float32Array.from({ length: dims }, next));
const queries = vectors.slice(size);
const memories: Memory[] = [];
afterAll(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeAll(async () => {
  for (let i = 0; i < size; i++) {
    memories.push(makeMemory(scopeA, {
      memoryType: i % 3 === 0 ? 'fact' : 'note', tags: i % 2 === 0 ? ['even'] : [],
      metadata: { project: i % 50 === 0 ? 'rare' : 'common' },
    }));
  }
  await storage.memories.applyAtomically(scopeA, memories.map((memory, i) => ({
    kind: 'insert' as const, memory, vector: { modelId: 'm', vector: vectors[i]! },
  })));
});

const cosine = (a: Float32Array, b: Float32Array) => {
  let dot = 0; let na = 0; let nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! * a[i]!; nb += b[i]! * b[i]!; }
  return dot / Math.sqrt(na * nb);
};

/** The filter-then-scan answer: every memory the filter keeps, scored exactly, best first. */
function expected(query: Float32Array, keep: (m: Memory) => boolean, minCosine: number, limit: number) {
  const scored = memories.map((m, i) => ({ id: m.id, c: cosine(query, vectors[i]!) })).filter((x, i) => keep(memories[i]!) && x.c >= minCosine);
  scored.sort((a, b) => b.c - a.c);
  return { ids: scored.slice(0, limit).map((x) => x.id), total: scored.length };
}

/** A threshold halfway between the n-th and n+1-th best cosine of the whole scope (so that about n rows reach it). */
function thresholdFor(query: Float32Array, n: number): number {
  const all = vectors.slice(0, size).map((v) => cosine(query, v)).sort((a, b) => b - a);
  return (all[n - 1]! + all[n]!) / 2;
}

describe('filtered similarity search on SQLite', () => {
  const cases: [string, MemoryFilter, (m: Memory) => boolean][] = [
    ['metadata, 2 %', { metadata: { project: 'rare' } }, (m) => m.metadata.project === 'rare'],
    ['metadata, 98 %', { metadata: { project: 'common' } }, (m) => m.metadata.project === 'common'],
    ['type', { types: ['fact'] }, (m) => m.memoryType === 'fact'],
    ['type and tag', { types: ['fact'], tagsAny: ['even'] }, (m) => m.memoryType === 'fact' && m.tags.includes('even')],
  ];
  // Few rows above the threshold (checked after an unfiltered scan), more than that check takes (filtered first),
  // and every row (G1's threshold 0).
  const reaching = [40, 400, 1200, size];
  it.each(cases)('gives a filter-then-scan\'s hits and total: %s', async (_, filter, keep) => {
    for (const [q, query] of queries.entries()) {
      for (const n of reaching) {
        const minCosine = n === size ? -1 : thresholdFor(query, n);
        const want = expected(query, keep, minCosine, 10);
        const got = await storage.memories.searchSimilar(scopeA, { vector: query, modelId: 'm', limit: 10, minCosine, filter });
        expect({ q, n, ids: got.hits.map((h) => h.memory.id), total: got.total }).toEqual({ q, n, ...want });
      }
    }
  });
});
