import { tmpdir } from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import { REPO_ROOT } from '../lib/server.ts';
import { durabilityTables, fileSystemOf, runDurabilitySuite } from './suite.ts';

/**
 * `npm run bench:durability`: what `MNEMO_SQLITE_SYNCHRONOUS=full` (the default: an acknowledged write survives
 * power loss) costs against `normal`, side by side in one run: repository inserts, then G1 creates over HTTP.
 */
function whole(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`use a whole number >= ${min}`);
    return n;
  };
}

const program = new Command('npm run bench:durability --')
  .description('SQLite durability settings side by side: MNEMO_SQLITE_SYNCHRONOUS=full (default) against normal.\n' +
    'Markdown results go to stdout; progress goes to stderr.')
  .addOption(new Option('--inserts <n>', 'repository: inserts per setting per round').argParser(whole(1)).default(500))
  .addOption(new Option('--rounds <n>', 'repository: rounds, alternating which setting goes first').argParser(whole(1)).default(4))
  .addOption(new Option('--http-seconds <s>', 'HTTP: measured seconds per setting and connection count (0 skips HTTP)').argParser(whole(0)).default(8))
  .addOption(new Option('--warmup <s>', 'HTTP: unrecorded warm-up seconds before each measurement').argParser(whole(0)).default(2))
  .addOption(new Option('--connections <n>', 'HTTP: connections for the concurrent run').argParser(whole(1)).default(10))
  .addOption(new Option('--dir <path>', 'where the databases live (the file system decides what fsync costs)').default(tmpdir(), 'the OS temp dir'))
  .option('--quick', 'a smoke run: 100 inserts x 2 rounds, 2 s of HTTP')
  .option('--write', 'update the "SQLite durability" section of BENCHMARKS.md')
  .showHelpAfterError()
  .parse();

const o = program.opts<{ inserts: number; rounds: number; httpSeconds: number; warmup: number; connections: number; dir: string; quick?: boolean; write?: boolean }>();
const options = {
  dir: o.dir,
  inserts: o.quick ? 100 : o.inserts,
  rounds: o.quick ? 2 : o.rounds,
  httpSeconds: o.quick ? 2 : o.httpSeconds,
  warmupSeconds: o.quick ? 1 : o.warmup,
  connections: o.connections,
};
const machine = describeMachine();
const command = `npm run bench:durability -- ${process.argv.slice(2).join(' ')}`.trim();
log(`mnemo bench:durability: ${command}\n${machineLine(machine)}`);
const started = new Date();
const loadAtStart = loadAverage();
const fileSystem = await fileSystemOf(options.dir);
const result = await runDurabilitySuite(options);
const body = [
  `- Command: \`${command}\``,
  `- Date: ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started.getTime()) / 1000)} s)`,
  `- Machine: ${machineLine(machine)}`,
  `- Databases on: ${fileSystem}`,
  `- 1-minute load average: ${loadAtStart.toFixed(1)} when the suite started, ${loadAverage().toFixed(1)} when it ended`,
  '',
  `${options.rounds} rounds × ${options.inserts} inserts per setting` +
    (options.httpSeconds > 0 ? `; HTTP: ${options.httpSeconds} s measured per run after ${options.warmupSeconds} s of warm-up, 1 and ${options.connections} connections.` : '.'),
  '',
  durabilityTables(result),
].join('\n');
process.stdout.write(`${body}\n`);
if (o.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'durability', title: 'SQLite durability (MNEMO_SQLITE_SYNCHRONOUS)', body }]);
