import { METADATA_KEY_PATTERN, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import { pgJson, type SqlParams } from './pg-executor.ts';

/** `alias.tenant_id = … AND mode AND workspace`, the clause every memory query starts with. */
export function scopeSql(p: SqlParams, scope: { tenantId: string; mode: string; workspace: string }, alias = 'm'): string {
  return `${alias}.tenant_id = ${p.add(scope.tenantId)} AND ${alias}.mode = ${p.add(scope.mode)} AND ${alias}.workspace = ${p.add(scope.workspace)}`;
}

/** The JSON object that holds `value` at the dotted `path`: `a.b`, 1 → {"a":{"b":1}}. */
function nestedAt(path: readonly string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/**
 * SQL for the shared filters, as ` AND …` clauses over the memories alias `m`. Tags use the GIN index on the text[]
 * column (`&&` any, `@>` all); each metadata condition is a jsonb containment (GIN, jsonb_path_ops): the value at the
 * path equals a wanted one, or is an array holding one, as in the SQLite adapter.
 */
export function filterSql(p: SqlParams, filter: MemoryFilter): string {
  const parts: string[] = [];
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
