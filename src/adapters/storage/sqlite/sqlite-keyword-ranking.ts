import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import type { ScopeLengths, SqliteKeywordLengths } from './sqlite-keyword-lengths.ts';
import { SqliteQueryTokenizer } from './sqlite-query-tokenizer.ts';
import { PostingWindow, SqliteKeywordPostings } from './sqlite-keyword-postings.ts';
import { rankPostings, type PostingRun } from '../bm25-postings.ts';
import { BM25_COLUMN_WEIGHTS, capFrequencies, rankBm25, type FrequencyLookup, type RankedKeywordHit } from '../bm25.ts';
import { createStatementCache } from './sqlite-statement-cache.ts';

/** BM25 column weights, in the index's column order. */
const COLUMN_WEIGHTS: readonly (readonly [string, number])[] = Object.entries(BM25_COLUMN_WEIGHTS);

/** Restricts candidates further; `sql` is ` AND …` over the memories alias `m`. */
export interface CandidateFilter {
  sql: string;
  params: unknown[];
}

/**
 * Keyword ranking whose corpus statistics come from the caller's scope alone, so that no other tenant, mode or
 * workspace can move a score: FTS5's bm25() formula (same k1, b, idf and column weights), but with N, the average
 * length and each term's document frequency counted over the scope's memories instead of the whole index.
 * A word's memories and frequencies come from {@link SqliteKeywordPostings} (the scope's posting list of the token,
 * read from the index once and kept in step), lengths from {@link SqliteKeywordLengths}; a word the tokenizer splits
 * (a phrase) is matched on the index's positions (fts5vocab `instance`) on every search.
 */
export class SqliteKeywordRanking {
  private readonly tokenizer: SqliteQueryTokenizer;
  private readonly postings: SqliteKeywordPostings;
  private readonly positionsOf;
  /** The filter's candidate query, one text per filter shape: prepared once each. */
  private readonly prepared;

  constructor(db: SqliteDb, private readonly lengths: SqliteKeywordLengths) {
    this.tokenizer = new SqliteQueryTokenizer(db);
    this.prepared = createStatementCache(db);
    this.postings = new SqliteKeywordPostings(db);
    db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_instances USING fts5vocab (main, memories_fts, instance)');
    const column = `CASE col ${COLUMN_WEIGHTS.map(([name], i) => `WHEN '${name}' THEN ${i}`).join(' ')} END`;
    this.positionsOf = db.prepare<[string], string>(
      `SELECT json_group_array(json_array(doc, ${column}, offset)) FROM temp.memories_fts_instances WHERE term = ?`).pluck();
  }

  /** Called after this process committed an insert or update of the memory `seq`: its statistics follow. */
  written(scope: Scope, seq: number): void {
    this.lengths.refresh(scope, seq);
    this.postings.changed(scope, seq);
  }

  /** Called after this process committed the deletion of the memory `seq`. */
  removed(scope: Scope, seq: number): void {
    this.lengths.remove(scope, seq);
    this.postings.changed(scope, seq);
  }

  /**
   * The `limit` best memories of the scope matching any of the words (best first), and how many match in all. Per
   * word, only its `cap` newest memories of the scope are scored (its document frequency is still counted exactly);
   * when a word was capped and nothing filters, `total` is at least that word's document count. `excluded`: memories
   * left out as a filter leaves them out, after the cap (the corpus statistics keep them): those not valid at the
   * query's MemoryFilter.validAt, usually a few seqs, so the lists are read as without it; when a word was capped,
   * `total` is then at least its document count less its excluded memories.
   */
  rank(scope: Scope, words: readonly string[], filter: CandidateFilter | null, limit: number, cap: number,
    excluded: ReadonlySet<number> | null = null): { hits: RankedKeywordHit[]; total: number } {
    const phrases = this.tokenizer.phrases(words).filter((tokens) => tokens.length > 0);
    if (phrases.length === 0) return { hits: [], total: 0 };
    const scopeLengths = this.lengths.get(scope);
    // A single token: the newest `cap` of its posting list (read once per scope, then kept in step); its document
    // frequency is the whole list's length. A phrase: matched on the index's positions, then capped alike.
    const singles = phrases.filter((tokens) => tokens.length === 1).map((tokens) => tokens[0]!);
    const lists = this.postings.lists(scope, singles, scopeLengths.bySeq);
    const documents = scopeLengths.bySeq.size;
    const bm25 = { lengthOf: (seq: number) => scopeLengths.bySeq.get(seq)!, documents, averageLength: scopeLengths.totalTokens / documents, limit };
    if (!filter && singles.length === phrases.length) {
      // The common case, words without a filter: ranked from the lists themselves, word by word (bm25-postings.ts).
      // One literal with its fields always in this order: spread from `bm25`, the input reached rankPostings with
      // varying hidden classes and V8 kept dropping its optimised code under load (--trace-deopt: "wrong map").
      if (!excluded) {
        return rankPostings({
          runs: lists.map((posting) => posting.newest(cap)), holding: lists.map((posting) => posting.size),
          totalAtLeast: Math.max(...lists.map((posting) => posting.size)), documents, averageLength: bm25.averageLength, limit,
        });
      }
      // Excluded memories (a few) are ranked with the others, `limit` grown by those of them the runs hold, and
      // dropped from the answer: the best `limit` of the rest, and their exact count. Cheaper than copying the runs
      // without them (a Set probe per posting).
      const runs = lists.map((posting) => posting.newest(cap));
      const excludedSorted = Float64Array.from(excluded).sort();
      const held = heldByAny(runs, excludedSorted);
      const ranked = rankPostings({
        runs, holding: lists.map((posting) => posting.size), totalAtLeast: 0, documents, averageLength: bm25.averageLength,
        limit: limit + held,
      });
      // A capped word's valid memories bound the total from below (an uncapped one's are all counted already).
      let total = ranked.total - held;
      for (const posting of lists) if (posting.size > cap) total = Math.max(total, posting.size - posting.countOf(excludedSorted));
      return { hits: held === 0 ? ranked.hits : ranked.hits.filter((h) => !excluded.has(h.seq)).slice(0, limit), total };
    }
    const excludedSorted = excluded ? Float64Array.from(excluded).sort() : null;
    const frequencies: FrequencyLookup[] = [];
    const holding: number[] = [];
    // Per phrase, how many memories hold it less those `excluded` leaves out (a lower bound of the matches when capped).
    const holdingKept: number[] = [];
    // Per phrase, the memories holding it, ascending.
    const runs: number[][] = [];
    for (const tokens of phrases) {
      const run: number[] = [];
      if (tokens.length === 1) {
        const posting = lists.shift()!;
        const window = new PostingWindow(posting, cap);
        window.collect(run);
        frequencies.push(window);
        holding.push(posting.size);
        holdingKept.push(posting.size - (excludedSorted ? posting.countOf(excludedSorted) : 0));
      } else {
        const phrase = this.phraseFrequencies(tokens, scopeLengths, cap, excluded);
        for (const seq of phrase.frequencies.keys()) run.push(seq);
        run.sort((a, b) => a - b);
        frequencies.push(phrase.frequencies);
        holding.push(phrase.holding);
        holdingKept.push(phrase.holding - phrase.excludedHeld);
      }
      runs.push(run);
    }
    // Every memory holding a phrase, once, ascending (the order the windows are read in).
    let candidates = mergeAscending(runs);
    if (excluded) candidates = candidates.filter((seq) => !excluded.has(seq));
    if (filter && candidates.length > 0) {
      const kept = new Set(this.prepared<unknown[], number>(
        `SELECT m.seq FROM memories m WHERE m.seq IN (SELECT value FROM json_each(?))${filter.sql}`,
      ).pluck().all(JSON.stringify(candidates), ...filter.params));
      candidates = candidates.filter((seq) => kept.has(seq));
    }

    return rankBm25({ ...bm25, frequencies, holding, candidates, totalAtLeast: filter ? 0 : Math.max(...holdingKept) });
  }

  /**
   * Memory seq -> Σ over the phrase's occurrences of its column's weight, for the `cap` newest memories of the scope
   * holding the phrase; `holding` counts all of them, `excludedHeld` those of them in `excluded`.
   */
  private phraseFrequencies(tokens: readonly string[], lengths: ScopeLengths, cap: number, excluded: ReadonlySet<number> | null):
    { frequencies: Map<number, number>; holding: number; excludedHeld: number } {
    const out = new Map<number, number>();
    // A phrase occurs where its first token does and each next token follows right after, in the same column.
    const starts = tokens.map((token, i) => new Set(this.positions(token).map(([doc, column, offset]) =>
      `${doc},${column},${offset - i}`)));
    for (const start of starts[0]!) {
      if (starts.every((s) => s.has(start))) {
        const [doc, column] = start.split(',').map(Number);
        if (lengths.bySeq.has(doc!)) out.set(doc!, (out.get(doc!) ?? 0) + COLUMN_WEIGHTS[column!]![1]);
      }
    }
    let excludedHeld = 0;
    if (excluded) for (const seq of excluded) if (out.has(seq)) excludedHeld++;
    return { ...capFrequencies(out, cap), excludedHeld };
  }

  private positions(token: string): [number, number, number][] {
    return JSON.parse(this.positionsOf.get(token)!) as [number, number, number][];
  }
}

/**
 * How many of `seqs` (ascending) at least one of the runs holds: per run, a binary search per seq within the run's
 * range, each starting where the previous one ended.
 */
function heldByAny(runs: readonly PostingRun[], seqs: Float64Array): number {
  const found = new Uint8Array(seqs.length);
  for (const run of runs) {
    if (run.end <= run.start) continue;
    const { seqs: runSeqs, end } = run;
    const last = runSeqs[end - 1]!;
    let lo = run.start;
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      if (seq > last) break;
      if (found[i] === 1 || seq < runSeqs[lo]!) continue;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (runSeqs[mid]! < seq) lo = mid + 1;
        else hi = mid;
      }
      if (lo === end) break;
      if (runSeqs[lo] === seq) found[i] = 1;
    }
  }
  let held = 0;
  for (let i = 0; i < found.length; i++) held += found[i]!;
  return held;
}

/**
 * The union of ascending runs, ascending, each number once: merged by their heads (a query has a few words; sorting
 * the concatenation cost more than the scoring it feeds).
 */
export function mergeAscending(runs: readonly (readonly number[])[]): number[] {
  if (runs.length === 1) return [...runs[0]!];
  const at = new Array<number>(runs.length).fill(0);
  const out: number[] = [];
  for (;;) {
    let least = Infinity;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r]!;
      if (at[r]! < run.length && run[at[r]!]! < least) least = run[at[r]!]!;
    }
    if (least === Infinity) return out;
    out.push(least);
    for (let r = 0; r < runs.length; r++) if (runs[r]![at[r]!] === least) at[r] = at[r]! + 1;
  }
}
