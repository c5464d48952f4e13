import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowIndex } from '../../src/adapters/storage/sqlite/vector-scan/row-index.ts';

/**
 * The matrix's key → row table, driven as VectorMatrix drives it (dense rows, a deletion moves the last row into the
 * hole), against a Map: every key present is found at its row, every key absent is not.
 */
class Dense {
  keys = new Float64Array(4);
  count = 0;
  index = new RowIndex(this.keys, 4);
  readonly reference = new Map<number, number>();

  put(key: number): void {
    if (this.index.get(key) >= 0) return;
    if (this.count === this.keys.length) {
      const bigger = new Float64Array(this.keys.length * 2);
      bigger.set(this.keys);
      this.keys = bigger;
      this.index.rebind(bigger, this.count, bigger.length);
    }
    const row = this.count++;
    this.keys[row] = key;
    this.index.set(key, row);
    this.reference.set(key, row);
  }

  drop(key: number): boolean {
    const row = this.index.get(key);
    if (row < 0) return false;
    this.index.delete(key);
    const last = --this.count;
    if (row !== last) {
      const moved = this.keys[last]!;
      this.index.set(moved, row);
      this.keys[row] = moved;
      this.reference.set(moved, row);
    }
    this.reference.delete(key);
    return true;
  }

  check(probe: readonly number[]): void {
    for (const [key, row] of this.reference) expect(this.index.get(key)).toBe(row);
    for (const key of probe) if (!this.reference.has(key)) expect(this.index.get(key)).toBe(-1);
  }
}

describe('RowIndex', () => {
  it('agrees with a Map through random inserts and swap-deletes, small and large keys alike', () => {
    const key = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 2 ** 53 - 1 }), fc.constantFrom(2 ** 32, 2 ** 32 + 1, 2 ** 33));
    fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), key), { maxLength: 400 }), (ops) => {
      const d = new Dense();
      for (const [insert, k] of ops) {
        if (insert) d.put(k);
        else {
          const had = d.reference.has(k);
          expect(d.drop(k)).toBe(had);
        }
      }
      d.check(ops.map(([, k]) => k));
    }), { numRuns: 300 });
  });

  it('keeps finding every key after many deletions in long probe runs', () => {
    const d = new Dense();
    // Consecutive keys in a small table: long runs, so deletion must shift entries back correctly.
    for (let k = 1; k <= 5000; k++) d.put(k);
    for (let k = 1; k <= 5000; k += 3) expect(d.drop(k)).toBe(true);
    for (let k = 5001; k <= 6000; k++) d.put(k);
    d.check([1, 4, 7, 2, 3, 6001, 10_000]);
    expect(d.reference.size).toBe(5000 - 1667 + 1000);
  });
});
