import { METADATA_KEY_PATTERN, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';
import type { SqliteFilterCache } from './sqlite-filter-cache.ts';
import { KeyBitmap } from './vector-scan/allowed-keys.ts';

/** Workspace rows from which broad conditions are prefetched: below, listing any filter costs a few milliseconds. */
export const DEFAULT_PREFETCH_FROM_ROWS = 20_000;
/** A condition keeping at least this share of a workspace is broad. */
const BROAD_SHARE = 0.1;
/** Broad conditions prefetched per workspace at most, the commonest first (each holds a bitmap and a mask). */
const MAX_PREFETCHED = 64;

/** Lists the seqs a filter keeps from SQLite (allowedSeqs in sqlite-memory.repository.ts). */
export type ListSeqs = (scope: Scope, filter: MemoryFilter, scopeRows: number) => KeyBitmap;

/** One condition as a filter of its own, written one way (the filter cache's key): a tag, a type, a metadata value. */
const tagCondition = (tag: string): MemoryFilter => ({ tagsAny: [tag] });
const typeCondition = (type: string): MemoryFilter => ({ types: [type] });
/** Booleans as SQLite's JSON functions give them (1, 0), so that `true` and `1`, which match alike, are one condition. */
const metadataCondition = (key: string, value: string | number | boolean): MemoryFilter =>
  ({ metadata: { [key]: typeof value === 'boolean' ? Number(value) : value } });

/**
 * `filter` as clauses of single conditions: it keeps a memory when each clause has a condition that keeps it (tagsAny,
 * types and a metadata key's values are one clause each, each of tagsAll's tags another). Null when it has a topic or
 * dates, which are read from the workspace's own indexes as before.
 */
export function clausesOf(filter: MemoryFilter): MemoryFilter[][] | null {
  if (filter.topicId !== undefined || filter.createdFrom || filter.createdTo) return null;
  const clauses: MemoryFilter[][] = [];
  if (filter.types?.length) clauses.push(filter.types.map(typeCondition));
  if (filter.tagsAny?.length) clauses.push(filter.tagsAny.map(tagCondition));
  for (const tag of new Set(filter.tagsAll ?? [])) clauses.push([tagCondition(tag)]);
  for (const [key, wanted] of Object.entries(filter.metadata ?? {})) {
    clauses.push((Array.isArray(wanted) ? wanted : [wanted]).map((value) => metadataCondition(key, value)));
  }
  return clauses.length > 0 ? clauses : null;
}

/**
 * The broad conditions of big workspaces (a tag, a type or a metadata value that keeps at least a tenth of it),
 * listed ahead of any search into the filter cache, where the change log keeps them current like any cached filter:
 * the first search of a filter made of tags, types and metadata values then combines their bitmaps (SqliteFilterCache
 * entries, brought forward) instead of reading its many seqs from SQLite, which cost more than the unfiltered search
 * for a broad filter in every form tried (a row each, one aggregated string, a SQL function setting bits: about 100 ns
 * a seq at best, BENCHMARKS.md). Narrow conditions are not prefetched: a filter with one is read from SQLite, cheaply.
 * Read at start (warmUp) and after the first filtered search of a workspace not read yet, or whose prefetched
 * condition was dropped (too far behind, or pushed out of the cache's budget); each count and each condition in a
 * macrotask of its own. Tags and metadata values are counted over the whole store (a count per workspace would join
 * every row): in a store where another workspace is far bigger, its broad tags may take a smaller one's places.
 */
export class SqliteBroadConditions {
  /** Per workspace read: the cache keys of its broad conditions. */
  private readonly prefetched = new Map<string, Set<string>>();
  private readonly running = new Set<string>();
  private readonly broadTags;
  private readonly broadMetadata;
  private readonly broadTypes;
  private readonly bigWorkspaces;

  constructor(private readonly db: SqliteDb, private readonly cache: SqliteFilterCache, private readonly list: ListSeqs,
    private readonly indexKey: (key: string) => string, private readonly fromRows = DEFAULT_PREFETCH_FROM_ROWS) {
    // Counted over every workspace from the indexes' own order (no sort, no join): a tag broad elsewhere is listed
    // too, within MAX_PREFETCHED; types from the workspace's index.
    this.broadTags = db.prepare<[number], { tag: string; n: number }>(
      'SELECT tag, COUNT(*) AS n FROM memory_tags GROUP BY tag HAVING n >= ?');
    this.broadMetadata = db.prepare<[number], { key: string; value: unknown; n: number }>(
      'SELECT key, value, COUNT(*) AS n FROM memory_metadata GROUP BY key, value HAVING n >= ?');
    this.broadTypes = db.prepare<[string, string, string, number], { type: string; n: number }>(
      `SELECT memory_type AS type, COUNT(*) AS n FROM memories WHERE tenant_id = ? AND mode = ? AND workspace = ?
       GROUP BY memory_type HAVING n >= ?`);
    this.bigWorkspaces = db.prepare<[number], { tenant_id: string; mode: string; workspace: string; n: number }>(
      'SELECT tenant_id, mode, workspace, COUNT(*) AS n FROM memories GROUP BY tenant_id, mode, workspace HAVING n >= ?');
  }

  /**
   * What `filter` keeps, combined from cached conditions (their bitmaps brought forward by the change log), or null
   * when a condition of it is not cached (or the filter has a topic or dates).
   */
  compose(scope: Scope, filter: MemoryFilter): KeyBitmap | null {
    const clauses = clausesOf(filter);
    if (!clauses) return null;
    let kept: KeyBitmap | null = null;
    for (const clause of clauses) {
      const sets: KeyBitmap[] = [];
      for (const condition of clause) {
        const seqs = this.cache.seqsOf(scope, condition);
        if (!seqs) {
          this.missed(scope, condition);
          return null;
        }
        sets.push(seqs);
      }
      // A new set always: the result is cached for the filter and patched apart from its conditions'.
      const any = KeyBitmap.union(sets);
      kept = kept ? KeyBitmap.intersection(kept, any) : any;
    }
    return kept;
  }

  /** Whether the workspace's broad conditions are to be read: it is big enough, and they are not read or reading. */
  wanted(scope: Scope, scopeRows: number): boolean {
    const key = workspaceKey(scope);
    return scopeRows >= this.fromRows && !this.prefetched.has(key) && !this.running.has(key);
  }

  /** Reads the broad conditions of every big workspace (server start). */
  async prefetchAll(): Promise<void> {
    if (!this.db.open) return;
    for (const w of this.bigWorkspaces.all(this.fromRows)) {
      await nextMacrotask();
      if (!this.db.open) return;
      await this.prefetch({ tenantId: w.tenant_id, mode: w.mode as Scope['mode'], workspace: w.workspace }, w.n);
    }
  }

  /** Lists the workspace's broad conditions not cached yet into the cache, one a macrotask. */
  async prefetch(scope: Scope, scopeRows: number): Promise<void> {
    const key = workspaceKey(scope);
    if (this.running.has(key)) return;
    this.running.add(key);
    try {
      if (!this.db.open) return;
      const conditions = await this.broadConditions(scope, scopeRows);
      for (const condition of conditions) {
        await nextMacrotask();
        if (!this.db.open) return;
        const cached = this.cache.lookup(scope, condition);
        if (!cached.allowed) cached.fill(this.list(scope, condition, scopeRows), scopeRows);
      }
      this.prefetched.set(key, new Set(conditions.map((c) => JSON.stringify(c))));
    } finally {
      this.running.delete(key);
    }
  }

  /** A prefetched condition no longer cached: the workspace's are read again after a next search. */
  private missed(scope: Scope, condition: MemoryFilter): void {
    const key = workspaceKey(scope);
    if (this.prefetched.get(key)?.has(JSON.stringify(condition))) this.prefetched.delete(key);
  }

  /**
   * The conditions keeping at least BROAD_SHARE of `scopeRows`, the commonest first; each count in a macrotask of its
   * own (10-60 ms each over 100,000 memories).
   */
  private async broadConditions(scope: Scope, scopeRows: number): Promise<MemoryFilter[]> {
    const least = Math.max(1, Math.ceil(BROAD_SHARE * scopeRows));
    const found: { condition: MemoryFilter; n: number }[] = [];
    for (const { tag, n } of this.broadTags.all(least)) found.push({ condition: tagCondition(tag), n });
    await nextMacrotask();
    if (!this.db.open) return [];
    for (const { type, n } of this.broadTypes.all(scope.tenantId, scope.mode, scope.workspace, least)) {
      found.push({ condition: typeCondition(type), n });
    }
    await nextMacrotask();
    if (!this.db.open) return [];
    for (const { key: path, value, n } of this.broadMetadata.all(least)) {
      // The index's JSON path back to a filter's key, when a filter can name it (checked by writing it back).
      const key = path.startsWith('$.') ? path.slice(2) : '';
      if (!METADATA_KEY_PATTERN.test(key) || this.indexKey(key) !== path) continue;
      if (typeof value !== 'string' && typeof value !== 'number') continue;
      found.push({ condition: metadataCondition(key, value), n });
    }
    return found.sort((a, b) => b.n - a.n).slice(0, MAX_PREFETCHED).map((f) => f.condition);
  }
}

const nextMacrotask = () => new Promise((resolve) => setImmediate(resolve));
const workspaceKey = (s: Scope): string => JSON.stringify([s.tenantId, s.mode, s.workspace]);
