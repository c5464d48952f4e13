import { WEIGHTS } from './pg-keyword-ranking.ts';

/** A lexeme's postings: its holders' slots ascending by seq, and each holder's column-weighted frequency of it. */
export interface Postings {
  /** Slots (KeywordCorpus.seqOfSlot) in [0, count), ascending by their memories' seqs. */
  readonly slots: Int32Array;
  /** The memory's column-weighted frequency of the lexeme (0 when it holds it without positions). */
  readonly frequencies: Float64Array;
  readonly count: number;
}

/**
 * One workspace's `memories.keywords` held in memory (pg-keyword-index.ts): per memory its keyword_length and its
 * lexemes' positions with weight labels, and per lexeme its postings. Compact: lexemes are interned to ids; each memory
 * has a slot (its seq and length in typed arrays, so a ranking reads them by index); a memory's occurrences are one
 * Uint16Array of [id high, id low, count, position << 2 | weight, …] per lexeme (tsvector positions fit 14 bits, its
 * four weights 2), read only for phrases; a lexeme's postings are the slots holding it, ascending by seq, with each
 * one's weighted frequency, computed once here so that a ranking walks arrays and looks nothing up per candidate.
 */
export class KeywordCorpus {
  private readonly ids = new Map<string, number>();
  private readonly postingSlots: Int32Array[] = [];
  private readonly postingFrequencies: Float64Array[] = [];
  private readonly postingCounts: number[] = [];
  private readonly docs = new Map<number, { slot: number; length: number; terms: Uint16Array }>();
  /** Per slot its memory's seq and keyword_length (a free slot keeps its last values: no posting names it). */
  private seqs = new Float64Array(1024);
  private lengths = new Float64Array(1024);
  private slotsUsed = 0;
  private readonly freeSlots: number[] = [];
  /** The sum of the memories' keyword_length (BM25's average length is this over `documents`). */
  totalLength = 0;

  get documents(): number {
    return this.docs.size;
  }

  /** How many slots there are (every slot a posting names is below it). */
  get slotCount(): number {
    return this.slotsUsed;
  }

  /** The seq of the memory in each slot (a view: valid until the next change). */
  get seqOfSlot(): Float64Array {
    return this.seqs;
  }

  /** The keyword_length of the memory in each slot (a view: valid until the next change). */
  get lengthOfSlot(): Float64Array {
    return this.lengths;
  }

  lengthOf(seq: number): number {
    return this.docs.get(seq)?.length ?? 0;
  }

  /** The memory `seq` as it is now: its keyword_length and its keywords in tsvector's text form. */
  set(seq: number, length: number, keywords: string): void {
    this.remove(seq);
    const terms = parseTsvector(keywords, (lexeme) => {
      let id = this.ids.get(lexeme);
      if (id === undefined) {
        id = this.postingSlots.length;
        this.ids.set(lexeme, id);
        this.postingSlots.push(NO_SLOTS);
        this.postingFrequencies.push(NO_FREQUENCIES);
        this.postingCounts.push(0);
      }
      return id;
    });
    const slot = this.takeSlot(seq, length);
    for (let i = 0; i < terms.length; i += 3 + terms[i + 2]!) {
      this.addPosting(terms[i]! * 65536 + terms[i + 1]!, slot, seq, weightedFrequency(terms, i + 3, i + 3 + terms[i + 2]!));
    }
    this.docs.set(seq, { slot, length, terms });
    this.totalLength += length;
  }

  remove(seq: number): void {
    const doc = this.docs.get(seq);
    if (!doc) return;
    for (let i = 0; i < doc.terms.length; i += 3 + doc.terms[i + 2]!) this.removePosting(doc.terms[i]! * 65536 + doc.terms[i + 1]!, seq);
    this.docs.delete(seq);
    this.freeSlots.push(doc.slot);
    this.totalLength -= doc.length;
  }

  /** The postings of `lexeme` (views: valid until the next change). */
  postings(lexeme: string): Postings {
    const id = this.ids.get(lexeme);
    if (id === undefined) return { slots: NO_SLOTS, frequencies: NO_FREQUENCIES, count: 0 };
    return { slots: this.postingSlots[id]!, frequencies: this.postingFrequencies[id]!, count: this.postingCounts[id]! };
  }

  /** Memory `seq`'s occurrences of `lexeme`, ascending, each `position << 2 | weight` (weightLabel); undefined if none. */
  occurrences(seq: number, lexeme: string): Uint16Array | undefined {
    const id = this.ids.get(lexeme);
    const terms = this.docs.get(seq)?.terms;
    if (id === undefined || !terms) return undefined;
    const hi = Math.floor(id / 65536);
    const lo = id % 65536;
    for (let i = 0; i < terms.length; i += 3 + terms[i + 2]!) {
      if (terms[i] === hi && terms[i + 1] === lo) return terms.subarray(i + 3, i + 3 + terms[i + 2]!);
    }
    return undefined;
  }

  /** Approximate bytes held (typed arrays and per-memory entries), for the benchmarks' memory per memory. */
  approximateBytes(): number {
    let bytes = this.ids.size * 64 + this.seqs.byteLength + this.lengths.byteLength;
    for (let id = 0; id < this.postingSlots.length; id++) bytes += this.postingSlots[id]!.byteLength + this.postingFrequencies[id]!.byteLength;
    for (const doc of this.docs.values()) bytes += doc.terms.byteLength + 120;
    return bytes;
  }

  private takeSlot(seq: number, length: number): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      slot = this.slotsUsed++;
      if (slot === this.seqs.length) {
        this.seqs = grownCopy(this.seqs, Math.ceil(slot * 1.5));
        this.lengths = grownCopy(this.lengths, Math.ceil(slot * 1.5));
      }
    }
    this.seqs[slot] = seq;
    this.lengths[slot] = length;
    return slot;
  }

  private addPosting(id: number, slot: number, seq: number, frequency: number): void {
    let slots = this.postingSlots[id]!;
    let frequencies = this.postingFrequencies[id]!;
    const n = this.postingCounts[id]!;
    if (n === slots.length) {
      const size = Math.max(4, Math.ceil(n * 1.5));
      this.postingSlots[id] = slots = grownCopy(slots, size);
      this.postingFrequencies[id] = frequencies = grownCopy(frequencies, size);
    }
    // Memories mostly arrive in seq order: appended; otherwise inserted in place.
    let at = n;
    if (n > 0 && this.seqs[slots[n - 1]!]! > seq) at = this.lowerBound(slots, n, seq);
    slots.copyWithin(at + 1, at, n);
    frequencies.copyWithin(at + 1, at, n);
    slots[at] = slot;
    frequencies[at] = frequency;
    this.postingCounts[id] = n + 1;
  }

  private removePosting(id: number, seq: number): void {
    const slots = this.postingSlots[id]!;
    const n = this.postingCounts[id]!;
    const at = this.lowerBound(slots, n, seq);
    if (at >= n || this.seqs[slots[at]!] !== seq) return;
    slots.copyWithin(at, at + 1, n);
    this.postingFrequencies[id]!.copyWithin(at, at + 1, n);
    this.postingCounts[id] = n - 1;
  }

  /** The first index in slots[0, n) whose memory's seq is at least `seq`. */
  private lowerBound(slots: Int32Array, n: number, seq: number): number {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[slots[mid]!]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const NO_SLOTS = new Int32Array(0);
const NO_FREQUENCIES = new Float64Array(0);

/** A lexeme's column-weighted frequency from its occurrences terms[from, to), summed in position order. */
function weightedFrequency(terms: Uint16Array, from: number, to: number): number {
  let tf = 0;
  for (let i = from; i < to; i++) tf += WEIGHT_OF_CODE[terms[i]! & 3]!;
  return tf;
}

function grownCopy<T extends Int32Array | Float64Array>(a: T, size: number): T {
  const grown = new (a.constructor as new (n: number) => T)(size);
  grown.set(a);
  return grown;
}

/** tsvector weight labels by their 2-bit code (D, the default, is 0 as in PostgreSQL). */
export const WEIGHT_LABELS = ['D', 'C', 'B', 'A'] as const;
const WEIGHT_CODE: Readonly<Record<string, number>> = { A: 3, B: 2, C: 1, D: 0, a: 3, b: 2, c: 1, d: 0 };
/** The BM25 column weight (WEIGHTS) by weight code. */
const WEIGHT_OF_CODE = Float64Array.from(WEIGHT_LABELS, (label) => WEIGHTS[label] ?? 1);

let scratch: Uint16Array = new Uint16Array(1024);

/**
 * tsvector's text form (`'lexeme':1A,5 'other'`: quotes and backslashes inside a lexeme doubled, weight D unlabelled)
 * as a memory's occurrences, each lexeme given its id by `idOf`.
 */
export function parseTsvector(text: string, idOf: (lexeme: string) => number): Uint16Array {
  let out = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    if (text.charCodeAt(i) !== 39) { // between lexemes: a space
      i++;
      continue;
    }
    i++;
    let lexeme = '';
    let from = i;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 39 && text.charCodeAt(i + 1) === 39) { // '' stands for '
        lexeme += text.slice(from, i + 1);
        i += 2;
        from = i;
      } else if (c === 39) {
        lexeme += text.slice(from, i);
        i++;
        break;
      } else if (c === 92) { // \x stands for x
        lexeme += text.slice(from, i) + text[i + 1]!;
        i += 2;
        from = i;
      } else if (i >= n) {
        throw new SyntaxError(`unterminated lexeme in tsvector text: ${text.slice(0, 80)}`);
      } else {
        i++;
      }
    }
    if (out + 3 >= scratch.length) scratch = grow(scratch);
    const id = idOf(lexeme);
    scratch[out] = Math.floor(id / 65536);
    scratch[out + 1] = id % 65536;
    const countAt = out + 2;
    out += 3;
    let count = 0;
    if (text.charCodeAt(i) === 58) { // ':' then positions, comma-separated, each with an optional weight label
      i++;
      for (;;) {
        let position = 0;
        for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) position = position * 10 + (c - 48);
        const weight = WEIGHT_CODE[text[i] ?? ''];
        if (weight !== undefined) i++;
        if (out >= scratch.length) scratch = grow(scratch);
        scratch[out++] = (position << 2) | (weight ?? 0);
        count++;
        if (text.charCodeAt(i) !== 44) break;
        i++;
      }
    }
    scratch[countAt] = count;
  }
  return scratch.slice(0, out);
}

function grow(a: Uint16Array): Uint16Array {
  const grown = new Uint16Array(a.length * 2);
  grown.set(a);
  return grown;
}
