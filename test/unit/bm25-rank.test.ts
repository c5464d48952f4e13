import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../support/seeded-random.ts';
import { rankBm25 } from '../../src/adapters/storage/bm25.ts';


describe('rankBm25', () => {
  it('keeps exactly the best `limit` of a full sort (ties by seq) and counts every candidate', () => {
    const next = random(7);
    for (let round = 0; round < 30; round++) {
      const docs = 1 + Math.floor(next() * 400);
      const phrases = 1 + Math.floor(next() * 4);
      // Few distinct frequencies and lengths, so that ties happen and must break by seq.
      const frequencies = Array.from({ length: phrases }, () => {
        const f = new Map<number, number>();
        for (let seq = 1; seq <= docs; seq++) if (next() < 0.3) f.set(seq, 1 + Math.floor(next() * 3));
        return f;
      });
      const lengths = new Map(Array.from({ length: docs }, (_, i) => [i + 1, 5 + Math.floor(next() * 3) * 5]));
      const candidates = [...new Set(frequencies.flatMap((f) => [...f.keys()]))];
      const input = { frequencies, candidates, lengthOf: (s: number) => lengths.get(s)!, documents: docs, averageLength: 10 };
      const all = rankBm25({ ...input, limit: candidates.length + 1 });
      expect(all.total).toBe(candidates.length);
      const sorted = [...all.hits].sort((a, b) => b.score - a.score || a.seq - b.seq);
      expect(all.hits).toEqual(sorted);
      for (const limit of [0, 1, 3, 10, 50]) {
        const top = rankBm25({ ...input, limit });
        expect(top.total).toBe(candidates.length);
        expect(top.hits).toEqual(sorted.slice(0, limit));
      }
    }
  });

  it('coverage is the share of the query\'s idf mass held, whatever the frequency', () => {
    // 10 documents; phrase 0 held by doc 1 only, phrase 1 by docs 1-3 (tf 5 in doc 2), phrase 2 by none.
    const frequencies = [new Map([[1, 1]]), new Map([[1, 1], [2, 5], [3, 1]]), new Map<number, number>()];
    const idf = (n: number) => Math.log((10 - n + 0.5) / (n + 0.5));
    const mass = idf(1) + idf(3) + idf(0);
    const { hits } = rankBm25({ frequencies, candidates: [1, 2, 3], lengthOf: () => 10, documents: 10, averageLength: 10, limit: 10 });
    const bySeq = new Map(hits.map((h) => [h.seq, h.coverage]));
    expect(bySeq.get(1)).toBeCloseTo((idf(1) + idf(3)) / mass, 12);
    expect(bySeq.get(2)).toBeCloseTo(idf(3) / mass, 12);
    expect(bySeq.get(3)).toBeCloseTo(idf(3) / mass, 12);
  });
});
