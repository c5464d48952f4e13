/** True when a better-sqlite3 error is a UNIQUE constraint failure, optionally on a column named `column`. */
export function isUniqueViolation(err: unknown, column?: string): boolean {
  const e = err as { code?: string; message?: string };
  if (e?.code !== 'SQLITE_CONSTRAINT_UNIQUE') return false;
  return column === undefined || (e.message ?? '').includes(column);
}
