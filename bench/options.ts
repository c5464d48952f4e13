import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { EmbedderKind } from './lib/server.ts';

export type Suite = 'http' | 'scan';

export interface BenchOptions {
  only: Suite[];
  embedders: EmbedderKind[];
  sizes: number[];
  scanSizes: number[];
  dims: number[];
  duration: number;
  warmup: number;
  connections: number;
  seedConcurrency: number;
  threshold: number;
  queries: number;
  quick: boolean;
  write: boolean;
  threads: number;
  plot: string | undefined;
  file: string;
}

const SUITES: readonly Suite[] = ['http', 'scan'];
const EMBEDDERS: readonly EmbedderKind[] = ['hashing', 'local'];

function list<T extends string>(allowed: readonly T[]) {
  return (value: string): T[] => {
    const items = value.split(',').map((s) => s.trim()).filter(Boolean);
    const bad = items.filter((s) => !(allowed as readonly string[]).includes(s));
    if (items.length === 0 || bad.length > 0) throw new InvalidArgumentError(`use a comma-separated list of ${allowed.join(', ')}`);
    return [...new Set(items)] as T[];
  };
}

/** Accepts 1000, 1k, 10k, 100_000. */
function counts(value: string): number[] {
  const items = value.split(',').map((s) => s.trim().toLowerCase().replaceAll('_', '')).filter(Boolean);
  const parsed = items.map((s) => {
    const m = /^(\d+)(k?)$/.exec(s);
    return m ? Number(m[1]) * (m[2] ? 1000 : 1) : Number.NaN;
  });
  if (parsed.length === 0 || parsed.some((n) => !Number.isSafeInteger(n) || n < 1)) {
    throw new InvalidArgumentError('use a comma-separated list of positive whole numbers (1000 or 1k)');
  }
  return parsed;
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
  return n;
}

function nonNegative(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('use a whole number >= 0');
  return n;
}

function unitInterval(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('use a number from 0 to 1');
  return n;
}

/** What --quick changes, unless the option was given explicitly. */
const QUICK: Partial<BenchOptions> = {
  sizes: [300], scanSizes: [10_000], dims: [512], duration: 2, warmup: 1, queries: 10,
};

export function buildProgram(run: (options: BenchOptions, argv: string[]) => Promise<void>): Command {
  const program = new Command('npm run bench --')
    .description('Mnemo benchmarks: G1 over HTTP against a real server (autocannon), and the exact vector scan in process.\n' +
      'Markdown results go to stdout; progress goes to stderr.')
    .addOption(new Option('--only <suites>', 'suites to run: http, scan (comma-separated)').argParser(list(SUITES)).default([...SUITES], 'http,scan'))
    .addOption(new Option('--embedders <list>', 'HTTP: embedders to run the server with').argParser(list(EMBEDDERS)).default([...EMBEDDERS], 'hashing,local'))
    .addOption(new Option('--sizes <list>', 'HTTP: corpus sizes (memories seeded per server)').argParser(counts).default([1000, 10_000], '1000,10000'))
    .addOption(new Option('--duration <seconds>', 'HTTP: measured seconds per operation').argParser(positive).default(10))
    .addOption(new Option('--warmup <seconds>', 'HTTP: unrecorded warm-up seconds before each measurement').argParser(nonNegative).default(2))
    .addOption(new Option('--connections <n>', 'HTTP: autocannon connections').argParser(positive).default(10))
    .addOption(new Option('--seed-concurrency <n>', 'HTTP: POSTs in flight while seeding').argParser(positive).default(16))
    .addOption(new Option('--threshold <x>', 'HTTP: search threshold (similarity 0..1; 0 scores every memory)').argParser(unitInterval).default(0))
    .addOption(new Option('--scan-sizes <list>', 'scan: rows in the matrix').argParser(counts).default([10_000, 100_000], '10000,100000'))
    .addOption(new Option('--dims <list>', 'scan: vector dimensions').argParser(counts).default([512, 1536], '512,1536'))
    .addOption(new Option('--queries <n>', 'scan: measured queries per case (after 5 warm-up queries)').argParser(positive).default(50))
    .addOption(new Option('--threads <n>', 'scan: worker threads of the pooled search').argParser(positive).default(Math.min(16, availableParallelism()), 'the cores available'))
    .addOption(new Option('--plot [file]', 'scan: also write an SVG chart of p50 latency against corpus size (Mnemo, sqlite-vec, plain loop)').preset('docs/bench-scan-latency.svg'))
    .option('--quick', 'fast smoke run: as --sizes 300 --duration 2 --warmup 1 --scan-sizes 10000 --dims 512 --queries 10 ' +
      '(options given explicitly still win)', false)
    .option('--write', 'also update the matching sections of BENCHMARKS.md (not with --quick)', false)
    .option('--file <path>', 'the markdown file --write updates', 'BENCHMARKS.md')
    .showHelpAfterError()
    .addHelpText('after', [
      '',
      'Examples:',
      '  npm run bench -- --quick                     smoke run of everything (about a minute)',
      '  npm run bench -- --only scan --dims 1536',
      '  npm run bench -- --only http --embedders hashing --sizes 1k,10k',
      '  npm run bench -- --write                     full run; updates BENCHMARKS.md',
      '  npm run bench -- --only scan --scan-sizes 10k,30k,100k --dims 512 --plot   scan suite and its chart (docs/bench-scan-latency.svg)',
      '',
    ].join('\n'))
    .action(async (opts: BenchOptions) => {
      if (opts.quick) {
        for (const [key, value] of Object.entries(QUICK)) {
          if (program.getOptionValueSource(key) === 'default') (opts as unknown as Record<string, unknown>)[key] = value;
        }
      }
      if (opts.quick && opts.write) program.error('--write records reference numbers; a --quick smoke run must not overwrite them');
      await run(opts, process.argv.slice(2));
    });
  return program;
}
