import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../support/seeded-random.ts';
import { rankBm25 } from '../../src/adapters/storage/bm25.ts';
import { mergeWindows, Posting, PostingWindow } from '../../src/adapters/storage/sqlite/sqlite-keyword-postings.ts';
import { mergeAscending } from '../../src/adapters/storage/sqlite/sqlite-keyword-ranking.ts';


/**
 * The one-pass merge of posting windows (what the keyword leg ranks words with) against the two-step path it replaced
 * for that case (the windows' seqs merged by mergeAscending, then each looked up in every window's cursor): the same
 * candidates, frequencies, ranking and total, with caps cutting the windows, lists shared between words and empty.
 */
describe('mergeWindows', () => {
  it('hands BM25 the candidates and frequencies the cursors give, capped windows included', () => {
    const next = random(11);
    for (let round = 0; round < 60; round++) {
      const docs = 1 + Math.floor(next() * 300);
      const postings = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
        const p = new Posting();
        const density = next();
        for (let seq = 1; seq <= docs; seq++) if (next() < density * 0.5) p.push(seq, 1 + Math.floor(next() * 3) * 0.5);
        return p;
      });
      // A word may repeat a list (two query words with one stem) or find nothing.
      const lists = [...postings, ...(next() < 0.3 ? [postings[0]!] : []), ...(next() < 0.2 ? [new Posting()] : [])];
      const cap = next() < 0.5 ? 1000 : 1 + Math.floor(next() * 40);
      const lengths = new Map(Array.from({ length: docs }, (_, i) => [i + 1, 3 + Math.floor(next() * 4) * 4]));
      const base = { holding: lists.map((l) => l.size), lengthOf: (s: number) => lengths.get(s)!, documents: docs, averageLength: 9, limit: 1 + Math.floor(next() * 20) };

      const cursors = lists.map((l) => new PostingWindow(l, cap));
      const runs = cursors.map((w) => { const run: number[] = []; w.collect(run); return run; });
      const before = rankBm25({ ...base, frequencies: cursors, candidates: mergeAscending(runs) });
      const windows = lists.map((l) => new PostingWindow(l, cap));
      const after = rankBm25({ ...base, frequencies: windows, stream: mergeWindows(windows) });
      expect(after, `round ${round}`).toEqual(before);
      expect(after.total).toBe(new Set(runs.flat()).size);
    }
  });

  it('yields each memory once, ascending, with 0 for the words it lacks', () => {
    const a = new Posting();
    const b = new Posting();
    for (const [seq, f] of [[2, 1], [5, 2], [9, 1.5]] as const) a.push(seq, f);
    for (const [seq, f] of [[1, 3], [5, 1], [7, 2], [9, 2]] as const) b.push(seq, f);
    const stream = mergeWindows([new PostingWindow(a, 1000), new PostingWindow(b, 2), new PostingWindow(new Posting(), 5)]);
    const tfs = new Float64Array(3);
    const out: [number, number[]][] = [];
    for (let seq = stream.next(tfs); seq >= 0; seq = stream.next(tfs)) out.push([seq, [...tfs]]);
    // b's window holds only its 2 newest memories (7 and 9).
    expect(out).toEqual([[2, [1, 0, 0]], [5, [2, 0, 0]], [7, [0, 2, 0]], [9, [1.5, 2, 0]]]);
  });
});
