import { Command } from 'commander';
import { describeMachine, machineLine } from '../lib/machine.ts';
import { updateSections } from '../lib/benchmarks-file.ts';
import { REPO_ROOT, type EmbedderKind } from '../lib/server.ts';
import { fmt } from '../lib/stats.ts';
import { runSearchSuite, searchTable } from './suite.ts';

/** `npm run bench:search`: search p50/p99 over HTTP for G1, G3 hybrid, G4 and vector search on one corpus. */
const program = new Command('bench:search')
  .description('search latency over HTTP on loopback for every search surface, side by side on one corpus')
  .option('--embedders <list>', 'hashing,local', 'hashing,local')
  .option('--sizes <list>', 'memories in the one workspace, per embedder in the same order (one value: all)', '10000,1000')
  .option('--duration <s>', 'measured seconds per surface', '10')
  .option('--connections <n>', 'autocannon connections', '10')
  .option('--quick', 'a smoke run: 1000 memories, 3 s per surface')
  .option('--write', 'update the "Search surfaces" section of BENCHMARKS.md')
  .parse();

const opts = program.opts<{ embedders: string; sizes: string; duration: string; connections: string; quick?: boolean; write?: boolean }>();
const embedders = opts.embedders.split(',').map((e) => e.trim()) as EmbedderKind[];
const sizes = opts.sizes.split(',').map(Number);
const runs = embedders.map((embedder, i) => ({ embedder, size: opts.quick ? 1000 : (sizes[i] ?? sizes[0]!) }));
const duration = opts.quick ? 3 : Number(opts.duration);
const started = Date.now();
const { rows, seedPerSecond } = await runSearchSuite({
  runs, connections: Number(opts.connections), durationSeconds: duration, warmupSeconds: opts.quick ? 1 : 2, seedConcurrency: 16,
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
].join('\n');
process.stdout.write(`${body}\n`);
if (opts.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'search', title: 'Search surfaces over HTTP (G1, G3 hybrid, G4, vector)', body }]);
