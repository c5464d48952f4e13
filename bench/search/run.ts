import { Command } from 'commander';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { REPO_ROOT, type EmbedderKind } from '../lib/server.ts';
import { fmt } from '../lib/stats.ts';
import { recallTable, runSearchSuite, searchTable, type StoreKind } from './suite.ts';

/** `npm run bench:search`: search p50/p99 over HTTP for G1, G3 hybrid, G4 and vector search on one corpus. */
const program = new Command('bench:search')
  .description('search latency over HTTP on loopback for every search surface, side by side on one corpus')
  .option('--embedders <list>', 'hashing,local', 'hashing,local')
  .option('--sizes <list>', 'memories in the one workspace, per embedder in the same order (one value: all)', '10000,1000')
  .option('--duration <s>', 'measured seconds per surface', '10')
  .option('--connections <n>', 'autocannon connections', '10')
  .option('--warmup <s>', 'warm-up seconds per surface (at least one answer must arrive in it)', '2')
  .option('--store <store>', 'sqlite, postgres (PGlite with pgvector, in a child process) or both, side by side', 'sqlite')
  .option('--quick', 'a smoke run: 1000 memories, 3 s per surface')
  .option('--write', 'update the "Search surfaces" section of BENCHMARKS.md')
  .parse();

const opts = program.opts<{ embedders: string; store: string; warmup: string; sizes: string; duration: string; connections: string; quick?: boolean; write?: boolean }>();
const embedders = opts.embedders.split(',').map((e) => e.trim()) as EmbedderKind[];
const sizes = opts.sizes.split(',').map(Number);
const runs = embedders.map((embedder, i) => ({ embedder, size: opts.quick ? 1000 : (sizes[i] ?? sizes[0]!) }));
const STORES: Record<string, StoreKind[]> = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };
const stores = STORES[opts.store];
if (!stores) program.error(`--store must be sqlite, postgres or both, not ${opts.store}`);
const duration = opts.quick ? 3 : Number(opts.duration);
const started = Date.now();
const { rows, recalls, seedPerSecond } = await runSearchSuite({
  runs, stores: stores!, connections: Number(opts.connections), durationSeconds: duration, warmupSeconds: opts.quick ? 1 : Number(opts.warmup), seedConcurrency: 16,
});
const command = `npm run bench:search -- ${process.argv.slice(2).join(' ')}`.trim();
const body = [
  `- Command: \`${command}\``,
  `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  '',
  `${runs.map((r) => `${r.embedder}: ${r.size.toLocaleString('en')}`).join(', ')} memories in one workspace, seeded through G1 (seed rate: ${Object.entries(seedPerSecond).map(([e, r]) => `${e} ${fmt(r, 0)}/s`).join(', ')}). ` +
  `Each surface: autocannon, ${opts.connections} connections, ${duration} s measured after a warm-up, limit/topK 10, threshold 0 (every memory scored). ` +
  'Queries cycle through 200 generated questions; vector search uses 50 query vectors taken from POST /v1/embeddings (1536 numbers).',
  '',
  searchTable(rows),
  ...(recalls.length > 0 ? [
    '',
    'HNSW recall@10 of the PostgreSQL adapter against its own exact scan, on the same seeded data after the HTTP runs: the adapter opened twice ' +
    '(`exactScanBelow` above the corpus size: exact; 0: HNSW with iterative scan), the first 20 of the query vectors, in process through `pg`.',
    '',
    recallTable(recalls),
  ] : []),
].join('\n');
process.stdout.write(`${body}\n`);
// A run with PostgreSQL gets its own section, so the SQLite-only one (and its reading) stays as it was.
const section = stores!.includes('postgres')
  ? { id: 'search-stores', title: 'Search on SQLite beside PostgreSQL (PGlite with pgvector), and HNSW recall', body }
  : { id: 'search', title: 'Search surfaces over HTTP (G1, G3 hybrid, G4, vector)', body };
if (opts.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [section]);
