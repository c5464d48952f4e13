import type { MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { inverseDocumentFrequency, lengthNorm, termScore, TopHits, type RankedKeywordHit } from '../bm25.ts';
import { pgInt, SqlParams, type PgExecutor } from './pg-executor.ts';
import { CatchUpRows, changesAfterSql, filterRowsSql, KIND_CHANGE, loadInPages } from './pg-index-catch-up.ts';
import { KeywordCorpus, WEIGHT_LABELS } from './pg-keyword-corpus.ts';
import { phrasesOf, queryTokensSql, totalAtLeast, WEIGHTS, type Phrase, type QueryTokens } from './pg-keyword-ranking.ts';

/** Memories read per round trip while a workspace loads (their keywords as text: about 1 MB). */
/** A row of the catch-up statement: a query word's token (its word's ord as seq, lexeme, positions). */
const KIND_TOKEN = 4;
/** The keyword index's columns after kind and seq, as NULLs (pg-index-catch-up.ts). */
const NO_KEYWORDS = ', NULL::bigint AS length, NULL::text AS keywords, NULL::int[] AS positions';

/** kind, seq, then: a change's keyword_length and keywords (NULL: gone), or a token's lexeme and positions. */
type Row = { kind: number; seq: number | string | null; length: number | string | null; keywords: string | null; positions: number[] | null };

interface Entry {
  corpus: KeywordCorpus;
  /** The workspace's version in the change log the corpus reflects (migrations 23 and 25); -1 while loading. */
  version: number;
  loading: Promise<void> | null;
}

/**
 * Each node's in-memory keyword index for PostgreSQL, beside its vector index (pg-vector-index.ts) and kept the same
 * way: per workspace every memory's keywords (KeywordCorpus), loaded in pages on first search, then brought up to date
 * before each search from the change log by the search's one round trip, which also tokenizes the query words with the
 * index's configuration and returns the seqs the filter allows or validity excludes. The ranking then reads nothing
 * per candidate from the database, and answers exactly as pg-keyword-ranking.ts's SQL one: the same holders, cap,
 * phrases, weights and BM25 statistics (N and total length counted here, as memory_keyword_stats keeps them).
 */
export class PgKeywordIndex {
  private readonly entries = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly db: PgExecutor) {}

  async rank(scope: Scope, words: readonly string[], filter: MemoryFilter, limit: number, cap: number):
    Promise<{ hits: RankedKeywordHit[]; total: number }> {
    if (words.length === 0) return { hits: [], total: 0 };
    const entry = await this.entryOf(scope);
    const from = entry.version;
    const p = new SqlParams();
    const parts = [changesAfterSql(p, 'keyword_changes_after', 'kind, seq, length, keywords, NULL::int[] AS positions', scope, [], from),
      ...filterRowsSql(p, scope, filter, NO_KEYWORDS),
      `SELECT ${KIND_TOKEN}, t.ord, NULL, t.lexeme, t.positions::int[] FROM (${queryTokensSql(p.add(words))}) t`];
    const caught = new CatchUpRows<Row>(filter);
    const tokensOf: QueryTokens = new Map();
    for (const row of await this.db.query<Row>(parts.join(' UNION ALL '), p.values)) {
      if (row.kind !== KIND_TOKEN) caught.add(row);
      else {
        const tokens = tokensOf.get(pgInt(row.seq)) ?? [];
        for (const position of row.positions!) tokens.push({ lexeme: row.keywords!, position });
        tokensOf.set(pgInt(row.seq), tokens);
      }
    }
    if (caught.needsReload(from)) {
      this.drop(scope, entry);
      return this.rank(scope, words, filter, limit, cap);
    }
    // Another search's catch-up may have brought the corpus further meanwhile: then this one's changes are older.
    if (caught.version > entry.version) {
      for (const row of caught.changes) apply(entry.corpus, row);
      entry.version = caught.version;
    }
    const allowed = caught.allowed && new Set(caught.allowed);
    const { excluded } = caught;
    const wanted = allowed || excluded ? (seq: number) => (!allowed || allowed.has(seq)) && !excluded?.has(seq) : null;
    return rankInCorpus(entry.corpus, phrasesOf(tokensOf).phrases, { wanted, excluded, limit, cap, filter });
  }

  /** Loads every workspace holding memories, one after another, so that first searches find them in memory. */
  async warmUp(): Promise<void> {
    const held = await this.db.query<{ tenant_id: string; mode: string; workspace: string }>(
      'SELECT tenant_id, mode, workspace FROM memory_keyword_stats WHERE documents > 0');
    for (const h of held) {
      if (this.closed) return;
      await this.entryOf({ tenantId: h.tenant_id, mode: h.mode as Scope['mode'], workspace: h.workspace });
    }
  }

  /** Approximate bytes the loaded workspaces hold (benchmarks). */
  approximateBytes(): number {
    let bytes = 0;
    for (const e of this.entries.values()) bytes += e.corpus.approximateBytes();
    return bytes;
  }

  close(): void {
    this.closed = true;
    this.entries.clear();
  }

  private async entryOf(scope: Scope): Promise<Entry> {
    const key = `${scope.tenantId}\u0000${scope.mode}\u0000${scope.workspace}`;
    let entry = this.entries.get(key);
    if (!entry) {
      const created: Entry = { corpus: new KeywordCorpus(), version: -1, loading: null };
      this.entries.set(key, (entry = created));
      created.loading = this.load(created, scope).finally(() => { created.loading = null; });
    }
    if (entry.loading) {
      try {
        await entry.loading;
      } catch (err) {
        // The next search loads afresh.
        this.drop(scope, entry);
        throw err;
      }
    }
    // Dropped meanwhile (a reload): its successor.
    return this.entries.get(key) === entry ? entry : this.entryOf(scope);
  }

  private drop(scope: Scope, entry: Entry): void {
    const key = `${scope.tenantId}\u0000${scope.mode}\u0000${scope.workspace}`;
    if (this.entries.get(key) === entry) this.entries.delete(key);
  }

  /** Every memory of the workspace's keywords, in pages by seq (loadInPages). */
  private async load(entry: Entry, scope: Scope): Promise<void> {
    entry.version = await loadInPages<Row>(this.db, scope, NO_KEYWORDS, (p, after, limit) => `SELECT ${KIND_CHANGE}, m.seq,
        m.keyword_length, m.keywords::text, NULL FROM memories m WHERE m.tenant_id = ${p.add(scope.tenantId)}
        AND m.mode = ${p.add(scope.mode)} AND m.workspace = ${p.add(scope.workspace)} AND m.seq > ${p.add(after)}
      ORDER BY m.seq LIMIT ${limit}`, (row) => apply(entry.corpus, row));
  }
}

function apply(corpus: KeywordCorpus, row: Row): void {
  const seq = pgInt(row.seq);
  if (row.keywords === null) corpus.remove(seq);
  else corpus.set(seq, pgInt(row.length ?? 0), row.keywords);
}

/** One phrase's scored holders: postings [start, end) (the newest `cap`), how many hold it, and how many the search keeps. */
interface PhrasePostings {
  slots: ArrayLike<number>;
  frequencies: ArrayLike<number>;
  start: number;
  end: number;
  holding: number;
  kept: number;
}

/**
 * pg-keyword-ranking.ts's ranking over the corpus: per single-token word its postings (all counted, the `cap` newest
 * scored), per phrase every memory holding all its tokens in one column at their offsets, capped the same way; then
 * BM25 as bm25.ts's rankBm25 computes it, to the bit: each memory's score and idf coverage summed phrase by phrase in
 * query order, in arrays indexed by slot, and the best `limit` kept by TopHits.
 */
export function rankInCorpus(corpus: KeywordCorpus, phrases: readonly Phrase[], o: {
  wanted: ((seq: number) => boolean) | null; excluded: ReadonlySet<number> | null; limit: number; cap: number; filter: MemoryFilter;
}): { hits: RankedKeywordHit[]; total: number } {
  if (phrases.length === 0) return { hits: [], total: 0 };
  const perPhrase = phrases.map((phrase): PhrasePostings => {
    if (phrase.length === 1) {
      const lexeme = phrase[0]!.lexeme;
      const { slots, frequencies, count } = corpus.postings(lexeme);
      // Validity leaves memories out of the candidates, never out of the counts: `kept` counts holders valid then.
      let invalid = 0;
      for (const seq of o.excluded ?? []) if (corpus.occurrences(seq, lexeme)) invalid++;
      return { slots, frequencies, start: Math.max(0, count - o.cap), end: count, holding: count, kept: count - invalid };
    }
    const slots: number[] = [];
    const frequencies: number[] = [];
    let kept = 0;
    for (const slot of slotsHoldingAll(corpus, phrase)) {
      const seq = corpus.seqOfSlot[slot]!;
      const tf = phraseFrequency(corpus, seq, phrase);
      if (tf <= 0) continue;
      slots.push(slot);
      frequencies.push(tf);
      if (!o.wanted || o.wanted(seq)) kept++;
    }
    // Ascending by seq: the cap keeps the last `cap` (the newest), as capFrequencies does.
    return { slots, frequencies, start: Math.max(0, slots.length - o.cap), end: slots.length, holding: slots.length, kept };
  });

  const { documents, totalLength } = corpus;
  const averageLength = documents > 0 ? totalLength / documents : 0;
  const idf = perPhrase.map((p) => inverseDocumentFrequency(documents, p.holding));
  const idfMass = idf.reduce((a, b) => a + b, 0);
  const s = scratchFor(corpus.slotCount);
  const lengths = corpus.lengthOfSlot;
  const generation = s.nextGeneration();
  let touched = 0;
  for (let i = 0; i < perPhrase.length; i++) {
    const { slots, frequencies, start, end } = perPhrase[i]!;
    const phraseIdf = idf[i]!;
    for (let k = start; k < end; k++) {
      const tf = frequencies[k]!;
      if (!(tf > 0)) continue;
      const slot = slots[k]!;
      if (s.seen[slot] !== generation) {
        s.seen[slot] = generation;
        s.scores[slot] = 0;
        s.held[slot] = 0;
        s.norms[slot] = lengthNorm(lengths[slot]!, averageLength);
        s.touched[touched++] = slot;
      }
      // The same additions, in the same order, as rankBm25's scoreHit: the same floating-point sums.
      s.scores[slot] = s.scores[slot]! + termScore(phraseIdf, tf, s.norms[slot]!);
      s.held[slot] = s.held[slot]! + phraseIdf;
    }
  }
  const best = new TopHits(o.limit);
  const seqs = corpus.seqOfSlot;
  let total = 0;
  for (let t = 0; t < touched; t++) {
    const slot = s.touched[t]!;
    const seq = seqs[slot]!;
    if (o.wanted && !o.wanted(seq)) continue;
    total++;
    const score = s.scores[slot]!;
    if (best.accepts(score, seq)) best.add({ seq, score, coverage: idfMass > 0 ? Math.min(1, s.held[slot]! / idfMass) : 0 });
  }
  return { hits: best.sorted(), total: Math.max(total, totalAtLeast(perPhrase, o.cap, o.filter)) };
}

/** Per-slot sums of one ranking, reused by the next (rankings run one at a time on the event loop). */
class RankingScratch {
  scores = new Float64Array(0);
  held = new Float64Array(0);
  norms = new Float64Array(0);
  touched = new Int32Array(0);
  /** The ranking that last touched each slot: a slot of another's holds stale sums. */
  seen = new Uint32Array(0);
  private generation = 0;

  grow(slots: number): void {
    if (slots <= this.scores.length) return;
    const size = Math.max(slots, Math.ceil(this.scores.length * 1.5));
    this.scores = new Float64Array(size);
    this.held = new Float64Array(size);
    this.norms = new Float64Array(size);
    this.touched = new Int32Array(size);
    this.seen = new Uint32Array(size);
    this.generation = 0;
  }

  nextGeneration(): number {
    if (++this.generation === 0xffffffff) {
      this.seen.fill(0);
      this.generation = 1;
    }
    return this.generation;
  }
}

const scratch = new RankingScratch();

function scratchFor(slots: number): RankingScratch {
  scratch.grow(slots);
  return scratch;
}

/** The slots of the memories holding every token of the phrase: the rarest token's holders, each checked for the others. */
function slotsHoldingAll(corpus: KeywordCorpus, phrase: Phrase): number[] {
  const lexemes = [...new Set(phrase.map((t) => t.lexeme))];
  const lists = lexemes.map((l) => ({ lexeme: l, postings: corpus.postings(l) })).sort((a, b) => a.postings.count - b.postings.count);
  const [rarest, ...others] = lists;
  const out: number[] = [];
  for (let k = 0; k < rarest!.postings.count; k++) {
    const slot = rarest!.postings.slots[k]!;
    const seq = corpus.seqOfSlot[slot]!;
    if (others.every((x) => corpus.occurrences(seq, x.lexeme) !== undefined)) out.push(slot);
  }
  return out;
}

/** The phrase's weighted frequency in memory `seq`: its first token's occurrences followed by the others, same weight. */
function phraseFrequency(corpus: KeywordCorpus, seq: number, phrase: Phrase): number {
  const first = corpus.occurrences(seq, phrase[0]!.lexeme);
  if (!first) return 0;
  const others = phrase.map((t) => ({ offset: t.offset, at: corpus.occurrences(seq, t.lexeme) }));
  let tf = 0;
  for (const packed of first) {
    const weight = packed & 3;
    const position = packed >> 2;
    // Packed ascending by position: the token at position + offset, with the same weight, is one exact value.
    if (others.every((t) => t.at !== undefined && includes(t.at, ((position + t.offset) << 2) | weight))) {
      tf += WEIGHTS[WEIGHT_LABELS[weight]!] ?? 1;
    }
  }
  return tf;
}

function includes(sorted: Uint16Array, value: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === value;
}
