/**
 * Key → row of a VectorMatrix, as an open-addressing hash table of row numbers in one Int32Array (linear probing,
 * backward-shift deletion). The keys themselves stay in the matrix's key column and are read from there, so an entry
 * costs 4 bytes per slot (two slots a row at most): about 1 MB at 100k rows, where a Map<number, number> held 4-6 MB
 * of heap objects.
 */
const EMPTY = 0;
const TWO_32 = 4294967296;

export class RowIndex {
  /** row + 1 per slot, 0 when empty. The table is a power of two, at most half full. */
  private slots: Int32Array;
  private mask: number;
  private used = 0;

  /** `keys`: the matrix's key column (re-pointed by rebind when the matrix reallocates). */
  constructor(private keys: Float64Array, rows: number) {
    this.slots = new Int32Array(tableSize(rows));
    this.mask = this.slots.length - 1;
  }

  /** The row holding `key`, or -1. */
  get(key: number): number {
    const slot = this.find(key);
    return slot < 0 ? -1 : this.slots[slot]! - 1;
  }

  /** Records that `key` (already written to keys[row]) lives in `row`; a key present moves to it. */
  set(key: number, row: number): void {
    let i = hash(key) & this.mask;
    for (;;) {
      const s = this.slots[i]!;
      if (s === EMPTY) break;
      if (this.keys[s - 1] === key) {
        this.slots[i] = row + 1;
        return;
      }
      i = (i + 1) & this.mask;
    }
    this.slots[i] = row + 1;
    if (++this.used * 2 > this.slots.length) this.rebuild(this.slots.length * 2, this.used);
  }

  /**
   * Forgets `key` (keys[its row] must still hold it): the entries after it in its probe run shift back, so every
   * lookup still finds its key before an empty slot.
   */
  delete(key: number): boolean {
    let hole = this.find(key);
    if (hole < 0) return false;
    this.used--;
    let i = hole;
    for (;;) {
      i = (i + 1) & this.mask;
      const s = this.slots[i]!;
      if (s === EMPTY) break;
      const home = hash(this.keys[s - 1]!) & this.mask;
      // The entry at i may move to the hole only if its home is not in (hole, i] (cyclically).
      if (hole <= i ? home > hole && home <= i : home > hole || home <= i) continue;
      this.slots[hole] = s;
      hole = i;
    }
    this.slots[hole] = EMPTY;
    return true;
  }

  /**
   * The matrix reallocated its key column (rows [0, count) copied over) and may now hold `capacity` rows: the table
   * is sized for that and rebuilt from the column.
   */
  rebind(keys: Float64Array, count: number, capacity: number): void {
    this.keys = keys;
    this.rebuild(tableSize(capacity), count);
  }

  /** Bytes held, for measurements. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  private find(key: number): number {
    let i = hash(key) & this.mask;
    for (;;) {
      const s = this.slots[i]!;
      if (s === EMPTY) return -1;
      if (this.keys[s - 1] === key) return i;
      i = (i + 1) & this.mask;
    }
  }

  /** A fresh table of `size` slots holding rows [0, count) of the key column. */
  private rebuild(size: number, count: number): void {
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    this.used = 0;
    for (let row = 0; row < count; row++) {
      let i = hash(this.keys[row]!) & this.mask;
      while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
      this.slots[i] = row + 1;
      this.used++;
    }
  }
}

/** Slots for `rows` rows at most half full (at least 16). */
function tableSize(rows: number): number {
  let size = 16;
  while (size < rows * 2) size *= 2;
  return size;
}

/** Mixes an integer key (a memory's seq, below 2^53) into 32 bits. */
function hash(key: number): number {
  const lo = key >>> 0;
  const hi = (key / TWO_32) >>> 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b), 0x9e3779b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) >>> 0;
}
