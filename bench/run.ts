/**
 * `npm run bench`: the benchmark entry point. Suites live in bench/http (the real server over loopback, driven by
 * autocannon) and bench/scan (Mnemo's vector search against sqlite-vec and a plain loop, in process; `--plot` draws it);
 * `--help` lists the options.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { latencyChart } from './scan/chart.ts';
import { httpTables, runHttpSuite } from './http/suite.ts';
import { updateSections, type Section } from './lib/benchmarks-file.ts';
import { describeMachine, loadAverage, machineLine } from './lib/machine.ts';
import { log } from './lib/progress.ts';
import { REPO_ROOT } from './lib/server.ts';
import { buildProgram, type BenchOptions } from './options.ts';
import { runScanSuite, scanTable } from './scan/suite.ts';

const SCAN_WARMUP_QUERIES = 5;
const SCAN_TOP_K = 10;
const SCAN_CONCURRENCY = 8;
const SEARCH_LIMIT = 10;

async function run(o: BenchOptions, argv: string[]): Promise<void> {
  const machine = describeMachine();
  const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const meta = (startedAt: Date, seconds: number, loadAtStart: number) => [
    `- Command: \`${command}\``,
    `- Date: ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round(seconds)} s)`,
    `- Machine: ${machineLine(machine)}`,
    `- 1-minute load average: ${loadAtStart.toFixed(1)} when the suite started, ${loadAverage().toFixed(1)} when it ended`,
  ].join('\n');
  const sections: Section[] = [];
  const emit = (section: Section) => {
    sections.push(section);
    process.stdout.write(`## ${section.title}\n\n${section.body}\n\n`);
  };

  log(`mnemo bench: ${command}\n${machineLine(machine)}`);
  if (o.only.includes('http')) {
    const started = new Date();
    const load = loadAverage();
    const httpOptions = {
      embedders: o.embedders, sizes: o.sizes, connections: o.connections, durationSeconds: o.duration,
      warmupSeconds: o.warmup, seedConcurrency: o.seedConcurrency, searchLimit: SEARCH_LIMIT, searchThreshold: o.threshold,
    };
    const cases = await runHttpSuite(httpOptions);
    emit({
      id: 'http',
      title: 'HTTP: G1 over loopback (autocannon)',
      body: `${meta(started, (Date.now() - started.getTime()) / 1000, load)}\n\n${httpTables(cases, httpOptions)}`,
    });
  }
  if (o.only.includes('scan')) {
    const started = new Date();
    const load = loadAverage();
    const scanOptions = {
      sizes: o.scanSizes, dims: o.dims, queries: o.queries, warmupQueries: SCAN_WARMUP_QUERIES, k: SCAN_TOP_K,
      threads: o.threads, concurrency: SCAN_CONCURRENCY,
    };
    const cases = await runScanSuite(scanOptions);
    let plotNote = '';
    if (o.plot) {
      const file = resolve(REPO_ROOT, o.plot);
      await writeFile(file, await latencyChart(cases));
      plotNote = `\n\n![p50 latency against corpus size](${relative(dirname(resolve(REPO_ROOT, o.file)), file)})`;
      log(`wrote ${file}`);
    }
    emit({
      id: 'scan',
      title: 'Scan: exact vector search in process (Mnemo vs sqlite-vec vs a plain loop)',
      body: `${meta(started, (Date.now() - started.getTime()) / 1000, load)}\n\n${scanTable(cases, scanOptions)}${plotNote}`,
    });
  }
  if (o.write) {
    const file = resolve(REPO_ROOT, o.file);
    await updateSections(file, sections);
    log(`updated ${file}: ${sections.map((s) => s.id).join(', ')}`);
  }
}

try {
  await buildProgram(run).parseAsync(process.argv);
} catch (err) {
  log(`\nbench FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
