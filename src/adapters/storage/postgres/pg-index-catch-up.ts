import { hasMemoryFilter, type MemoryFilter } from '../../../core/memories/memory.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { pgInt, SqlParams, type PgQueryable } from './pg-executor.ts';
import { excludedAtSql, filterSql, scopeSql } from './pg-memory-filter.ts';

/*
 * The pieces both in-memory indexes (pg-vector-index.ts, pg-keyword-index.ts) put in their one catch-up statement: the
 * workspace's version in the change log (vector_versions / vector_changes, migrations 23 and 25), and the seqs the
 * search's filter allows or its validity excludes. Each index adds its own change rows; every row starts with its kind
 * and a seq, the rest of its columns are the index's.
 */

/** Rows an index's load reads per page. */
const LOAD_PAGE = 2000;

/**
 * An index's load: every change row of the workspace in pages by seq (`pageSql` gives the index's rows after `after`,
 * at most `limit`, ordered by seq), each handed to `apply`; the version comes with the first page. A page read later
 * may already hold a newer change, which the next catch-up (changes after that version) applies again, as it then is.
 * Returns that version (0: never written).
 */
export async function loadInPages<Row extends { kind: number; seq: number | string | null }>(db: PgQueryable, scope: Scope, rest: string,
  pageSql: (p: SqlParams, after: number, limit: number) => string, apply: (row: Row) => void, pageSize = LOAD_PAGE): Promise<number> {
  let version: number | null = null;
  for (let after = 0; ;) {
    const p = new SqlParams();
    const rows = await db.query<Row>(`${versionSql(p, scope, rest)} UNION ALL (${pageSql(p, after, pageSize)})`, p.values);
    let read = 0;
    for (const row of rows) {
      if (row.kind === KIND_VERSION) version ??= pgInt(row.seq ?? 0);
      else {
        read++;
        after = pgInt(row.seq);
        apply(row);
      }
    }
    if (read < pageSize) return version ?? 0;
  }
}

/** A catch-up read more changes than this: the index reloads the workspace in pages instead. */
export const MAX_CATCH_UP = 20_000;

export const KIND_VERSION = 0;
export const KIND_CHANGE = 1;
export const KIND_ALLOWED = 2;
export const KIND_EXCLUDED = 3;

/** The workspace's version (0: never written) as a row of kind KIND_VERSION; `rest` names the index's other columns. */
export function versionSql(p: SqlParams, scope: Scope, rest: string): string {
  return `SELECT ${KIND_VERSION} AS kind, COALESCE((SELECT w.version FROM vector_versions w WHERE ${scopeSql(p, scope, 'w')}), 0) AS seq${rest}`;
}

/**
 * The version row and, when the workspace moved past `after`, its changes since (at most MAX_CATCH_UP + 1), from the
 * index's catch-up function (PostgreSQL migration 27: `vector_changes_after`, `keyword_changes_after`); `args` are
 * the function's own arguments between the scope and `after`, `columns` what to select from its rows.
 */
export function changesAfterSql(p: SqlParams, fn: string, columns: string, scope: Scope, args: readonly unknown[], after: number): string {
  const list = [scope.tenantId, scope.mode, scope.workspace, ...args, after].map((v) => p.add(v));
  return `SELECT ${columns} FROM ${fn}(${list.join(', ')}, ${MAX_CATCH_UP + 1})`;
}

/** The memories changed after version `after`, as `c.memory_seq` of vector_changes rows `c` (the index reads the rest). */
export function changedSql(p: SqlParams, scope: Scope, after: number): string {
  return `FROM vector_changes c WHERE ${scopeSql(p, scope, 'c')} AND c.version > ${p.add(after)}`;
}

/**
 * Rows of the seqs the filter allows (KIND_ALLOWED, only when it restricts anything beyond validity) and of those
 * validity excludes (KIND_EXCLUDED); `rest` is the index's other columns, as NULLs.
 */
export function filterRowsSql(p: SqlParams, scope: Scope, filter: MemoryFilter, rest: string): string[] {
  const { validAt, ...others } = filter;
  const parts: string[] = [];
  if (hasMemoryFilter(others)) parts.push(`SELECT ${KIND_ALLOWED}, m.seq${rest} FROM memories m WHERE ${scopeSql(p, scope)}${filterSql(p, others)}`);
  if (validAt) parts.push(`SELECT ${KIND_EXCLUDED}, unnest(${excludedAtSql(p, scope, validAt)})${rest}`);
  return parts;
}

/** What a catch-up statement's rows say besides the index's own changes. */
export class CatchUpRows<Change> {
  version = 0;
  readonly changes: Change[] = [];
  /** The seqs the filter allows; null when it restricts nothing beyond validity. */
  readonly allowed: number[] | null;
  /** The seqs validity excludes; null when none (or no validity asked). */
  excluded: Set<number> | null = null;

  constructor(filter: MemoryFilter) {
    const { validAt: _validAt, ...others } = filter;
    this.allowed = hasMemoryFilter(others) ? [] : null;
  }

  add(row: Change & { kind: number; seq: number | string | null }): void {
    if (row.kind === KIND_VERSION) this.version = pgInt(row.seq ?? 0);
    else if (row.kind === KIND_CHANGE) this.changes.push(row);
    else if (row.kind === KIND_ALLOWED) this.allowed!.push(pgInt(row.seq));
    else if (row.kind === KIND_EXCLUDED) (this.excluded ??= new Set()).add(pgInt(row.seq));
  }

  /** The log went back (the database was restored or emptied) or too much changed for one answer: load afresh. */
  needsReload(from: number): boolean {
    return this.version < from || this.changes.length > MAX_CATCH_UP;
  }
}
