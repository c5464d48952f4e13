/**
 * `npm run bench:keyword`: hybrid search's two legs at the store, side by side on one SQLite corpus (seeded straight
 * into the file, hashing embedder): the semantic leg (worker-thread scan), the keyword leg with the default
 * candidate cap and uncapped (every match scored, as before the cap), both after the store's posting lists hold the
 * queries' words (steady state); the keyword ranking as on a scope's first search of those words (lists read from
 * the index, on a second connection whose lists start empty every query); and both legs run concurrently as hybrid
 * runs them. Per query the variants run one after the other, in a rotating order; medians over the queries.
 *
 * With --database-url, the same for PostgreSQL's keyword leg on a database of its own on that server (dropped after):
 * the ranking in SQL (pg-keyword-ranking.ts, `vectorScan: 'database'`) against the node's in-memory keyword index
 * (pg-keyword-index.ts), with the index's cold load, the memory it holds, and the load's two possible reads
 * (keywords as tsvector text, parsed here; or unnest() rows) side by side.
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
import pg from 'pg';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { createPostgresStorage } from '../../src/adapters/storage/postgres/postgres.storage.ts';
import { PgKeywordIndex } from '../../src/adapters/storage/postgres/pg-keyword-index.ts';
import { rankKeywords } from '../../src/adapters/storage/postgres/pg-keyword-ranking.ts';
import { KeywordCorpus } from '../../src/adapters/storage/postgres/pg-keyword-corpus.ts';
import { createServerDatabase } from '../lib/postgres.ts';

const opts = new Command('bench:keyword')
  .option('--sizes <list>', 'memories in the one workspace', '10000,100000')
  .option('--queries <n>', 'measured queries per size (after 5 warm-up queries)', '40')
  .option('--threads <n>', 'search worker threads of the store', '2')
  .option('--database-url <url>', 'PostgreSQL instead of SQLite: a server with pgvector (a database is made and dropped)')
  .parse().opts<{ sizes: string; queries: string; threads: string; databaseUrl?: string }>();
const dims = 512;
const modelId = `hashing:v1-${dims}`;
const scope = { tenantId: 'bench', mode: 'live' as const, workspace: 'default' };
const pool = 50; // hybrid's candidate pool for topK 10

if (opts.databaseUrl) {
  await benchPostgres(opts.databaseUrl);
  process.exit(0);
}

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

/** PostgreSQL's keyword leg, in SQL and in the node's in-memory index, per size (see the header). */
async function benchPostgres(url: string): Promise<void> {
  console.log('| memories | keyword leg in SQL ms | keyword leg in memory ms | SQL / memory | its round trip alone ms | cold load ms | index bytes per memory | load read as text (+parse) ms | load read as unnest rows ms |');
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const size of opts.sizes.split(',').map(Number)) {
    const database = await createServerDatabase(url);
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const db = pgPoolExecutor(pool);
    try {
      const storage = await createPostgresStorage(db, { vectorScan: 'database' });
      await seedStoreDirectly(storage.memories, scope, { size, dims });
      await database.analyze();
      const where = `tenant_id = '${scope.tenantId}' AND mode = '${scope.mode}' AND workspace = '${scope.workspace}'`;
      // The load's two reads of the whole workspace, each with what the index would then do with its rows.
      let started = performance.now();
      {
        const asText = await pool.query<{ seq: string; keyword_length: number; keywords: string }>(
          `SELECT seq, keyword_length, keywords::text AS keywords FROM memories WHERE ${where} ORDER BY seq`);
        const parsed = new KeywordCorpus();
        for (const r of asText.rows) parsed.set(Number(r.seq), r.keyword_length, r.keywords);
      }
      const textMs = performance.now() - started;
      started = performance.now();
      await pool.query(`SELECT m.seq, k.lexeme, k.positions, k.weights FROM memories m, unnest(m.keywords) k WHERE ${where} ORDER BY m.seq`);
      const unnestMs = performance.now() - started;

      const index = new PgKeywordIndex(db);
      const queries = searchQueries(7, 200);
      started = performance.now();
      await index.rank(scope, keywordTerms(queries[0]!), {}, 50, KEYWORD_CANDIDATES_PER_TERM);
      const coldMs = performance.now() - started;

      const variants: Record<string, (q: string) => Promise<unknown>> = {
        sql: (q) => rankKeywords(db, scope, keywordTerms(q), {}, 50, KEYWORD_CANDIDATES_PER_TERM),
        memory: (q) => index.rank(scope, keywordTerms(q), {}, 50, KEYWORD_CANDIDATES_PER_TERM),
        // Stop words only: the catch-up statement (version, changes, tokens) and no ranking.
        trip: () => index.rank(scope, ['the'], {}, 50, KEYWORD_CANDIDATES_PER_TERM),
      };
      const names = Object.keys(variants);
      const ms = new Map(names.map((n) => [n, [] as number[]]));
      const total = 5 + Number(opts.queries);
      for (let i = 0; i < total; i++) {
        const q = queries[i % queries.length]!;
        for (let j = 0; j < names.length; j++) {
          const name = names[(i + j) % names.length]!;
          const t = performance.now();
          await variants[name]!(q);
          if (i >= 5) ms.get(name)!.push(performance.now() - t);
        }
      }
      const m = (n: string) => median(ms.get(n)!);
      console.log(`| ${size.toLocaleString('en')} | ${fmt(m('sql'))} | ${fmt(m('memory'))} | ${fmt(m('sql') / m('memory'), 1)} | ${fmt(m('trip'))} | ${fmt(coldMs)} | ${Math.round(index.approximateBytes() / size)} | ${fmt(textMs)} | ${fmt(unnestMs)} |`);
      index.close();
      await storage.close();
    } finally {
      await pool.end().catch(() => undefined);
      await database.stop();
    }
  }
  console.log(`\nCandidate cap ${KEYWORD_CANDIDATES_PER_TERM} per query word; limit 50; one client; ${await describeOnce(url)}.`);
}

async function describeOnce(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string }>('SELECT version() AS version');
    return rows[0]!.version.split(' on ')[0]!;
  } finally {
    await client.end();
  }
}
