/**
 * The PostgreSQL adapter's in-memory vector index (pg-vector-index.ts) on a real server: seeding rate, a node's cold
 * load of one big workspace (first search), the memory it holds, warm search latency, and a search right after another
 * node's write (the catch-up round trip). A database of its own (`vec_load_<pid>`), dropped at the end.
 *
 *   node --expose-gc --import tsx bench/search/pg-index-load.ts --database-url postgres://… --memories 100000
 */
import { Command } from 'commander';
import pg from 'pg';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import type { Scope } from '../../src/core/scope.ts';
import { seedStoreDirectly } from '../lib/seed-store.ts';
import { median } from '../lib/stats.ts';

const opts = new Command()
  .requiredOption('--database-url <url>', 'a PostgreSQL server with pgvector')
  .option('--memories <n>', 'memories in the workspace', '100000')
  .option('--dims <n>', 'vector width', '512')
  .option('--threads <n>', 'scan threads', '2')
  .option('--database <name>', 'a database a run with --keep left (seeded with --memories): measured without seeding again')
  .option('--keep', 'leave the database on the server, and stop after seeding (measure in a fresh process with --database)')
  .parse().opts<{ databaseUrl: string; memories: string; dims: string; threads: string; database?: string; keep?: boolean }>();

const size = Number(opts.memories);
const dims = Number(opts.dims);
const name = opts.database ?? `vec_load_${process.pid}`;
if (!/^vec_load_\d+$/.test(name)) throw new Error(`not a database of this bench: ${name}`);
const admin = new pg.Client({ connectionString: opts.databaseUrl });
await admin.connect();
if (!opts.database) await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(opts.databaseUrl);
url.pathname = `/${name}`;
const open = async () => {
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  await pool.query('CREATE EXTENSION IF NOT EXISTS vector');
  return createPostgresStorage(pgPoolExecutor(pool), { searchThreads: Number(opts.threads) });
};
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const rssMb = () => { gc(); return process.memoryUsage().rss / 2 ** 20; };
const scope: Scope = { tenantId: 'bench', mode: 'live', workspace: 'default' };
const modelId = `hashing:v1-${dims}`;
const query = (i: number) => ({ vector: hashEmbed(`question ${i} about deploys and meetings`, dims), modelId, limit: 10, minCosine: -1, filter: {} });

try {
  const writer = await open();
  let t0 = performance.now();
  if (!opts.database) {
    await seedStoreDirectly(writer.memories, scope, { size, dims });
    const seconds = (performance.now() - t0) / 1000;
    process.stdout.write(`seed ${size.toLocaleString('en')} × ${dims} (atomic batches of 1,000, one client): ${seconds.toFixed(1)} s, ${Math.round(size / seconds)} memories/s\n`);
    await seedStoreDirectly(writer.memories, { ...scope, workspace: 'tiny' }, { size: 1, dims });
    if (opts.keep) {
      process.stdout.write(`kept database ${name}\n`);
      await writer.close();
      process.exit(0);
    }
  }

  // The scan threads started first (a search of a one-memory workspace), so that the RSS below is the index's.
  const tiny: Scope = { ...scope, workspace: 'tiny' };
  const reader = await open();
  await reader.memories.searchSimilar(tiny, query(0));
  const before = rssMb();
  t0 = performance.now();
  await reader.memories.searchSimilar(scope, query(0));
  const coldMs = performance.now() - t0;
  const after = rssMb();
  const warm: number[] = [];
  for (let i = 1; i <= 50; i++) {
    t0 = performance.now();
    await reader.memories.searchSimilar(scope, query(i));
    warm.push(performance.now() - t0);
  }
  const caughtUp: number[] = [];
  for (let i = 0; i < 20; i++) {
    await seedStoreDirectly(writer.memories, scope, { size: size + 10 * (i + 1), dims, from: size + 10 * i });
    t0 = performance.now();
    await reader.memories.searchSimilar(scope, query(100 + i));
    caughtUp.push(performance.now() - t0);
  }
  const floatMb = (size * dims * 4) / 2 ** 20;
  process.stdout.write(`${[
    `memories ${size.toLocaleString('en')} × ${dims} dims (float32 ${floatMb.toFixed(0)} MB), scan threads ${opts.threads}`,
    `cold load (first search): ${(coldMs / 1000).toFixed(2)} s; RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB (+${(after - before).toFixed(0)} MB, ${((after - before) / floatMb).toFixed(2)}× the floats)`,
    `warm search (50): median ${median(warm).toFixed(1)} ms`,
    `search after another node's write of 10 memories (20): median ${median(caughtUp).toFixed(1)} ms`,
  ].join('\n')}\n`);
  await writer.close();
  await reader.close();
} finally {
  if (!opts.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
