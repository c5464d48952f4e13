import type { BpeVocabulary } from './bpe-vocabulary.ts';

/**
 * Counting the tokens of one pre-tokenized piece, given as its UTF-8 bytes in a binary string (one char per byte),
 * exactly as tiktoken encodes it: a piece that is itself a token is one token; otherwise, starting from single
 * bytes, the adjacent pair whose concatenation has the lowest rank is merged (the leftmost on a tie) until no
 * adjacent pair is a token.
 *
 * js-tiktoken rescans every pair after every merge, which is quadratic in the piece (a long run of one character
 * takes seconds).
 * Long pieces here keep the mergeable pairs in a min-heap ordered by (rank, position), updating only the two pairs
 * next to each merge: the same merges happen in the same order, in O(n log n) time and O(n) memory (~50 bytes per
 * byte of the piece), and the work pauses every MERGES_PER_STEP merges.
 */

const NONE = -1;
/** Pieces up to this many bytes are merged with plain scans (cheaper than building a heap for a word). */
const SCAN_MAX_BYTES = 32;
/** Merges done between two chances to pause, for long pieces. */
const MERGES_PER_STEP = 1024;
/** Heap keys are rank × 2^32 + position: one number orders by rank, then leftmost (exact below 2^53). */
const RANK_SCALE = 2 ** 32;

/** The tokens of a piece that is one token or short; null for a long piece (count it with countPiece, which pauses). */
export function countShortPiece(bytes: string, vocab: BpeVocabulary): number | null {
  if (bytes.length <= 1 || vocab.ranks.has(bytes)) return Math.min(bytes.length, 1);
  return bytes.length <= SCAN_MAX_BYTES ? countByScanning(bytes, vocab) : null;
}

/** The tokens of any piece; yields every MERGES_PER_STEP merges so that the caller can let the event loop run. */
export function* countPiece(bytes: string, vocab: BpeVocabulary): Generator<void, number, void> {
  const short = countShortPiece(bytes, vocab);
  if (short !== null) return short;
  const merger = new HeapMerger(bytes.length, vocab, takeScratch(bytes.length));
  for (let from = 0; from < bytes.length; from += MERGES_PER_STEP) {
    merger.fill(bytes, from, Math.min(from + MERGES_PER_STEP, bytes.length));
    yield;
  }
  for (let below = merger.heapifyStart(); below > 0; below = merger.heapify(below, MERGES_PER_STEP)) yield;
  while (!merger.merge(MERGES_PER_STEP)) yield;
  keepScratch(merger.scratch);
  return merger.parts;
}

/** The typed arrays of one merge (capacity ≥ the piece's bytes). */
interface Scratch {
  token: Int32Array;
  next: Int32Array;
  prev: Int32Array;
  pairKey: Float64Array;
  heap: Float64Array;
}

/**
 * One set of arrays is kept for the next long piece (up to KEEP_MAX_BYTES, ~32 bytes each): megabyte pieces
 * would otherwise allocate tens of MB of array buffers each, and that external memory brings on full garbage
 * collections, which hold the event loop.
 */
const KEEP_MAX_BYTES = 1 << 20;
let spare: Scratch | undefined;

function takeScratch(n: number): Scratch {
  if (spare && spare.token.length >= n) {
    const taken = spare;
    spare = undefined;
    return taken;
  }
  return {
    token: new Int32Array(n), next: new Int32Array(n), prev: new Int32Array(n),
    pairKey: new Float64Array(n), heap: new Float64Array(2 * n),
  };
}

function keepScratch(scratch: Scratch): void {
  if (scratch.token.length <= KEEP_MAX_BYTES && (!spare || spare.token.length < scratch.token.length)) spare = scratch;
}

/** tiktoken's own loop (every pair rescanned after each merge), on token ranks: fine for short pieces. */
function countByScanning(bytes: string, vocab: BpeVocabulary): number {
  const tokens = Array.from({ length: bytes.length }, (_, i) => vocab.byteTokens[bytes.charCodeAt(i)]!);
  for (;;) {
    let best = NONE;
    let at = -1;
    for (let i = 0; i + 1 < tokens.length; i++) {
      const merged = vocab.pairs.get(tokens[i]!, tokens[i + 1]!);
      if (merged !== NONE && (best === NONE || merged < best)) {
        best = merged;
        at = i;
      }
    }
    if (at < 0) return tokens.length;
    tokens.splice(at, 2, best);
  }
}

/**
 * The merges of one long piece. Parts are named by their first byte and linked in order. The heap holds keys
 * rank × RANK_SCALE + part of mergeable pairs; a key whose part has since been absorbed or re-paired is stale and
 * skipped when it surfaces (cheaper than moving entries: the heap array alone is touched while sifting).
 */
class HeapMerger {
  /** Parts left: the piece's token count once merging is done. */
  parts: number;
  private readonly n: number;
  private readonly token: Int32Array; // the token a part is; -1 once absorbed into the part before it
  private readonly next: Int32Array; // the following part (n after the last)
  private readonly prev: Int32Array; // the preceding part (-1 before the first)
  private readonly pairKey: Float64Array; // current key of (part + next part), -1 when they do not merge
  private heap: Float64Array;
  private size = 0;

  constructor(n: number, private readonly vocab: BpeVocabulary, scratch: Scratch) {
    this.n = n;
    this.parts = n;
    this.token = scratch.token;
    this.next = scratch.next;
    this.prev = scratch.prev;
    this.pairKey = scratch.pairKey.fill(NONE, 0, n);
    this.heap = scratch.heap;
  }

  /** The arrays, for the next piece (the heap may have grown). */
  get scratch(): Scratch {
    return { token: this.token, next: this.next, prev: this.prev, pairKey: this.pairKey, heap: this.heap };
  }

  /** Sets up bytes [from, to): each byte a part, each mergeable pair in the heap (not yet in heap order). */
  fill(bytes: string, from: number, to: number): void {
    const { token, next, prev, pairKey, vocab } = this;
    for (let i = from; i < to; i++) {
      token[i] = vocab.byteTokens[bytes.charCodeAt(i)]!;
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    // Pairs whose second byte is in this range (the last byte pairs once the next range is filled).
    for (let i = Math.max(from - 1, 0); i < to - 1; i++) {
      const merged = vocab.pairs.get(token[i]!, token[i + 1]!);
      if (merged === NONE) continue;
      pairKey[i] = merged * RANK_SCALE + i;
      this.heap[this.size++] = pairKey[i]!;
    }
  }

  /** Where bottom-up heap building starts: one past the last entry with children. */
  heapifyStart(): number {
    return this.size >> 1;
  }

  /** Sifts down at most `budget` entries below `below`; returns where to go on (0: the heap is in order). */
  heapify(below: number, budget: number): number {
    const stop = Math.max(below - budget, 0);
    for (let i = below - 1; i >= stop; i--) this.siftDown(i);
    return stop;
  }

  /** Takes at most `budget` keys off the heap (merging the valid ones); true once no pair is left to merge. */
  merge(budget: number): boolean {
    const { token, next, prev, pairKey, n } = this;
    // Stale keys cost a pop too: they count against the budget (at the end, they are all that is left).
    for (let left = budget; left > 0 && this.size > 0; left--) {
      const key = this.pop();
      const part = key % RANK_SCALE;
      if (token[part] === NONE || pairKey[part] !== key) continue; // stale
      const absorbed = next[part]!;
      const after = next[absorbed]!;
      token[part] = (key - part) / RANK_SCALE;
      token[absorbed] = NONE;
      next[part] = after;
      if (after < n) prev[after] = part;
      this.parts--;
      this.pair(part, after < n ? this.vocab.pairs.get(token[part]!, token[after]!) : NONE);
      const before = prev[part]!;
      if (before >= 0) this.pair(before, this.vocab.pairs.get(token[before]!, token[part]!));
    }
    return this.size === 0;
  }

  /** Records what a part and its next part merge into (NONE: nothing); the old key, if any, goes stale. */
  private pair(part: number, merged: number): void {
    if (merged === NONE) {
      this.pairKey[part] = NONE;
      return;
    }
    const key = merged * RANK_SCALE + part;
    this.pairKey[part] = key;
    if (this.size === this.heap.length) {
      const grown = new Float64Array(this.heap.length * 2);
      grown.set(this.heap);
      this.heap = grown;
    }
    this.heap[this.size++] = key;
    this.siftUp(this.size - 1);
  }

  private pop(): number {
    const { heap } = this;
    const top = heap[0]!;
    heap[0] = heap[--this.size]!;
    if (this.size > 0) this.siftDown(0);
    return top;
  }

  private siftUp(from: number): void {
    const { heap } = this;
    const key = heap[from]!;
    let at = from;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (heap[parent]! <= key) break;
      heap[at] = heap[parent]!;
      at = parent;
    }
    heap[at] = key;
  }

  private siftDown(from: number): void {
    const { heap, size } = this;
    const key = heap[from]!;
    let at = from;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= key) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = key;
  }
}
