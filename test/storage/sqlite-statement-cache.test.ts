import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createStatementCache } from '../../src/adapters/storage/sqlite/sqlite-statement-cache.ts';

describe('SQLite statement cache', () => {
  it('prepares each SQL text once, answers through the kept statement, and stays within its bound', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3)');
      const prepared = createStatementCache(db, 2);
      const inList = (k: number) => `SELECT n FROM t WHERE n IN (${Array.from({ length: k }, () => '?').join(', ')}) ORDER BY n`;
      const first = prepared<number[], { n: number }>(inList(2));
      expect(first.all(1, 3)).toEqual([{ n: 1 }, { n: 3 }]);
      expect(prepared(inList(2))).toBe(first);
      const other = prepared<number[], { n: number }>(inList(1));
      expect(other).not.toBe(first);
      expect(other.all(2)).toEqual([{ n: 2 }]);
      // A third text drops the oldest (bound 2): asking for it again prepares a new statement.
      prepared(inList(3));
      expect(prepared(inList(1))).toBe(other);
      expect(prepared(inList(2))).not.toBe(first);
    } finally {
      db.close();
    }
  });
});
