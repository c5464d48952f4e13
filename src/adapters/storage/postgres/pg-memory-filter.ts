import { METADATA_KEY_PATTERN, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import { pgJson, pgTime, type SqlParams } from './pg-executor.ts';

/** `alias.tenant_id = … AND mode AND workspace`, the clause every memory query starts with. */
export function scopeSql(p: SqlParams, scope: { tenantId: string; mode: string; workspace: string }, alias = 'm'): string {
  return `${alias}.tenant_id = ${p.add(scope.tenantId)} AND ${alias}.mode = ${p.add(scope.mode)} AND ${alias}.workspace = ${p.add(scope.workspace)}`;
}

/** The JSON object that holds `value` at the dotted `path`: `a.b`, 1 → {"a":{"b":1}}. */
function nestedAt(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/*
 * Validity (MemoryFilter.validAt), two ways, each where EXPLAIN showed it keeps the plan the query has without it:
 * - validAtSql, a condition on the row: where the query reads the rows anyway (searches, list pages, tag suggestions)
 *   it costs three comparisons per row and leaves the plan as it was.
 * - excludedAtSql, the seqs of the scope's memories NOT valid then, for a statement that subtracts them: where the
 *   query is otherwise answered from an index alone (the list total, title suggestions: index-only scans), a condition
 *   on the row would read every row of the scope (the planner took a sequential scan of the table). The invalid rows
 *   come from the partial index memories_scope_bounded (valid_until set, or valid_from after creation: the few
 *   time-bounded memories, the only ones validity can refuse); usually none. (`as_of`'s "recorded by then" is the
 *   filter's createdTo, an ordinary filter.)
 */

/** `isValidAt` over the memories alias `alias`: not ended (valid_until > at, or open), and begun (valid_from ≤ at) unless valid from its creation. */
export function validAtSql(p: SqlParams, at: Date, alias = 'm'): string {
  const t = `${p.add(pgTime(at))}::timestamptz`;
  return `((${alias}.valid_until IS NULL OR ${alias}.valid_until > ${t}) AND (${alias}.valid_from <= ${t} OR ${alias}.valid_from <= ${alias}.created_at))`;
}

/**
 * An array of the seqs of the scope's memories not valid at `at`, computed once per statement (an InitPlan: planned
 * apart from the statement's other filters, whose estimates would otherwise steer it off the partial index): a
 * time-bounded memory (the predicate of memories_scope_bounded, verbatim, so that the planner can use that partial
 * index) that has ended or not begun. Used as `m.seq = ANY(…)`, the rows are read by primary key: the cost follows the
 * number of invalid memories, not the scope's.
 */
export function excludedAtSql(p: SqlParams, scope: { tenantId: string; mode: string; workspace: string }, at: Date): string {
  const t = `${p.add(pgTime(at))}::timestamptz`;
  return `ARRAY(SELECT x.seq FROM memories x WHERE ${scopeSql(p, scope, 'x')}
    AND (x.valid_until IS NOT NULL OR x.valid_from > x.created_at) AND (x.valid_until <= ${t} OR (x.valid_from > ${t} AND x.valid_from > x.created_at)))`;
}

/**
 * SQL for the shared filters, as ` AND …` clauses over the memories alias `m`. Tags use the GIN index on the text[]
 * column (`&&` any, `@>` all); each metadata condition is a jsonb containment (GIN, jsonb_path_ops): the value at the
 * path equals a wanted one, or is an array holding one, as in the SQLite adapter. Validity (`validAt`) too.
 */
export function filterSql(p: SqlParams, filter: MemoryFilter): string {
  const parts: string[] = [];
  if (filter.validAt) parts.push(validAtSql(p, filter.validAt));
  if (filter.types && filter.types.length > 0) parts.push(`m.memory_type = ANY(${p.add(filter.types)}::text[])`);
  if (filter.tagsAny && filter.tagsAny.length > 0) parts.push(`m.tags && ${p.add(filter.tagsAny)}::text[]`);
  if (filter.tagsAll && filter.tagsAll.length > 0) parts.push(`m.tags @> ${p.add(filter.tagsAll)}::text[]`);
  if (filter.topicId !== undefined) parts.push(`m.topic_id = ${p.add(filter.topicId)}`);
  if (filter.createdFrom) parts.push(`m.created_at >= ${p.add(filter.createdFrom.toISOString())}::timestamptz`);
  if (filter.createdTo) parts.push(`m.created_at <= ${p.add(filter.createdTo.toISOString())}::timestamptz`);
  for (const [key, wanted] of Object.entries(filter.metadata ?? {})) {
    // The core validates keys; this is the last guard (keys only ever travel as parameters here anyway).
    if (!METADATA_KEY_PATTERN.test(key)) throw new RangeError(`invalid metadata key ${key}`);
    const values = Array.isArray(wanted) ? wanted : [wanted];
    if (values.length === 0) {
      parts.push('FALSE');
      continue;
    }
    const path = key.split('.');
    const alternatives = values.flatMap((v) => [nestedAt(path, v), nestedAt(path, [v])])
      .map((doc) => `m.metadata @> ${p.add(pgJson(doc))}::jsonb`);
    parts.push(`(${alternatives.join(' OR ')})`);
  }
  return parts.map((part) => ` AND ${part}`).join('');
}
