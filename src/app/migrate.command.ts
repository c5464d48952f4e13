import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { copyStore, type CopyProgress } from '../core/storage-copy.ts';
import { redactPassword, type Config } from './config.ts';
import { createStorage, type StorageConfig } from './storage.factory.ts';

/** A store named on the command line: `sqlite:DIR` (the data directory holding mnemo.db) or `postgres://…`. */
export type StoreLocation = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export function parseStoreLocation(value: string): StoreLocation {
  if (/^postgres(ql)?:\/\//.test(value)) return { kind: 'postgres', url: value };
  if (value.startsWith('sqlite:') && value.length > 'sqlite:'.length) {
    return { kind: 'sqlite', file: resolve(value.slice('sqlite:'.length), 'mnemo.db') };
  }
  throw new InvalidArgumentError('use sqlite:DIR (the data directory holding mnemo.db) or postgres://user:password@host:port/db');
}

export const describeLocation = (l: StoreLocation): string => (l.kind === 'sqlite' ? l.file : redactPassword(l.url));

const storageConfig = (l: StoreLocation, config: Config): StorageConfig => ({
  databaseFile: l.kind === 'sqlite' ? l.file : config.databaseFile,
  sqliteSynchronous: config.sqliteSynchronous,
  databaseUrl: l.kind === 'postgres' ? l.url : null,
  databasePoolSize: config.databasePoolSize,
  databasePreparedStatements: config.databasePreparedStatements,
});

/** Where progress goes: a cli-progress bar on a terminal, else a line per table and every tenth of the way. */
export interface ProgressSink {
  update(p: CopyProgress): void;
  stop(): void;
}

export function lineProgress(write: (text: string) => void): ProgressSink {
  let table = '';
  let tenth = -1;
  return {
    update(p) {
      const now = p.total === 0 ? 10 : Math.floor((p.done * 10) / p.total);
      if (p.table === table && now === tenth) return;
      table = p.table;
      tenth = now;
      write(`mnemo: migrate ${p.done}/${p.total} rows (${p.table})\n`);
    },
    stop() {},
  };
}

/** cli-progress when it is installed (a development dependency) and stderr is a terminal; else plain lines. */
export async function terminalProgress(fallback: ProgressSink): Promise<ProgressSink> {
  if (!process.stderr.isTTY) return fallback;
  try {
    const { default: cliProgress } = await import('cli-progress');
    const bar = new cliProgress.SingleBar({
      format: 'migrate [{bar}] {value}/{total} rows | {table} | eta {eta_formatted}', stream: process.stderr, hideCursor: true,
    }, cliProgress.Presets.shades_classic);
    let started = false;
    return {
      update(p) {
        if (!started) { bar.start(p.total, 0, { table: p.table }); started = true; }
        bar.update(p.done, { table: p.table });
      },
      stop() { if (started) bar.stop(); },
    };
  } catch {
    return fallback;
  }
}

export interface MigrateRequest {
  from: StoreLocation;
  to: StoreLocation;
  config: Config;
  pageSize: number;
  maxRows?: number;
  progress: ProgressSink;
  out(text: string): void;
}

/** The outcome `mnemo migrate` reports: an error message for a partial copy or unequal counts, else null. */
export async function migrate(req: MigrateRequest): Promise<string | null> {
  if (describeLocation(req.from) === describeLocation(req.to)) return '--from and --to name the same store';
  if (req.from.kind === 'sqlite' && !existsSync(req.from.file)) return `no database at ${req.from.file}`;
  const source = await createStorage(storageConfig(req.from, req.config));
  try {
    const target = await createStorage(storageConfig(req.to, req.config));
    try {
      const result = await copyStore(source, target, {
        pageSize: req.pageSize, ...(req.maxRows === undefined ? {} : { maxRows: req.maxRows }), onProgress: (p) => req.progress.update(p),
      }).finally(() => req.progress.stop());
      if (!result.complete) return `stopped after --max-rows ${req.maxRows} rows (${result.inserted} new); run the command again to finish`;
      const width = Math.max(...result.counts.map((c) => c.table.length));
      req.out(`${'table'.padEnd(width)}  source  target\n`);
      for (const c of result.counts) req.out(`${c.table.padEnd(width)}  ${String(c.source).padStart(6)}  ${String(c.target).padStart(6)}${c.source === c.target ? '' : '  MISMATCH'}\n`);
      const mismatched = result.counts.filter((c) => c.source !== c.target).map((c) => c.table);
      if (mismatched.length > 0) return `row counts differ in ${mismatched.join(', ')} (was the target empty?)`;
      req.out(`migrated: ${result.inserted} rows copied, counts verified\n`);
      return null;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
