import type { SqliteDb } from './sqlite.database.ts';

/** Distinct metadata keys whose index key is remembered before the memo starts over. */
const MAX_REMEMBERED_KEYS = 1000;

/**
 * The key memory_metadata (migration 22) holds a filter's metadata key under: the JSON path text SQLite's json_tree
 * writes for it (`source.kind` is `$.source.kind`, `a-b` is `$."a-b"`), asked of SQLite itself so that both sides
 * quote alike.
 */
export function metadataIndexKeys(db: SqliteDb): (key: string) => string {
  const leafPath = db.prepare<[string], string>("SELECT fullkey FROM json_tree(?) WHERE type = 'null'").pluck();
  const memo = new Map<string, string>();
  return (key) => {
    let path = memo.get(key);
    if (path === undefined) {
      const doc = key.split('.').reduceRight<unknown>((inner, segment) => ({ [segment]: inner }), null);
      path = leafPath.get(JSON.stringify(doc))!;
      if (memo.size >= MAX_REMEMBERED_KEYS) memo.clear();
      memo.set(key, path);
    }
    return path;
  };
}
