import { searchQueries } from '../lib/corpus.ts';
import { log } from '../lib/progress.ts';
import { createEnterpriseKey, startServer, type EmbedderKind } from '../lib/server.ts';
import { startPglite, type PostgresHandle } from '../lib/postgres.ts';
import { fmt } from '../lib/stats.ts';
import { hnswRecall, type RecallResult } from './recall.ts';
import { assertClean, measure, type LoadResult } from '../http/load.ts';
import { seedCorpus } from '../http/seed.ts';

/**
 * Search latency of every search surface over HTTP, side by side on one corpus in one workspace: G1 semantic, G3
 * hybrid, G4 semantic (GET) and G4 vector search, each under the same autocannon load.
 */
export interface SearchSuiteOptions {
  /** Each embedder with its corpus size (the local model embeds ~14 memories/s here, so it gets a smaller one). */
  runs: { embedder: EmbedderKind; size: number }[];
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
  seedConcurrency: number;
  /** The stores to run each corpus on, one after the other (postgres: PGlite with pgvector in a child process). */
  stores: StoreKind[];
}

export type StoreKind = 'sqlite' | 'postgres';

export interface SearchRow { embedder: EmbedderKind; store: StoreKind; size: number; surface: string; result: LoadResult }
export interface RecallRow { embedder: EmbedderKind; size: number; recall: RecallResult }

export async function runSearchSuite(o: SearchSuiteOptions):
  Promise<{ rows: SearchRow[]; recalls: RecallRow[]; seedPerSecond: Record<string, number> }> {
  const rows: SearchRow[] = [];
  const recalls: RecallRow[] = [];
  const seedPerSecond: Record<string, number> = {};
  for (const { embedder, size } of o.runs) for (const store of o.stores) {
    const database: PostgresHandle | undefined = store === 'postgres' ? await startPglite() : undefined;
    const env = database?.env ?? {};
    const server = await startServer(embedder, { env }).catch(async (e: unknown) => { await database?.stop(); throw e; });
    try {
      const key = await createEnterpriseKey(server, embedder, env);
      const seeded = await seedCorpus(server.url, key, size, { concurrency: o.seedConcurrency, seed: 42, label: `seed ${embedder} ${store} ${size}` });
      seedPerSecond[`${embedder} ${store}`] = seeded.perSecond;
      const queries = searchQueries(7, 200);
      const bearer = { authorization: `Bearer ${key}` };
      // Query vectors for G4 vector search come from the service's own 1536-dimension embeddings endpoint.
      const vectors: string[] = [];
      const queryVectors: number[][] = [];
      for (const q of queries.slice(0, 50)) {
        const res = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ text: q }) });
        if (res.status !== 200) throw new Error(`POST /v1/embeddings answered ${res.status}`);
        const embedding = ((await res.json()) as { data: { embedding: number[] } }).data.embedding;
        queryVectors.push(embedding);
        vectors.push(JSON.stringify({ vector: embedding, limit: 10, similarity_threshold: 0 }));
      }
      let i = 0;
      const nextQuery = () => queries[i++ % queries.length]!;
      const cases: { surface: string; run: () => Promise<LoadResult> }[] = [
        { surface: 'G1 POST /api/v1/memories/search', run: () => measure({ ...common(), path: '/api/v1/memories/search', nextBody: () => JSON.stringify({ query: nextQuery(), limit: 10, threshold: 0 }) }) },
        { surface: 'G3 POST /api/v1/search/hybrid', run: () => measure({ ...common(), path: '/api/v1/search/hybrid', headers: bearer, nextBody: () => JSON.stringify({ query: nextQuery(), topK: 10 }) }) },
        { surface: 'G4 GET /v1/search', run: () => measure({ ...common(), method: 'GET', path: '/v1/search', headers: bearer, nextBody: () => '', nextPath: () => `/v1/search?q=${encodeURIComponent(nextQuery())}&limit=10&similarity_threshold=0` }) },
        { surface: 'G4 POST /v1/search/vector', run: () => measure({ ...common(), path: '/v1/search/vector', headers: bearer, nextBody: () => vectors[i++ % vectors.length]! }) },
      ];
      function common() {
        return { label: `${embedder} ${store}`, baseUrl: server.url, apiKey: key, connections: o.connections, durationSeconds: o.durationSeconds, warmupSeconds: o.warmupSeconds };
      }
      for (const c of cases) {
        log(`${embedder} ${store}: ${c.surface}`);
        const result = await c.run();
        assertClean(c.surface, result);
        rows.push({ embedder, store, size, surface: c.surface, result });
      }
      await server.stop();
      if (database) {
        log(`${embedder} postgres: HNSW recall@10 against the exact scan`);
        recalls.push({ embedder, size, recall: await hnswRecall(database.url, queryVectors.slice(0, 20)) });
      }
    } finally {
      await server.dispose();
      await database?.stop();
    }
  }
  return { rows, recalls, seedPerSecond };
}

export function searchTable(rows: SearchRow[]): string {
  const lines = ['| embedder | store | memories | surface | req/s | p50 ms | p99 ms | non-2xx |', '| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |'];
  for (const r of rows) lines.push(`| ${r.embedder} | ${r.store} | ${r.size.toLocaleString('en')} | ${r.surface} | ${fmt(r.result.perSecond, 0)} | ${fmt(r.result.p50Ms)} | ${fmt(r.result.p99Ms)} | ${r.result.non2xx} |`);
  return lines.join('\n');
}

export function recallTable(rows: RecallRow[]): string {
  const lines = ['| embedder | memories | queries | recall@10 mean | recall@10 min | exact scan median ms | HNSW median ms |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const { embedder, size, recall: r } of rows) {
    lines.push(`| ${embedder} | ${size.toLocaleString('en')} | ${r.queries} | ${fmt(r.meanRecall, 3)} | ${fmt(r.minRecall, 2)} | ${fmt(r.exactMedianMs)} | ${fmt(r.hnswMedianMs)} |`);
  }
  return lines.join('\n');
}
