import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { SqliteDocumentTokens } from './sqlite-document-tokens.ts';
import { BM25_COLUMN_WEIGHTS } from '../bm25.ts';
import type { PostingRun } from '../bm25-postings.ts';

/**
 * The most postings (memory, frequency, length) held over every scope and token: 16 bytes each once read (64 MB in
 * all).
 * Least recently used lists go first, which re-reads every list on every search once the lists a workload cycles
 * through outgrow the bound, so the bound sits above what the search bench's 200 questions over 100k memories hold
 * (about 2.2M postings).
 */
export const KEYWORD_POSTINGS_MAX = 4_000_000;
/** What a list counts for beyond its postings (its objects), so that many empty lists are bounded too. */
const LIST_OVERHEAD = 32;
/**
 * Memories written in a scope since its lists were last used beyond which the lists are dropped rather than brought
 * up to date: re-tokenizing that many memories costs about what reading a common token's occurrences again does.
 */
const MAX_CHANGED = 2_000;

/**
 * One token's postings in one scope: the memories holding it, seq ascending, each with its weighted frequency and the
 * memory's length (so that ranking needs no lookup of it per memory; a write to the memory updates both).
 */
export class Posting {
  private seqs = new Float64Array(16);
  private frequencies = new Float32Array(16);
  private lengths = new Uint32Array(16);
  size = 0;
  /** When a search last used it (for least-recently-used eviction). */
  used = 0;

  seqAt(i: number): number {
    return this.seqs[i]!;
  }

  frequencyAt(i: number): number {
    return this.frequencies[i]!;
  }

  /** The newest `cap` memories (highest seqs) as a run for ranking; valid until the next write. */
  newest(cap: number): PostingRun {
    return { seqs: this.seqs, frequencies: this.frequencies, lengths: this.lengths, start: Math.max(0, this.size - cap), end: this.size };
  }

  /**
   * How many of `seqs` (ascending) the list holds: a binary search each, from where the previous one ended (for a few
   * seqs, as MemoryFilter.validAt leaves out).
   */
  countOf(seqs: ArrayLike<number>): number {
    let n = 0;
    let lo = 0;
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      let hi = this.size;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.seqs[mid]! < seq) lo = mid + 1;
        else hi = mid;
      }
      if (lo === this.size) break;
      if (this.seqs[lo] === seq) n++;
    }
    return n;
  }

  /** Appends a memory above every seq held (the order of a read from the index). */
  push(seq: number, frequency: number, length: number): void {
    this.reserve(this.size + 1);
    this.seqs[this.size] = seq;
    this.frequencies[this.size] = frequency;
    this.lengths[this.size++] = length;
  }

  /** A memory's frequency and length now: set, replaced, or (`held` undefined: it no longer holds the token) removed. */
  set(seq: number, held: { frequency: number; length: number } | undefined): void {
    const i = this.indexOf(seq);
    const present = i < this.size && this.seqs[i] === seq;
    if (held === undefined) {
      if (!present) return;
      this.seqs.copyWithin(i, i + 1, this.size);
      this.frequencies.copyWithin(i, i + 1, this.size);
      this.lengths.copyWithin(i, i + 1, this.size);
      this.size--;
      return;
    }
    if (!present) {
      this.reserve(this.size + 1);
      this.seqs.copyWithin(i + 1, i, this.size);
      this.frequencies.copyWithin(i + 1, i, this.size);
      this.lengths.copyWithin(i + 1, i, this.size);
      this.seqs[i] = seq;
      this.size++;
    }
    this.frequencies[i] = held.frequency;
    this.lengths[i] = held.length;
  }

  /** The first index whose seq is >= `seq`. */
  private indexOf(seq: number): number {
    if (this.size === 0 || this.seqs[this.size - 1]! < seq) return this.size;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.seqs[mid]! < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Gives back the room beyond `size` (a list read from the index is grown by doubling, then kept at its size). */
  trim(): void {
    if (this.seqs.length === this.size) return;
    this.seqs = this.seqs.slice(0, this.size);
    this.frequencies = this.frequencies.slice(0, this.size);
    this.lengths = this.lengths.slice(0, this.size);
  }

  private reserve(n: number): void {
    if (n <= this.seqs.length) return;
    const capacity = Math.max(n, this.seqs.length * 2);
    const seqs = new Float64Array(capacity);
    seqs.set(this.seqs.subarray(0, this.size));
    const frequencies = new Float32Array(capacity);
    frequencies.set(this.frequencies.subarray(0, this.size));
    const lengths = new Uint32Array(capacity);
    lengths.set(this.lengths.subarray(0, this.size));
    this.seqs = seqs;
    this.frequencies = frequencies;
    this.lengths = lengths;
  }
}

/**
 * A posting list's newest `cap` memories as a frequency lookup for BM25: `get` must be asked in ascending seq order
 * (it walks forward), which is how the ranking visits its candidates.
 */
export class PostingWindow {
  readonly start: number;
  private at: number;

  constructor(readonly posting: Posting, cap: number) {
    this.start = posting.newest(cap).start;
    this.at = this.start;
  }

  get size(): number {
    return this.posting.size - this.start;
  }

  get(seq: number): number | undefined {
    const p = this.posting;
    while (this.at < p.size && p.seqAt(this.at) < seq) this.at++;
    return this.at < p.size && p.seqAt(this.at) === seq ? p.frequencyAt(this.at) : undefined;
  }

  /** Appends the window's seqs (ascending) to `out`. */
  collect(out: number[]): void {
    for (let i = this.start; i < this.posting.size; i++) out.push(this.posting.seqAt(i));
  }
}

interface ScopePostings {
  tokens: Map<string, Posting>;
  /**
   * The scope's lengths the lists were read and kept with (SqliteKeywordLengths: one map per load, updated in place by
   * this process's writes). The lengths reload after another connection's write, and the lists go with them: one
   * check of SQLite's data_version (the lengths') decides for both, so lists and lengths always come from one state.
   */
  members: ReadonlyMap<number, number>;
  /** Memories of the scope this process wrote (inserted, updated, deleted) since its lists were last brought up to date. */
  changed: Set<number>;
}

/**
 * Per-scope posting lists of the keyword index, so that a search reads a common token's postings in one scope
 * without reading all of its occurrences. FTS5 cannot give one scope's share of a token directly: fts5vocab filters
 * on the token only, and a word held by a third of 100k memories is tens of thousands of occurrences (more time than
 * the whole semantic scan), which the scope's document frequency (BM25's idf) needs in full. So a token's list is read
 * from the index once, on the first search of the scope that asks for it, and then kept in step:
 * - this process's writes mark the memory changed (`changed`), and the scope's next search re-reads the tokens of
 *   those memories alone (SqliteDocumentTokens: the index's own tokenizer) and applies them to every list it holds;
 * - another connection's write (SQLite's data_version) reloads the scope's lengths, and a scope's lists are dropped
 *   when the lengths they are asked with are no longer those they were read with.
 * Lists are bounded in total (KEYWORD_POSTINGS_MAX), the least recently used dropped first.
 */
export class SqliteKeywordPostings {
  private readonly scopes = new Map<string, ScopePostings>();
  private readonly documents: SqliteDocumentTokens;
  private readonly occurrencesOf;
  private held = 0;
  private clock = 0;

  constructor(db: SqliteDb, private readonly max = KEYWORD_POSTINGS_MAX) {
    this.documents = new SqliteDocumentTokens(db);
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances USING fts5vocab (main, memories_fts, instance)');
    const columns = Object.keys(BM25_COLUMN_WEIGHTS);
    const column = `CASE col ${columns.map((name, i) => `WHEN '${name}' THEN ${i}`).join(' ')} END`;
    // One JSON array per token rather than a row per occurrence: a common word occurs tens of thousands of times.
    this.occurrencesOf = db.prepare<[string], string>(
      `SELECT json_group_array(doc * ${columns.length} + ${column}) FROM temp.memories_fts_instances WHERE term = ?`).pluck();
  }

  /**
   * Each token's postings among `members` (the scope's memories: seq -> length, as SqliteKeywordLengths.get gives
   * them for this search), current with every committed write. Valid until the next call (a later call may evict
   * them).
   */
  lists(scope: Scope, tokens: readonly string[], members: ReadonlyMap<number, number>): Posting[] {
    const key = scopeKey(scope);
    let entry = this.scopes.get(key);
    if (entry && entry.members !== members) {
      this.drop(key);
      entry = undefined;
    }
    if (!entry) this.scopes.set(key, (entry = { tokens: new Map(), changed: new Set(), members }));
    this.catchUp(scope, entry, members);
    const stamp = ++this.clock;
    const lists = tokens.map((token) => {
      let posting = entry.tokens.get(token);
      if (!posting) {
        posting = this.read(token, members);
        entry.tokens.set(token, posting);
        this.held += posting.size + LIST_OVERHEAD;
      }
      posting.used = stamp;
      return posting;
    });
    if (this.held > this.max) this.evict(stamp);
    return lists;
  }

  /** Called after this process committed an insert, update or deletion of the memory `seq` of `scope`. */
  changed(scope: Scope, seq: number): void {
    const entry = this.scopes.get(scopeKey(scope));
    if (!entry || entry.tokens.size === 0) return;
    entry.changed.add(seq);
    if (entry.changed.size > MAX_CHANGED) this.drop(scopeKey(scope));
  }

  /**
   * Applies the memories written since the scope's lists were last used: their tokens and lengths (`members`) now, in
   * every list.
   */
  private catchUp(scope: Scope, entry: ScopePostings, members: ReadonlyMap<number, number>): void {
    if (entry.changed.size === 0) return;
    const seqs = [...entry.changed].sort((a, b) => a - b);
    entry.changed.clear();
    const now = this.documents.of(scope, seqs);
    for (const [token, posting] of entry.tokens) {
      const before = posting.size;
      for (const seq of seqs) {
        const frequency = now.get(seq)?.get(token);
        const length = members.get(seq);
        posting.set(seq, frequency !== undefined && length !== undefined ? { frequency, length } : undefined);
      }
      this.held += posting.size - before;
    }
  }

  /** Every occurrence of the token in the index, kept for the scope's memories: seq -> Σ column weights. */
  private read(token: string, members: ReadonlyMap<number, number>): Posting {
    const weights = Object.values(BM25_COLUMN_WEIGHTS);
    const n = weights.length;
    const codes = JSON.parse(this.occurrencesOf.get(token)!) as number[];
    const posting = new Posting();
    // Occurrences come ordered by memory seq, so each memory's run is contiguous and the list comes out sorted.
    let doc = -1;
    let frequency = 0;
    let length: number | undefined;
    for (const code of codes) {
      const d = Math.floor(code / n);
      if (d !== doc) {
        if (length !== undefined) posting.push(doc, frequency, length);
        doc = d;
        frequency = 0;
        length = members.get(d);
      }
      if (length !== undefined) frequency += weights[code % n]!;
    }
    if (length !== undefined) posting.push(doc, frequency, length);
    posting.trim();
    return posting;
  }

  /** Drops the least recently used lists until the total is back under the bound (never those used at `now`). */
  private evict(now: number): void {
    const all: { key: string; token: string; posting: Posting }[] = [];
    for (const [key, entry] of this.scopes) for (const [t, posting] of entry.tokens) all.push({ key, token: t, posting });
    all.sort((a, b) => a.posting.used - b.posting.used);
    for (const { key, token: t, posting } of all) {
      if (this.held <= this.max * 0.75) break;
      if (posting.used === now) continue;
      this.scopes.get(key)!.tokens.delete(t);
      this.held -= posting.size + LIST_OVERHEAD;
    }
  }

  private drop(key: string): void {
    const entry = this.scopes.get(key);
    if (!entry) return;
    for (const posting of entry.tokens.values()) this.held -= posting.size + LIST_OVERHEAD;
    this.scopes.delete(key);
  }
}

const scopeKey = (s: Scope): string => `${s.tenantId}\u0000${s.mode}\u0000${s.workspace}`;
