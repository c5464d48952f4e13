/**
 * `npm run bench:keyword`: hybrid search's two legs at the store, side by side on one SQLite corpus (seeded straight
 * into the file, hashing embedder): the semantic leg (worker-thread scan), the keyword leg with the default
 * candidate cap and uncapped (every match scored, as before the cap), both after the store's posting lists hold the
 * queries' words (steady state); the keyword ranking as on a scope's first search of those words (lists read from
 * the index, on a second connection whose lists start empty every query); and both legs run concurrently as hybrid
 * runs them. Per query the variants run one after the other, in a rotating order; medians over the queries.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { keywordTerms } from '../../src/core/search/query-terms.ts';
import { KEYWORD_CANDIDATES_PER_TERM } from '../../src/core/memories/memory.types.ts';
import { searchQueries } from '../lib/corpus.ts';
import { seedStoreDirectly } from '../lib/seed-store.ts';
import { openSqlite } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { SqliteKeywordLengths } from '../../src/adapters/storage/sqlite/sqlite-keyword-lengths.ts';
import { SqliteKeywordRanking } from '../../src/adapters/storage/sqlite/sqlite-keyword-ranking.ts';
import { fmt, median } from '../lib/stats.ts';

const opts = new Command('bench:keyword')
  .option('--sizes <list>', 'memories in the one workspace', '10000,100000')
  .option('--queries <n>', 'measured queries per size (after 5 warm-up queries)', '40')
  .option('--threads <n>', 'search worker threads of the store', '2')
  .parse().opts<{ sizes: string; queries: string; threads: string }>();
const dims = 512;
const modelId = `hashing:v1-${dims}`;
const scope = { tenantId: 'bench', mode: 'live' as const, workspace: 'default' };
const pool = 50; // hybrid's candidate pool for topK 10

console.log('| memories | semantic leg ms | keyword leg, capped ms | keyword leg, uncapped ms | keyword ranking, words read from the index ms | both legs concurrently (capped) ms | concurrent / semantic |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const size of opts.sizes.split(',').map(Number)) {
  const dir = mkdtempSync(join(tmpdir(), 'mnemo-keyword-leg-'));
  const storage = createSqliteStorage({ file: join(dir, 'mnemo.db'), synchronous: 'normal', searchThreads: Number(opts.threads) });
  try {
    await seedStoreDirectly(storage.memories, scope, { size, dims });
    const semantic = (v: Float32Array) => storage.memories.searchSimilar(scope, { vector: v, modelId, limit: pool, minCosine: -1, filter: {} });
    const keyword = (q: string, cap?: number) => storage.memories.searchKeyword(scope, { terms: keywordTerms(q), limit: pool, filter: {}, candidatesPerTerm: cap });
    // A second connection whose rankings start with no posting list (its scope lengths stay loaded, as the server's).
    const second = openSqlite(join(dir, 'mnemo.db'), { synchronous: 'normal' });
    const secondLengths = new SqliteKeywordLengths(second);
    let coldRanking = new SqliteKeywordRanking(second, secondLengths);
    const nextCold = () => { coldRanking = new SqliteKeywordRanking(second, secondLengths); };
    const variants: Record<string, (q: string, v: Float32Array) => Promise<unknown>> = {
      semantic: (_, v) => semantic(v),
      capped: (q) => keyword(q),
      uncapped: (q) => keyword(q, Number.MAX_SAFE_INTEGER),
      cold: async (q) => coldRanking.rank(scope, keywordTerms(q), null, pool, KEYWORD_CANDIDATES_PER_TERM),
      both: (q, v) => Promise.all([semantic(v), keyword(q)]),
    };
    const names = Object.keys(variants);
    const ms = new Map(names.map((n) => [n, [] as number[]]));
    const queries = searchQueries(7, 200);
    const total = 5 + Number(opts.queries);
    // Steady state: every query's words searched once, so the store holds their posting lists (as a server does for
    // the words it is asked about); the "read from the index" variant shows a scope's first search of them.
    for (let i = 0; i < total; i++) await keyword(queries[i % queries.length]!);
    for (let i = 0; i < total; i++) {
      const q = queries[i % queries.length]!;
      const v = hashEmbed(q, dims);
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length]!;
        if (name === 'cold') nextCold();
        const started = performance.now();
        await variants[name]!(q, v);
        if (i >= 5) ms.get(name)!.push(performance.now() - started);
      }
    }
    const m = (n: string) => median(ms.get(n)!);
    console.log(`| ${size.toLocaleString('en')} | ${fmt(m('semantic'))} | ${fmt(m('capped'))} | ${fmt(m('uncapped'))} | ${fmt(m('cold'))} | ${fmt(m('both'))} | ${fmt(m('both') / m('semantic'), 2)} |`);
    second.close();
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(`\nCandidate cap ${KEYWORD_CANDIDATES_PER_TERM} per query word; pool ${pool} per leg; ${opts.threads} scan threads.`);
