import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { table } from '../lib/markdown.ts';
import { log } from '../lib/progress.ts';
import { ensureBuilt, REPO_ROOT } from '../lib/server.ts';
import { fmt, median, percentile } from '../lib/stats.ts';

/**
 * `npm run bench:startup`: time from spawn to the `listening on` line, for the server run through tsx from the
 * TypeScript sources (how `npm start` ran before the build step), compiled (`node dist/app/main.js`), and the whole
 * operator path `npm start` (npm itself, the dist/ freshness check, then the compiled server). The three run in
 * turn within each round, so that load from other work falls on all alike.
 */
const program = new Command('bench:startup')
  .description('server start-up time: tsx from sources vs compiled dist/ vs npm start, interleaved')
  .option('--rounds <n>', 'rounds (each starts every variant once)', '10')
  .option('--embedder <kind>', 'hashing (code loading only) or local (also loads the model in its workers)', 'hashing')
  .option('--write', 'update the "Start-up" section of BENCHMARKS.md')
  .parse();
const o = program.opts<{ rounds: string; embedder: string; write?: boolean }>();

const VARIANTS = {
  'tsx (node --import tsx src/app/main.ts)': [process.execPath, '--import', 'tsx', 'src/app/main.ts'],
  'compiled (node dist/app/main.js)': [process.execPath, 'dist/app/main.js'],
  'npm start (check + compiled)': ['npm', 'start'],
} as const;
type Variant = keyof typeof VARIANTS;

/** Spawns one server, resolves with the milliseconds until it printed `listening on`, then stops it. */
async function timeStart(argv: readonly string[]): Promise<number> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-startup-'));
  const env = { ...process.env, HOST: '127.0.0.1', PORT: '0', MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: o.embedder, MNEMO_LOG_LEVEL: 'warn' };
  const started = performance.now();
  const child = spawn(argv[0]!, argv.slice(1), { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    return await new Promise<number>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/^listening on http:\/\/\S+$/m.test(out)) resolve(performance.now() - started);
      });
      child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
      void exited.then((code) => reject(new Error(`${argv.join(' ')} exited (${code}) before listening\n${out}\n${err}`)));
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

await ensureBuilt();
const started = Date.now();
const loadAtStart = loadAverage();
const times: Record<Variant, number[]> = Object.fromEntries(Object.keys(VARIANTS).map((v) => [v, []])) as never;
const rounds = Number(o.rounds);
for (let round = 0; round < rounds; round++) {
  // Rotate the order each round, so that no variant always follows the same one.
  const order = Object.keys(VARIANTS) as Variant[];
  for (let k = 0; k < round % order.length; k++) order.push(order.shift()!);
  for (const variant of order) times[variant].push(await timeStart(VARIANTS[variant]));
  log(`round ${round + 1}/${rounds}: ${order.map((v) => `${v.split(' ')[0]} ${fmt(times[v].at(-1)!, 0)} ms`).join(', ')}`);
}

const tsxMedian = median(times['tsx (node --import tsx src/app/main.ts)']);
const rows = (Object.keys(VARIANTS) as Variant[]).map((v) => [
  v, fmt(median(times[v]), 0), fmt(percentile(times[v], 10), 0), fmt(percentile(times[v], 90), 0), `${fmt(median(times[v]) / tsxMedian)}×`,
]);
const body = [
  `- Command: \`npm run bench:startup -- --rounds ${rounds} --embedder ${o.embedder}${o.write ? ' --write' : ''}\``,
  `- Date: ${new Date(started).toISOString().slice(0, 16).replace('T', ' ')} UTC (run took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  `- 1-minute load average: ${fmt(loadAtStart, 1)} when the run started, ${fmt(loadAverage(), 1)} when it ended`,
  '',
  `Spawn to the \`listening on\` line, embedder \`${o.embedder}\`, fresh data directory each time, ${rounds} starts per variant interleaved.`,
  '',
  table(['variant', 'median ms', 'p10 ms', 'p90 ms', 'median / tsx'], rows, 'lrrrr'),
].join('\n');
console.log(`\n${body}\n`);
if (o.write) await updateSections(join(REPO_ROOT, 'BENCHMARKS.md'), [{ id: `startup-${o.embedder}`, title: `Start-up: tsx vs compiled (${o.embedder})`, body }]);
