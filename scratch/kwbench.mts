import { mkdtemp, mkdir } from 'node:fs/promises'; import { existsSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { loadConfig } from '/work/wt/retrieval/src/app/config.ts';
import { createContainer } from '/work/wt/retrieval/src/app/container.ts';
import { ALL_SCOPES } from '/work/wt/retrieval/src/core/api-keys/api-key.types.ts';
import { memoryGenerator, searchQueries } from '/work/wt/retrieval/bench/lib/corpus.ts';
const N = Number(process.argv[2] ?? 10000);
const dir = `/tmp/retr/kw-${N}`; const fresh = !existsSync(dir); await mkdir(dir, { recursive: true });
const c = await createContainer(loadConfig({ MNEMO_DATA_DIR: dir, MNEMO_EMBEDDINGS: 'hashing', MNEMO_LOG_LEVEL: 'silent' }));
const p = { tenantId: 't', mode: 'live' as const, keyId: 'k', userId: 'b', tier: 'enterprise' as const, expiresAt: null }; const scope = { tenantId: p.tenantId, mode: p.mode, workspace: 'default' };
const actor = { ...p, scopes: new Set(ALL_SCOPES) }; const gen = memoryGenerator(42);
const t0 = performance.now();
if (fresh) for (let i = 0; i < N; i += 64) await Promise.all(Array.from({ length: Math.min(64, N - i) }, () => { const m = gen(); return c.memories.create(scope, actor, { title: m.title, content: m.content, tags: m.tags }); }));
console.error('seeded', N, ((performance.now() - t0) / 1000).toFixed(1), 's');
const qs = searchQueries(7, 60); const ctx = { scope, userId: 'b', surface: 'b' };
const sem: number[] = [], hyb: number[] = [], kwt: number[] = []; let kr = 0;
for (let r = 0; r < 2; r++) for (const q of qs) {
  let s = performance.now(); await c.search.semantic(ctx, { query: q, threshold: 0.7, limit: 10, filter: {} }); if (r) sem.push(performance.now() - s);
  s = performance.now(); const h = await c.search.hybrid(ctx, { query: q, limit: 10, filter: {}, semanticWeight: .7, keywordWeight: .3, rerank: true }); if (r) { hyb.push(performance.now() - s); kr += h.keywordResults; }
  s = performance.now(); await c.search.keyword(ctx, { query: q, limit: 50, filter: {} }); if (r) kwt.push(performance.now() - s);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(`N=${N} semantic p50 ${med(sem).toFixed(2)} ms, hybrid ${med(hyb).toFixed(2)} ms, ratio ${(med(hyb) / med(sem)).toFixed(2)}, keyword(50) ${med(kwt).toFixed(2)} ms, mean keyword_results ${(kr / qs.length).toFixed(0)}; e.g. "${qs[0]}"`);
await c.close(); process.exit(0);
