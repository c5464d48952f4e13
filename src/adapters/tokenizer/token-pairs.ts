const EMPTY = -1;

/**
 * Which token two adjacent tokens merge into: an open-addressing hash table from (left, right) token ranks to the
 * rank of their concatenation, for every pair whose concatenation is itself a token. BPE only ever merges two
 * tokens, so this answers every merge question with two integers instead of slicing and hashing byte strings.
 */
export class TokenPairs {
  private readonly mask: number;
  private readonly lefts: Int32Array;
  private readonly rights: Int32Array;
  private readonly merged: Int32Array;

  /** `capacity` is rounded up to a power of two; keep it at least ~2× the number of pairs. */
  constructor(capacity: number) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(capacity, 16)));
    this.mask = size - 1;
    this.lefts = new Int32Array(size);
    this.rights = new Int32Array(size);
    this.merged = new Int32Array(size).fill(EMPTY);
  }

  set(left: number, right: number, token: number): void {
    let i = slotOf(left, right, this.mask);
    while (this.merged[i] !== EMPTY && (this.lefts[i] !== left || this.rights[i] !== right)) i = (i + 1) & this.mask;
    this.lefts[i] = left;
    this.rights[i] = right;
    this.merged[i] = token;
  }

  /** The token `left` followed by `right` merge into, or -1 when their concatenation is not a token. */
  get(left: number, right: number): number {
    for (let i = slotOf(left, right, this.mask); ; i = (i + 1) & this.mask) {
      const token = this.merged[i]!;
      if (token === EMPTY || (this.lefts[i] === left && this.rights[i] === right)) return token;
    }
  }
}

function slotOf(left: number, right: number, mask: number): number {
  let h = Math.imul(left, 0x9e3779b1) ^ right;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  return (h ^ (h >>> 13)) & mask;
}
