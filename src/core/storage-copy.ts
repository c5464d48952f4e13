import type { Storage } from './storage.port.ts';
import { TRANSFER_TABLES, type TransferRow, type TransferTable } from './storage-transfer.ts';

export interface CopyProgress {
  /** Rows in the source, all tables, when the copy started. */
  total: number;
  /** Rows read from the source so far (copied, or already in the target). */
  done: number;
  table: string;
}

export interface CopyOptions {
  /** Rows read and loaded per transaction. */
  pageSize?: number;
  /** Stop after reading this many rows (a partial copy; running again finishes it). */
  maxRows?: number;
  onProgress?: (progress: CopyProgress) => void;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

export interface CopyResult {
  /** Rows the target did not have yet. */
  inserted: number;
  /** False when maxRows stopped the copy early. */
  complete: boolean;
  /** Row counts per table afterwards (only when complete). */
  counts: TableCount[];
}

/**
 * Copies every table of one store into another, page by page, each page in one target transaction. Rows already in
 * the target (same key or id) are skipped, so a copy that was interrupted can simply be run again.
 */
export async function copyStore(source: Storage, target: Storage, options: CopyOptions = {}): Promise<CopyResult> {
  const pageSize = options.pageSize ?? 500;
  const sizes = new Map<TransferTable, number>();
  for (const table of TRANSFER_TABLES) sizes.set(table, await source.transfer.count(table));
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  let done = 0;
  let inserted = 0;
  for (const table of TRANSFER_TABLES) {
    for (let after: TransferRow | null = null; ;) {
      const room = options.maxRows === undefined ? pageSize : Math.min(pageSize, options.maxRows - done);
      if (room <= 0) return { inserted, complete: false, counts: [] };
      const rows = await source.transfer.dump(table, after, room);
      if (rows.length === 0) break;
      inserted += await target.transfer.load(table, rows);
      after = rows[rows.length - 1]!;
      done += rows.length;
      options.onProgress?.({ total, done, table: table.name });
    }
  }
  const counts: TableCount[] = [];
  for (const table of TRANSFER_TABLES) {
    counts.push({ table: table.name, source: await source.transfer.count(table), target: await target.transfer.count(table) });
  }
  return { inserted, complete: true, counts };
}
