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
 * A set of non-negative integer keys (seqs) as one bit per key from the smallest (rounded down to a multiple of 32, so
 * that two sets combine word by word): membership and changes cost a few operations, and a matrix's mask is one pass
 * over its key column (maskOf) instead of a hash lookup per key, which took ~1 ms per 50,000 keys. Grows to take keys
 * outside its range.
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
    bits.base = low - (low % 32);
    bits.words = new Uint32Array(Math.floor((high - bits.base) / 32) + 1);
    for (let i = 0; i < keys.length; i++) {
      const at = keys[i]! - bits.base;
      const word = bits.words[at >>> 5]!;
      const bit = 1 << (at & 31);
      if ((word & bit) === 0) bits.size++;
      bits.words[at >>> 5] = word | bit;
    }
    return bits;
  }

  /**
   * The keys of a list of decimal integers separated by commas (SQLite's group_concat, in any order, repeats
   * allowed), each within [low, high]: one string from SQLite instead of one row through the driver per key, which
   * cost several times as much (BENCHMARKS.md, filtered similarity search).
   */
  static ofList(list: string | null, low: number, high: number): KeyBitmap {
    const bits = new KeyBitmap();
    if (!list) return bits;
    const base = low - (low % 32);
    const span = high - base;
    const words = new Uint32Array(Math.floor(span / 32) + 1);
    let size = 0;
    let value = 0;
    for (let i = 0; i <= list.length; i++) {
      const c = i < list.length ? list.charCodeAt(i) : COMMA;
      if (c !== COMMA) {
        if (c < ZERO || c > ZERO + 9) throw new RangeError(`not a list of non-negative integers: ${list.slice(0, 40)}`);
        value = value * 10 + (c - ZERO);
        continue;
      }
      const at = value - base;
      if (value < low || at > span) throw new RangeError(`${value} is outside [${low}, ${high}]`);
      const bit = 1 << (at & 31);
      const word = words[at >>> 5]!;
      if ((word & bit) === 0) {
        size++;
        words[at >>> 5] = word | bit;
      }
      value = 0;
    }
    bits.base = base;
    bits.words = words;
    bits.size = size;
    return bits;
  }

  /** The keys in any of `sets` (a new set). */
  static union(sets: readonly KeyBitmap[]): KeyBitmap {
    const parts = sets.filter((s) => s.words.length > 0);
    const out = new KeyBitmap();
    if (parts.length === 0) return out;
    const base = Math.min(...parts.map((s) => s.base));
    const end = Math.max(...parts.map((s) => s.base + 32 * s.words.length));
    const words = new Uint32Array((end - base) / 32);
    for (const s of parts) {
      const from = (s.base - base) / 32;
      for (let i = 0; i < s.words.length; i++) words[from + i] = words[from + i]! | s.words[i]!;
    }
    out.base = base;
    out.words = words;
    out.size = bitCount(words);
    return out;
  }

  /** The keys in both `a` and `b` (a new set). */
  static intersection(a: KeyBitmap, b: KeyBitmap): KeyBitmap {
    const out = new KeyBitmap();
    const base = Math.max(a.base, b.base);
    const end = Math.min(a.base + 32 * a.words.length, b.base + 32 * b.words.length);
    if (end <= base) return out;
    const words = new Uint32Array((end - base) / 32);
    const fromA = (base - a.base) / 32;
    const fromB = (base - b.base) / 32;
    for (let i = 0; i < words.length; i++) words[i] = a.words[fromA + i]! & b.words[fromB + i]!;
    out.base = base;
    out.words = words;
    out.size = bitCount(words);
    return out;
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
      this.base = key - (key % 32);
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

const COMMA = 44;
const ZERO = 48;

/** Bits set in `words`. */
function bitCount(words: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    v -= (v >>> 1) & 0x55555555;
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    n += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
  }
  return n;
}
