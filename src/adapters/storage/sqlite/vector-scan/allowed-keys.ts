/**
 * The keys a search may score (a prefilter's result, kept by a cache), with the row mask a matrix last built from
 * them: a search reuses that mask while the matrix's rows stay where they were (VectorMatrix.prepare), so a cached
 * prefilter costs the scan nothing beyond the scan.
 */
export class AllowedKeys {
  /** The mask last built, and which matrix and row layout it was built for (`id:layout`). */
  mask: Uint8Array | null = null;
  builtFor = '';

  constructor(readonly keys: readonly number[] | Float64Array | KeyBitmap) {}
}

/**
 * A set of non-negative integer keys (seqs) as one bit per key from the smallest: membership and changes cost a few
 * operations, and a matrix's mask is one pass over its key column (maskOf) instead of a hash lookup per key, which
 * took ~1 ms per 50,000 keys. Grows to take keys outside its range.
 */
export class KeyBitmap {
  private base = 0;
  private words = new Uint32Array(0);
  /** Keys in the set. */
  size = 0;

  static of(keys: ArrayLike<number>): KeyBitmap {
    const bits = new KeyBitmap();
    if (keys.length === 0) return bits;
    let low = Infinity;
    let high = -Infinity;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (key < low) low = key;
      if (key > high) high = key;
    }
    bits.base = low;
    bits.words = new Uint32Array(Math.floor((high - low) / 32) + 1);
    for (let i = 0; i < keys.length; i++) {
      const at = keys[i]! - low;
      const word = bits.words[at >>> 5]!;
      const bit = 1 << (at & 31);
      if ((word & bit) === 0) bits.size++;
      bits.words[at >>> 5] = word | bit;
    }
    return bits;
  }

  /** Bytes held. */
  get bytes(): number {
    return this.words.byteLength;
  }

  has(key: number): boolean {
    const at = key - this.base;
    return at >= 0 && at < this.words.length * 32 && ((this.words[at >>> 5]! >>> (at & 31)) & 1) === 1;
  }

  add(key: number): void {
    if (this.has(key)) return;
    this.size++;
    let at = key - this.base;
    if (at < 0 || at >= this.words.length * 32) {
      this.cover(key);
      at = key - this.base;
    }
    this.words[at >>> 5] = this.words[at >>> 5]! | (1 << (at & 31));
  }

  delete(key: number): void {
    if (!this.has(key)) return;
    this.size--;
    const at = key - this.base;
    this.words[at >>> 5] = this.words[at >>> 5]! & ~(1 << (at & 31));
  }

  /** 1 for each of the first `count` rows of `keys` (a matrix's key column) whose key is in the set, else 0. */
  maskOf(keys: Float64Array, count: number): Uint8Array {
    const mask = new Uint8Array(count);
    const { base, words } = this;
    const span = words.length * 32;
    for (let row = 0; row < count; row++) {
      const at = keys[row]! - base;
      if (at >= 0 && at < span && ((words[at >>> 5]! >>> (at & 31)) & 1) === 1) mask[row] = 1;
    }
    return mask;
  }

  /** Widens the range to hold `key` (down by whole words, so each bit keeps its place), with room left above it for new rows' higher seqs. */
  private cover(key: number): void {
    if (this.words.length === 0) {
      this.base = key;
      this.words = new Uint32Array(32);
      return;
    }
    const down = key < this.base ? Math.ceil((this.base - key) / 32) : 0;
    const up = Math.max(this.words.length, Math.floor((key - this.base) / 32) + 1);
    const words = new Uint32Array(down + up + (down === 0 ? Math.ceil(up / 4) : 0));
    words.set(this.words, down);
    this.base -= down * 32;
    this.words = words;
  }
}
