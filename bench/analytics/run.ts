import { Command } from 'commander';
import { updateSections } from '../lib/benchmarks-file.ts';
import { describeMachine, loadAverage, machineLine } from '../lib/machine.ts';
import { log } from '../lib/progress.ts';
import { createEnterpriseKey, REPO_ROOT, startServer } from '../lib/server.ts';
import { fmt, median } from '../lib/stats.ts';
import { searchQueries } from '../lib/corpus.ts';
import { assertClean, measure, type LoadOptions, type LoadResult } from '../http/load.ts';
import { processCpuSeconds } from '../lib/process-cpu.ts';
import { seedCorpus } from '../http/seed.ts';

/**
 * `npm run bench:analytics`: the cost of measuring every request (G7 analytics, MNEMO_ANALYTICS) on G1 create and
 * search throughput. The server runs with measurement on and off in alternation (on, off, off, on, …) so that drift
 * of the machine falls on both alike; each round seeds its own corpus. Medians per mode, and their ratio.
 */
const program = new Command('bench:analytics')
  .description('G1 create and search throughput with request measurement on and off, alternating, side by side in one run')
  .option('--rounds <n>', 'rounds per mode (alternating)', '3')
  .option('--memories <n>', 'memories seeded before the search runs', '1000')
  .option('--duration <s>', 'measured seconds per run', '8')
  .option('--warmup <s>', 'warm-up seconds per run', '2')
  .option('--connections <n>', 'autocannon connections', '10')
  .option('--write', 'update the "Cost of measuring" section of BENCHMARKS.md')
  .parse();
const o = program.opts<{ rounds: string; memories: string; duration: string; warmup: string; connections: string; write?: boolean }>();

type Mode = 'on' | 'off';
/** A measured run, and the server's CPU milliseconds per request during it (user + system, every thread). */
type Run = LoadResult & { cpuMsPerRequest: number };
const results: Record<Mode, { create: Run[]; search: Run[] }> = { on: { create: [], search: [] }, off: { create: [], search: [] } };

/** A warm-up run, then the measured run with the server's CPU time read around it (not around the warm-up). */
async function measureWithCpu(pid: number, options: LoadOptions): Promise<Run> {
  if (options.warmupSeconds > 0) assertClean(options.label, await measure({ ...options, label: `${options.label} (warm-up)`, durationSeconds: options.warmupSeconds, warmupSeconds: 0 }), 'warm-up');
  const before = await processCpuSeconds(pid);
  const run = await measure({ ...options, warmupSeconds: 0 });
  const cpuSeconds = (await processCpuSeconds(pid)) - before;
  assertClean(options.label, run);
  return { ...run, cpuMsPerRequest: (cpuSeconds * 1000) / run.requests };
}
const started = Date.now();
const loadAtStart = loadAverage();
const queries = searchQueries(7, 200);
for (let round = 0; round < Number(o.rounds); round++) {
  // ABBA order (on, off, off, on, …): a drift of the machine over the run falls on both modes alike.
  for (const mode of round % 2 === 0 ? ['on', 'off'] as const : ['off', 'on'] as const) {
    log(`round ${round + 1}, analytics ${mode}`);
    const env = { MNEMO_ANALYTICS: mode, MNEMO_SQLITE_SYNCHRONOUS: 'full' };
    const server = await startServer('hashing', { env });
    try {
      const key = await createEnterpriseKey(server, 'hashing', env);
      await seedCorpus(server.url, key, Number(o.memories), { concurrency: 16, seed: 42 + round, label: `seed ${mode}` });
      const common = { baseUrl: server.url, apiKey: key, connections: Number(o.connections), durationSeconds: Number(o.duration), warmupSeconds: Number(o.warmup) };
      let n = 0;
      const search = await measureWithCpu(server.pid, { ...common, label: `search ${mode}`, path: '/api/v1/memories/search', nextBody: () => JSON.stringify({ query: queries[n++ % queries.length], limit: 10, threshold: 0 }) });
      const create = await measureWithCpu(server.pid, { ...common, label: `create ${mode}`, path: '/api/v1/memories', nextBody: () => JSON.stringify({ title: `bench ${n}`, content: `measured write number ${n++} of the analytics benchmark` }) });
      results[mode].search.push(search);
      results[mode].create.push(create);
      await server.stop();
    } finally {
      await server.dispose();
    }
  }
}

const med = (rs: Run[], f: (r: Run) => number) => median(rs.map(f));
const change = (off: number, on: number) => `${on >= off ? '+' : ''}${fmt(((on - off) / off) * 100, 1)} %`;
const rows = (['create', 'search'] as const).map((op) => {
  const on = med(results.on[op], (r) => r.perSecond);
  const off = med(results.off[op], (r) => r.perSecond);
  const cpuOn = med(results.on[op], (r) => r.cpuMsPerRequest);
  const cpuOff = med(results.off[op], (r) => r.cpuMsPerRequest);
  return `| G1 ${op} | ${fmt(off, 0)} | ${fmt(on, 0)} | ${change(off, on)} | ${fmt(cpuOff, 3)} | ${fmt(cpuOn, 3)} | ${change(cpuOff, cpuOn)} | ` +
    `${fmt(med(results.off[op], (r) => r.p50Ms))} | ${fmt(med(results.on[op], (r) => r.p50Ms))} |`;
});
const body = [
  `- Command: \`npm run bench:analytics -- ${process.argv.slice(2).join(' ')}\``.replace(' -- `', '`'),
  `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (suite took ${Math.round((Date.now() - started) / 1000)} s)`,
  `- Machine: ${machineLine(describeMachine())}`,
  `- 1-minute load average: ${loadAtStart.toFixed(1)} when the suite started, ${loadAverage().toFixed(1)} when it ended`,
  '',
  `${o.rounds} rounds per mode, alternating (on, off, off, on, …), a fresh server and data directory per round (hashing embedder, ` +
  `${Number(o.memories).toLocaleString('en')} memories seeded, \`MNEMO_SQLITE_SYNCHRONOUS=full\`); autocannon, ${o.connections} connections, ` +
  `${o.duration} s measured after ${o.warmup} s of warm-up per operation. Medians of the rounds.`,
  '',
  'Server CPU per request: the server process\'s user + system CPU time (every thread, from `/proc/<pid>/stat`) during the ' +
  'measured run, divided by the requests answered. It moves much less than throughput with other load on the machine.',
  '',
  '| operation | req/s, analytics off | req/s, analytics on | difference | server CPU ms/request off | on | difference | p50 ms off | p50 ms on |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows,
  '',
  'Each round, the same figures (the spread between rounds is the noise the medians sit in):',
  '',
  '| round | create req/s off | on | difference | search req/s off | on | difference | create CPU ms off | on | search CPU ms off | on |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.on.create.map((_, i) => {
    const [cOn, cOff, sOn, sOff] = [results.on.create[i]!, results.off.create[i]!, results.on.search[i]!, results.off.search[i]!];
    return `| ${i + 1} | ${fmt(cOff.perSecond, 0)} | ${fmt(cOn.perSecond, 0)} | ${change(cOff.perSecond, cOn.perSecond)} | ` +
      `${fmt(sOff.perSecond, 0)} | ${fmt(sOn.perSecond, 0)} | ${change(sOff.perSecond, sOn.perSecond)} | ` +
      `${fmt(cOff.cpuMsPerRequest, 3)} | ${fmt(cOn.cpuMsPerRequest, 3)} | ${fmt(sOff.cpuMsPerRequest, 3)} | ${fmt(sOn.cpuMsPerRequest, 3)} |`;
  }),
].join('\n');
process.stdout.write(`${body}\n`);
if (o.write) await updateSections(`${REPO_ROOT}BENCHMARKS.md`, [{ id: 'analytics', title: 'Cost of measuring: G1 with request analytics on and off', body }]);
