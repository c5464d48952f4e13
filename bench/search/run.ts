import { Command } from 'commander';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { envList, REPO_ROOT, type EmbedderKind } from '../lib/server.ts';
import { fmt } from '../lib/stats.ts';
import { hybridRatioTable, recallTable, runSearchSuite, searchTable, type StoreKind } from './suite.ts';

/** `npm run bench:search`: search p50/p99 over HTTP for G1, G3 hybrid, G4 and vector search on one corpus. */
const program = new Command('bench:search')
  .description('search latency over HTTP on loopback for every search surface, side by side on one corpus')
  .option('--embedders <list>', 'hashing,local', 'hashing,local')
  .option('--sizes <list>', 'memories in the one workspace, per embedder in the same order (one value: all); with one embedder, a run per size', '10000,1000')
  .option('--duration <s>', 'measured seconds per surface', '10')
  .option('--connections <list>', 'autocannon connections; a list (e.g. 1,8) measures each in turn on the same seeded stores', '10')
  .option('--warmup <s>', 'warm-up seconds per surface (at least one answer must arrive in it)', '2')
  .option('--store <store>', 'sqlite, postgres (PGlite with pgvector, in a child process, unless --database-url) or both, side by side', 'sqlite')
  .option('--database-url <url>', 'postgres: this PostgreSQL server (pgvector installed) instead of PGlite; each corpus gets a new database on it, dropped after')
  .option('--keep-database', 'with --database-url: leave each corpus\'s database on the server (its URL is logged), e.g. for EXPLAIN')
  .option('--ef-search <list>', 'hnsw.ef_search values whose HNSW recall@10 is measured (postgres)', '40,100,200')
  .option('--ratio-rounds <n>', 'G1 and G3 measured this many times in turn (the surfaces\' pass is the first); the hybrid ratio is the median', '3')
  .option('--quick', 'a smoke run: 1000 memories, 3 s per surface')
  .option('--server-env <list>', 'settings NAME=VALUE for every server the bench starts, comma-separated (e.g. an A/B switch)', '')
  .option('--write', 'update the "Search surfaces" section of BENCHMARKS.md')
  .parse();

const opts = program.opts<{ databaseUrl?: string; keepDatabase?: boolean; ratioRounds: string; efSearch: string; embedders: string; store: string; warmup: string; sizes: string; duration: string; connections: string; quick?: boolean; write?: boolean; serverEnv: string }>();
const embedders = opts.embedders.split(',').map((e) => e.trim()) as EmbedderKind[];
const sizes = opts.sizes.split(',').map(Number);
// One embedder: a run per size (e.g. 10k and 100k side by side); several: one size each, in order.
const runs = opts.quick ? embedders.map((embedder) => ({ embedder, size: 1000 }))
  : embedders.length === 1 ? sizes.map((size) => ({ embedder: embedders[0]!, size }))
  : embedders.map((embedder, i) => ({ embedder, size: sizes[i] ?? sizes[0]! }));
const STORES: Record<string, StoreKind[]> = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };
const stores = STORES[opts.store];
if (!stores) program.error(`--store must be sqlite, postgres or both, not ${opts.store}`);
if (opts.databaseUrl && !stores!.includes('postgres')) program.error('--database-url needs --store postgres or both');
if (!(Number.isInteger(Number(opts.ratioRounds)) && Number(opts.ratioRounds) >= 1)) program.error(`--ratio-rounds must be a whole number of at least 1, not ${opts.ratioRounds}`);
const rounds = opts.quick ? 1 : Number(opts.ratioRounds);
const connections = opts.connections.split(',').map(Number);
if (!connections.every((n) => Number.isInteger(n) && n >= 1)) program.error(`--connections must list whole numbers of at least 1, not ${opts.connections}`);
const duration = opts.quick ? 3 : Number(opts.duration);
const started = Date.now();
const { rows, recalls, seedPerSecond, copySeconds, postgres } = await runSearchSuite({
  runs, stores: stores!, databaseUrl: opts.databaseUrl, keepDatabase: opts.keepDatabase, efSearch: opts.efSearch.split(',').map(Number), ratioRounds: rounds, connections, durationSeconds: duration, warmupSeconds: opts.quick ? 1 : Number(opts.warmup), seedConcurrency: 16,
  serverEnv: envList(opts.serverEnv),
});
// The server's address is the reader's own: the command shows where it goes, not the credentials.
const argv = process.argv.slice(2).map((arg) => (opts.databaseUrl ? arg.replace(opts.databaseUrl, 'URL') : arg));
const command = `npm run bench:search -- ${argv.join(' ')}`.trim();
const body = [
  `- Command: \`${command}\``,
  `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  ...(postgres ? [`- PostgreSQL: ${postgres}${opts.databaseUrl ? ` (${new URL(opts.databaseUrl).hostname})` : ''}`] : []),
  '',
  `${runs.map((r) => `${r.embedder}: ${r.size.toLocaleString('en')}`).join(', ')} memories in one workspace, seeded once through G1 into SQLite (seed rate: ${Object.entries(seedPerSecond).map(([e, r]) => `${e} ${fmt(r, 0)}/s`).join(', ')})` +
  (Object.keys(copySeconds).length > 0 ? `; PostgreSQL answers from a copy of that store made by \`mnemo migrate\` (${Object.entries(copySeconds).map(([e, t]) => `${e} ${fmt(t, 0)} s`).join(', ')}, then ANALYZE). ` : '. ') +
  `Each surface: autocannon, ${connections.join(' then ')} connections, ${duration} s measured after a warm-up, limit/topK 10, threshold 0 (every memory scored). ` +
  'Queries cycle through 200 generated questions; vector search uses 50 query vectors taken from POST /v1/embeddings (1536 numbers).',
  '',
  searchTable(rows),
  '',
  `G3 hybrid against G1 semantic search on the same corpus and store (p50 under the same load): the surfaces' pass, then G1 and G3 again in turn, in alternating order, ${rounds} round${rounds === 1 ? '' : 's'} in all (later rounds after a 2 s warm-up); the target is decided on the median round's ratio:`,
  '',
  hybridRatioTable(rows),
  ...(recalls.length > 0 ? [
    '',
    'Recall@10 of the PostgreSQL adapter against its own exact scan in SQL, on the same data after the HTTP runs: the adapter scoring in SQL ' +
    '(`vectorScan: \'database\'`; `exactScanBelow` above the corpus size: exact; 0: HNSW with iterative scan and the given `hnsw.ef_search`, its index built first) ' +
    'and scoring in memory (the default), the 50 query vectors, in process through `pg`.',
    '',
    recallTable(recalls),
  ] : []),
].join('\n');
process.stdout.write(`${body}\n`);
// A run with PostgreSQL gets its own section, so the SQLite-only one (and its reading) stays as it was.
const section = stores!.includes('postgres')
  ? opts.databaseUrl
    ? { id: 'search-stores-server', title: 'Search on SQLite beside a PostgreSQL server (pgvector), and HNSW recall', body }
    : { id: 'search-stores', title: 'Search on SQLite beside PostgreSQL (PGlite with pgvector), and HNSW recall', body }
  : { id: 'search', title: 'Search surfaces over HTTP (G1, G3 hybrid, G4, vector)', body };
if (opts.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [section]);
