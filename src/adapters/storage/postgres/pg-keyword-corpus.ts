/**
 * One workspace's `memories.keywords` held in memory (pg-keyword-index.ts): per memory its keyword_length and its
 * lexemes' positions with weight labels, and per lexeme the seqs holding it, ascending. Compact: lexemes are interned
 * to ids; a memory's occurrences are one Uint16Array of [id high, id low, count, position << 2 | weight, …] per lexeme
 * (tsvector positions fit 14 bits, its four weights 2), and a lexeme's holders one Float64Array grown in place.
 */
export class KeywordCorpus {
  private readonly ids = new Map<string, number>();
  private readonly holdersOf: Float64Array[] = [];
  private readonly holderCounts: number[] = [];
  private readonly docs = new Map<number, { length: number; terms: Uint16Array }>();
  /** The sum of the memories' keyword_length (BM25's average length is this over `documents`). */
  totalLength = 0;

  get documents(): number {
    return this.docs.size;
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
        id = this.holdersOf.length;
        this.ids.set(lexeme, id);
        this.holdersOf.push(EMPTY);
        this.holderCounts.push(0);
      }
      return id;
    });
    for (let i = 0; i < terms.length; i += 3 + terms[i + 2]!) this.addHolder(terms[i]! * 65536 + terms[i + 1]!, seq);
    this.docs.set(seq, { length, terms });
    this.totalLength += length;
  }

  remove(seq: number): void {
    const doc = this.docs.get(seq);
    if (!doc) return;
    for (let i = 0; i < doc.terms.length; i += 3 + doc.terms[i + 2]!) this.removeHolder(doc.terms[i]! * 65536 + doc.terms[i + 1]!, seq);
    this.docs.delete(seq);
    this.totalLength -= doc.length;
  }

  /** The seqs of the memories holding `lexeme`, ascending (a view: valid until the next change). */
  holders(lexeme: string): Float64Array {
    const id = this.ids.get(lexeme);
    return id === undefined ? EMPTY : this.holdersOf[id]!.subarray(0, this.holderCounts[id]!);
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
    let bytes = this.holdersOf.reduce((sum, a) => sum + a.byteLength, 0) + this.ids.size * 64;
    for (const doc of this.docs.values()) bytes += doc.terms.byteLength + 120;
    return bytes;
  }

  private addHolder(id: number, seq: number): void {
    let seqs = this.holdersOf[id]!;
    const n = this.holderCounts[id]!;
    if (n === seqs.length) {
      const grown = new Float64Array(Math.max(4, Math.ceil(n * 1.5)));
      grown.set(seqs);
      this.holdersOf[id] = seqs = grown;
    }
    // Memories mostly arrive in seq order: appended; otherwise inserted in place.
    let at = n;
    if (n > 0 && seqs[n - 1]! > seq) at = lowerBound(seqs, n, seq);
    seqs.copyWithin(at + 1, at, n);
    seqs[at] = seq;
    this.holderCounts[id] = n + 1;
  }

  private removeHolder(id: number, seq: number): void {
    const seqs = this.holdersOf[id]!;
    const n = this.holderCounts[id]!;
    const at = lowerBound(seqs, n, seq);
    if (at >= n || seqs[at] !== seq) return;
    seqs.copyWithin(at, at + 1, n);
    this.holderCounts[id] = n - 1;
  }
}

const EMPTY = new Float64Array(0);

/** tsvector weight labels by their 2-bit code (D, the default, is 0 as in PostgreSQL). */
export const WEIGHT_LABELS = ['D', 'C', 'B', 'A'] as const;
const WEIGHT_CODE: Readonly<Record<string, number>> = { A: 3, B: 2, C: 1, D: 0, a: 3, b: 2, c: 1, d: 0 };

/** The first index in seqs[0, n) whose value is at least `seq`. */
function lowerBound(seqs: Float64Array, n: number, seq: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (seqs[mid]! < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

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
