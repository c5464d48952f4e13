/**
 * `npm run bench:search-during-ingest`: how long a G1 search takes while the bundled model embeds an ingest. A server
 * with the local model; first searches alone, then `--clients` clients create `--creates` memories while a search is
 * sent every 300 ms and `GET /health` every 20 ms. A search's query waits ahead of the writes' texts
 * (EmbedOptions.urgent), so what it waits for is the model call under way, not the ingest.
 */
import { Command } from 'commander';
import { MEMORIES_PATH, postJson, SEARCH_PATH, timedClient } from '../http/client.ts';
import { memoryGenerator, searchQueries } from '../lib/corpus.ts';
import { createEnterpriseKey, startServer } from '../lib/server.ts';
import { median, percentile } from '../lib/stats.ts';

const opts = new Command('bench:search-during-ingest')
  .option('--creates <n>', 'memories created during the measurement', '240')
  .option('--clients <n>', 'concurrent create clients', '6')
  .option('--runs <n>', 'measurements, each on a fresh server', '2')
  .parse().opts<{ creates: string; clients: string; runs: string }>();
const creates = Number(opts.creates);
const clients = Number(opts.clients);
const runs = Number(opts.runs);
for (const [name, value] of [['--creates', creates], ['--clients', clients], ['--runs', runs]] as const) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function measure(run: number) {
  const server = await startServer('local', { startTimeoutMs: 120_000 });
  try {
    const key = await createEnterpriseKey(server, 'local');
    const next = memoryGenerator(run);
    for (let i = 0; i < 20; i++) await postJson(server.url, MEMORIES_PATH, key, next(), 201);
    const queries = searchQueries(run, 50);
    const search = async (i: number) => {
      const started = performance.now();
      await postJson(server.url, SEARCH_PATH, key, { query: queries[i % queries.length], limit: 10, threshold: 0 }, 200);
      return performance.now() - started;
    };
    const idle: number[] = [];
    for (let i = 0; i < 10; i++) idle.push(await search(i));

    const healthClient = timedClient(server.url, key, 1);
    const health = async (): Promise<number> => {
      const r = await healthClient.call('GET', '/health');
      if (r.status !== 200) throw new Error(`/health answered ${r.status}`);
      return r.ms;
    };
    let done = false;
    const healthMs: number[] = [];
    const during: number[] = [];
    const polling = (async () => { while (!done) { healthMs.push(await health()); await sleep(20); } })();
    const searching = (async () => { for (let i = 10; !done; i++) { await sleep(300); during.push(await search(i)); } })();
    const started = performance.now();
    let left = creates;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (left-- > 0) await postJson(server.url, MEMORIES_PATH, key, next(), 201);
    }));
    const seconds = (performance.now() - started) / 1000;
    done = true;
    await Promise.all([polling, searching]);
    healthClient.close();
    return { idle, during, healthMs, createsPerSecond: creates / seconds };
  } finally {
    await server.stop();
  }
}

const ms = (value: number) => value.toFixed(value < 10 ? 1 : 0);
console.log(`G1 search (limit 10, threshold 0) with the local model, alone and while ${clients} clients create ${creates} memories ` +
  '(a search every 300 ms, GET /health every 20 ms), each run on a fresh server:');
console.log('');
console.log('| run | search alone p50 ms | during ingest: searches | p50 ms | p90 ms | max ms | creates/s | /health p99 ms |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (let run = 1; run <= runs; run++) {
  process.stderr.write(`run ${run}/${runs}\n`);
  const r = await measure(run);
  console.log(`| ${run} | ${ms(median(r.idle))} | ${r.during.length} | ${ms(median(r.during))} | ${ms(percentile(r.during, 90))} | ` +
    `${ms(Math.max(...r.during))} | ${r.createsPerSecond.toFixed(1)} | ${ms(percentile(r.healthMs, 99))} |`);
}
