import { memoryGenerator, searchQueries } from '../lib/corpus.ts';
import { loadAverage } from '../lib/machine.ts';
import { table } from '../lib/markdown.ts';
import { log } from '../lib/progress.ts';
import { createEnterpriseKey, startServer, type EmbedderKind } from '../lib/server.ts';
import { compactCount, fmt } from '../lib/stats.ts';
import { postJson, MEMORIES_PATH, SEARCH_PATH } from './client.ts';
import { assertClean, measure, type LoadResult } from './load.ts';
import { seedCorpus, type SeedResult } from './seed.ts';

export interface HttpSuiteOptions {
  embedders: EmbedderKind[];
  sizes: number[];
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  seedConcurrency: number;
  /** Search body: threshold 0 on the 0..1 similarity scale keeps every memory a candidate, so results always exist. */
  searchLimit: number;
  searchThreshold: number;
}

export interface HttpCase {
  embedder: EmbedderKind;
  size: number;
  startupMs: number;
  seed: SeedResult;
  search: LoadResult;
  create: LoadResult;
  rssMiB: number | undefined;
  shutdownMs: number;
  /** 1-minute load average after the search and after the create measurement. */
  load: [number, number];
}

const SEED_CORPUS = 0x5eed;
const SEED_CREATE = 0xc0ffee;
const SEED_QUERIES = 0x9e77;
const CREATE_POOL = 5000;
const QUERY_POOL = 200;

export async function runHttpSuite(options: HttpSuiteOptions): Promise<HttpCase[]> {
  const cases: HttpCase[] = [];
  for (const embedder of options.embedders) {
    for (const size of options.sizes) cases.push(await runCase(embedder, size, options));
  }
  return cases;
}

async function runCase(embedder: EmbedderKind, size: number, o: HttpSuiteOptions): Promise<HttpCase> {
  const name = `${embedder} ${compactCount(size)}`;
  log(`\n== HTTP: ${embedder} embedder, ${size} memories ==`);
  const server = await startServer(embedder);
  try {
    log(`server ${server.url} up in ${(server.startupMs / 1000).toFixed(1)} s (pid ${server.pid})`);
    const apiKey = await createEnterpriseKey(server, embedder);

    const seed = await seedCorpus(server.url, apiKey, size, {
      concurrency: o.seedConcurrency, seed: SEED_CORPUS, label: `${name}: seed`,
    });
    log(`seeded ${size} memories in ${seed.seconds.toFixed(1)} s (${fmt(seed.perSecond)}/s)`);

    // Searches run before creates, so that they see exactly the seeded corpus.
    const queries = searchQueries(SEED_QUERIES, QUERY_POOL);
    const bodyOf = (query: string) => JSON.stringify({ query, limit: o.searchLimit, threshold: o.searchThreshold });
    await checkSearch(server.url, apiKey, queries.slice(0, 3).map(bodyOf), Math.min(o.searchLimit, size), size);
    let q = 0;
    const search = await measure({
      label: `${name}: search`, baseUrl: server.url, apiKey, path: SEARCH_PATH,
      nextBody: () => bodyOf(queries[q++ % queries.length]!),
      connections: o.connections, durationSeconds: o.durationSeconds, warmupSeconds: o.warmupSeconds,
    });
    assertClean(`${name} search`, search);
    const loadAfterSearch = loadAverage();

    const nextMemory = memoryGenerator(SEED_CREATE);
    const pool = Array.from({ length: CREATE_POOL }, () => JSON.stringify(nextMemory()));
    let c = 0;
    const create = await measure({
      label: `${name}: create`, baseUrl: server.url, apiKey, path: MEMORIES_PATH,
      nextBody: () => pool[c++ % pool.length]!,
      connections: o.connections, durationSeconds: o.durationSeconds, warmupSeconds: o.warmupSeconds,
    });
    assertClean(`${name} create`, create);
    const loadAfterCreate = loadAverage();

    const rssMiB = await server.rssMiB();
    const { shutdownMs } = await server.stop();
    log(`server stopped with code 0 in ${shutdownMs.toFixed(0)} ms after SIGTERM`);
    return {
      embedder, size, startupMs: server.startupMs, seed, search, create, rssMiB, shutdownMs, load: [loadAfterSearch, loadAfterCreate],
    };
  } finally {
    await server.dispose();
  }
}

/** A search must answer 200 with `limit` results and count the whole corpus (threshold 0 admits everything). */
async function checkSearch(baseUrl: string, apiKey: string, bodies: string[], expected: number, corpus: number): Promise<void> {
  for (const body of bodies) {
    const res = await postJson(baseUrl, SEARCH_PATH, apiKey, JSON.parse(body), 200) as {
      data?: { results?: unknown[]; total?: number };
    };
    const got = res.data?.results?.length;
    if (got !== expected || res.data?.total !== corpus) {
      throw new Error(`search ${body} returned ${got} results of total ${res.data?.total}; expected ${expected} of ${corpus}`);
    }
  }
}

export function httpTables(cases: readonly HttpCase[], o: HttpSuiteOptions): string {
  const rows: string[][] = [];
  for (const c of cases) {
    const size = compactCount(c.size);
    rows.push([c.embedder, size, `seed (POST, ${o.seedConcurrency} in flight)`, fmt(c.seed.perSecond, 1), fmt(c.seed.p50Ms), fmt(c.seed.p99Ms), '0']);
    rows.push([c.embedder, size, 'search (POST /search)', fmt(c.search.perSecond, 1), fmt(c.search.p50Ms), fmt(c.search.p99Ms), String(c.search.non2xx)]);
    rows.push([c.embedder, size, 'create (POST)', fmt(c.create.perSecond, 1), fmt(c.create.p50Ms), fmt(c.create.p99Ms), String(c.create.non2xx)]);
  }
  const main = table(['embedder', 'corpus', 'operation', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx'], rows, 'lllrrrr');
  const server = table(
    ['embedder', 'corpus', 'startup s', 'seed s', 'search requests', 'create requests', 'server RSS at end MiB', 'SIGTERM to exit ms', 'load avg (search / create)'],
    cases.map((c) => [
      c.embedder, compactCount(c.size), fmt(c.startupMs / 1000, 1), fmt(c.seed.seconds, 1), String(c.search.requests),
      String(c.create.requests), c.rssMiB === undefined ? 'n/a' : fmt(c.rssMiB, 0), fmt(c.shutdownMs, 0),
      `${c.load[0].toFixed(1)} / ${c.load[1].toFixed(1)}`,
    ]),
    'llrrrrrrr',
  );
  return [
    `Load: autocannon, ${o.connections} connections, ${o.durationSeconds} s measured after ${o.warmupSeconds} s of unrecorded warm-up, ` +
      `one request in flight per connection. Search bodies cycle through ${QUERY_POOL} distinct queries ` +
      `(\`limit\` ${o.searchLimit}, \`threshold\` ${o.searchThreshold}, so every memory is scored); create bodies cycle through ` +
      `${CREATE_POOL} generated memories. Searches run before creates, on exactly the seeded corpus. ` +
      'Latencies are per response, measured by autocannon\'s client, 2xx only; errors and timeouts were 0 in every run (the bench fails otherwise).',
    '',
    main,
    '',
    'Per server. The load average is the 1-minute figure read right after each measurement; the server, its embedding ' +
      'worker and the load generator account for about 2-3 of it, so values well above 3 mean other processes were ' +
      'competing for the CPUs during that measurement:',
    '',
    server,
  ].join('\n');
}
