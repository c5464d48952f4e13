/**
 * `npm run bench:retire`: what the scan threads keep of the vector indexes a server discards. Each round builds a new
 * matrix (as a workspace reload does), searches it once through a scan pool, and drops it; "retired" also tells the
 * pool (ScanPool.retire, what the vector cache does), "kept" does not (how the pool behaved before). Each mode runs in
 * a child process of its own, so that one's memory cannot show in the other's RSS.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { createRng } from '../lib/prng.ts';

const opts = new Command('bench:retire')
  .option('--rows <n>', 'rows of each matrix', '20000')
  .option('--dims <n>', 'dimensions', '512')
  .option('--rounds <n>', 'matrices built, searched and dropped', '60')
  .option('--threads <n>', 'scan threads', '2')
  .option('--mode <mode>', '(internal) run one mode in this process: retired or kept')
  .parse().opts<{ rows: string; dims: string; rounds: string; threads: string; mode?: string }>();
const rows = Number(opts.rows);
const dims = Number(opts.dims);
const rounds = Number(opts.rounds);
const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

if (opts.mode) {
  const pool = new ScanPool({ threads: Number(opts.threads) });
  const rng = createRng(1);
  const vectors = Array.from({ length: 64 }, () => Float32Array.from({ length: dims }, () => rng.next() - 0.5));
  const samples: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const matrix = new VectorMatrix(dims, rows);
    for (let i = 0; i < rows; i++) matrix.upsert(i + 1, vectors[i % vectors.length]!);
    await matrix.searchIn(pool, vectors[3]!, 10, -1);
    if (opts.mode === 'retired') pool.retire(matrix.id);
    if (round === 1 || round % 10 === 0) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      samples.push(mib(process.memoryUsage().rss));
      process.stderr.write(`${opts.mode}: round ${round}/${rounds}, RSS ${samples.at(-1)} MiB\n`);
    }
  }
  await pool.close();
  process.send!(samples);
} else {
  const script = fileURLToPath(import.meta.url);
  const args = ['--rows', opts.rows, '--dims', opts.dims, '--rounds', opts.rounds, '--threads', opts.threads];
  const run = (mode: string) => new Promise<number[]>((resolve, reject) => {
    const child = fork(script, [...args, '--mode', mode], { execArgv: ['--import', 'tsx'] });
    child.once('message', (samples) => resolve(samples as number[]));
    child.once('exit', (code) => { if (code !== 0) reject(new Error(`${mode} exited with ${code}`)); });
  });
  const kept = await run('kept');
  const retired = await run('retired');
  const at = [1, ...Array.from({ length: Math.floor(rounds / 10) }, (_, i) => (i + 1) * 10)];
  console.log(`${rows} × ${dims} matrices through ${opts.threads} scan threads, one search each, then dropped; RSS (MiB) after the round:`);
  console.log('');
  console.log(`| pool | ${at.map((r) => `round ${r}`).join(' | ')} |`);
  console.log(`| --- | ${at.map(() => '---:').join(' | ')} |`);
  console.log(`| not told (as before) | ${kept.join(' | ')} |`);
  console.log(`| matrix retired | ${retired.join(' | ')} |`);
}
