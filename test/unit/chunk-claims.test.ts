import { describe, expect, it } from 'vitest';
import { claimedChunks, newChunkOwners, type ChunkShare } from '../../src/adapters/storage/sqlite/vector-scan/chunk-claims.ts';

const range = (from: number, to: number, step = 1) => Array.from({ length: Math.abs(to - from) }, (_, i) => from + i * step);

/** Pulls from the parts' claim orders in turn, one chunk at a time (as threads running side by side would). */
function interleave(parts: Generator<number>[]): number[][] {
  const taken = parts.map(() => [] as number[]);
  const running = new Set(parts.keys());
  while (running.size > 0) {
    for (const p of [...running]) {
      const next = parts[p]!.next();
      if (next.done) running.delete(p);
      else taken[p]!.push(next.value);
    }
  }
  return taken;
}

describe('chunk claims (the parts of one search sharing its rows)', () => {
  it('gives a scan without a share, or with one part, every chunk in order', () => {
    expect([...claimedChunks(null, 5)]).toEqual([0, 1, 2, 3, 4]);
    expect([...claimedChunks({ owners: newChunkOwners(5), part: 1, parts: 1 }, 5)]).toEqual([0, 1, 2, 3, 4]);
  });

  it('lets parts running side by side each start with their own share and take what the others have not reached', () => {
    const owners = newChunkOwners(10);
    const share = (part: number): ChunkShare => ({ owners, part, parts: 2 });
    const [one, two] = interleave([claimedChunks(share(1), 10), claimedChunks(share(2), 10)]);
    // Each scans its half: at the same pace they meet at the boundary, and nothing is scanned twice.
    expect(one).toEqual(range(0, 5));
    expect(two).toEqual(range(5, 10));
  });

  it('lets a part that got the CPU first take the chunks of a part that has not started, from the end of its share', () => {
    const owners = newChunkOwners(10);
    const first = claimedChunks({ owners, part: 1, parts: 2 }, 10);
    const early = [first.next().value, first.next().value, first.next().value, first.next().value, first.next().value,
      first.next().value, first.next().value];
    // Its own share, then the other part's from its end backwards.
    expect(early).toEqual([0, 1, 2, 3, 4, 9, 8]);
    // The late part starts with its share too, and the two meet in it.
    const [one = [], two = []] = interleave([first, claimedChunks({ owners, part: 2, parts: 2 }, 10)]);
    expect(one).toEqual([7, 6]);
    expect(two).toEqual([5]);
    expect([...early, ...one, ...two].sort((a, b) => a - b)).toEqual(range(0, 10));
  });

  it('scans every chunk exactly once whatever the number of parts and chunks', () => {
    for (const parts of [2, 3, 4]) {
      for (const chunks of [1, 2, 3, 7, 16, 33]) {
        const owners = newChunkOwners(chunks);
        const taken = interleave(range(1, parts + 1).map((part) => claimedChunks({ owners, part, parts }, chunks)));
        expect(taken.flat().sort((a, b) => a - b), `${parts} parts, ${chunks} chunks`).toEqual(range(0, chunks));
      }
    }
  });

  it('gives a part run again (its thread died) the chunks it had claimed, with those still free', () => {
    const owners = newChunkOwners(8);
    const dying = claimedChunks({ owners, part: 1, parts: 2 }, 8);
    const claimedBeforeDeath = [dying.next().value, dying.next().value, dying.next().value]; // then the thread dies
    const other = [...claimedChunks({ owners, part: 2, parts: 2 }, 8)];
    const rerun = [...claimedChunks({ owners, part: 1, parts: 2 }, 8)];
    expect(claimedBeforeDeath).toEqual([0, 1, 2]);
    expect(other).toEqual([4, 5, 6, 7, 3]);
    // The re-run scans again what the dead thread claimed (its results were lost with it), and nothing of part 2's.
    expect(rerun).toEqual([0, 1, 2]);
    expect([...other, ...rerun].sort((a, b) => a - b)).toEqual(range(0, 8));
  });
});
