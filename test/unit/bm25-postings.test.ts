import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../support/seeded-random.ts';
import { rankBm25 } from '../../src/adapters/storage/bm25.ts';
import { isDense, rankPostings } from '../../src/adapters/storage/bm25-postings.ts';
import { Posting, PostingWindow } from '../../src/adapters/storage/sqlite/sqlite-keyword-postings.ts';
import { mergeAscending } from '../../src/adapters/storage/sqlite/sqlite-keyword-ranking.ts';

/**
 * The phrase-by-phrase ranking the keyword leg uses for words without a filter, against rankBm25 over the same
 * windows read memory by memory (the path filters and phrases still take): the same hits, scores to the last bit,
 * coverage and total, with caps cutting the windows, lists shared between words, empty lists and zero frequencies.
 */
describe('rankPostings', () => {
  it('ranks and counts as rankBm25 does over the same windows', () => {
    const next = random(11);
    const tables = { dense: 0, hashed: 0 };
    for (let round = 0; round < 80; round++) {
      const docs = 1 + Math.floor(next() * 300);
      // Seqs beyond 2^32 in some rounds: the table hashes the low 32 bits, so seqs 2^32 apart share a first slot.
      const offset = next() < 0.3 ? 2 ** 32 : 0;
      // Half the rounds: seqs close together, ranked in the table indexed by seq (isDense); else far apart, hashed.
      const close = round % 2 === 0;
      const seqOf = (i: number) => offset + (close ? i * 3 : i % 2 === 0 ? i : i * 2 ** 32 / 4) + 1;
      const lengths = new Map(Array.from({ length: docs }, (_, i) => [seqOf(i), 3 + Math.floor(next() * 4) * 4]));
      const seqs = [...lengths.keys()].sort((a, b) => a - b);
      const postings = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
        const p = new Posting();
        const density = next();
        for (const seq of seqs) if (next() < density * 0.5) p.push(seq, next() < 0.05 ? 0 : 1 + Math.floor(next() * 3) * 0.5, lengths.get(seq)!);
        return p;
      });
      // A word may repeat a list (two query words with one stem) or find nothing.
      const lists = [...postings, ...(next() < 0.3 ? [postings[0]!] : []), ...(next() < 0.2 ? [new Posting()] : [])];
      const cap = next() < 0.5 ? 1000 : 1 + Math.floor(next() * 40);
      const holding = lists.map((l) => l.size + Math.floor(next() * 3));
      const base = { holding, documents: docs + 5, averageLength: 9, limit: Math.floor(next() * 20) };

      const cursors = lists.map((l) => new PostingWindow(l, cap));
      const runs = cursors.map((w) => { const run: number[] = []; w.collect(run); return run; });
      const expected = rankBm25({ ...base, frequencies: cursors, candidates: mergeAscending(runs), lengthOf: (s) => lengths.get(s)! });
      const got = rankPostings({ ...base, runs: lists.map((l) => l.newest(cap)) });
      expect(got, `round ${round}`).toEqual(expected);
      expect(got.total).toBe(new Set(runs.flat()).size);
      const flat = runs.flat();
      if (flat.length > 0 && isDense(Math.max(...flat) - Math.min(...flat) + 1, flat.length)) tables.dense++;
      else if (flat.length > 0) tables.hashed++;
    }
    // Both tables served rounds (rounds with seqs far apart and two runs or more are hashed).
    expect(tables.dense).toBeGreaterThan(20);
    expect(tables.hashed).toBeGreaterThan(10);
  });

  it.each([['indexed by seq', 1], ['hashed', 2 ** 30]])('leaves its table (%s) empty for the next ranking, however the last one ended', (_, step) => {
    const p = new Posting();
    for (let seq = 1; seq <= 50; seq++) p.push(seq * step, 1, 4);
    expect(isDense(49 * step + 1, 100)).toBe(step === 1);
    const run = p.newest(1000);
    // Two runs of 50: the same table size (and probe order) as the call that throws below.
    const twice = { runs: [run, run], holding: [50, 50], documents: 100, averageLength: 4, limit: 5 };
    const ranked = rankPostings(twice);
    // A run that throws part-way (a broken source) must not leave seqs behind that a later ranking would count.
    const broken = { ...run, get frequencies(): ArrayLike<number> { throw new Error('broken'); } };
    expect(() => rankPostings({ ...twice, runs: [run, broken] })).toThrow('broken');
    expect(rankPostings(twice)).toEqual(ranked);
    expect(ranked.total).toBe(50);
    expect(ranked.hits).toHaveLength(5);
  });
});
