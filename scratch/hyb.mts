import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os'; import { join } from 'node:path';
import { loadConfig } from '/work/wt/retrieval/src/app/config.ts';
import { createContainer } from '/work/wt/retrieval/src/app/container.ts';
import { ALL_SCOPES } from '/work/wt/retrieval/src/core/api-keys/api-key.types.ts';
const set = JSON.parse(await readFile('/work/wt/retrieval/test/fixtures/paraphrase-set.json', 'utf8'));
const c = await createContainer(loadConfig({ MNEMO_DATA_DIR: await mkdtemp(join(tmpdir(), 'x-')), MNEMO_EMBEDDINGS: 'local', MNEMO_LOG_LEVEL: 'silent' }));
const { key } = await c.apiKeys.create({ tenantId: 't', userId: 'b', tier: 'enterprise', mode: 'live' });
const p = await c.apiKeys.authenticate(key); const scope = { tenantId: p.tenantId, mode: p.mode, workspace: 'default' };
const ids: string[] = []; for (const x of set.pairs) ids.push((await c.memories.create(scope, { ...p, scopes: new Set(ALL_SCOPES) }, { title: x.title, content: x.content })).id);
const ctx = { scope, userId: 'b', surface: 'b' };
const variants: Record<string, (q: string) => Promise<{ hits: { memory: { id: string } }[] }>> = {
  semantic: (q) => c.search.semantic(ctx, { query: q, threshold: 0, limit: 10, filter: {} }),
  keyword: (q) => c.search.keyword(ctx, { query: q, limit: 10, filter: {} }),
  'hyb rrf .7/.3': (q) => c.search.hybrid(ctx, { query: q, limit: 10, filter: {}, semanticWeight: .7, keywordWeight: .3, rerank: true }),
  'hyb sum .7/.3': (q) => c.search.hybrid(ctx, { query: q, limit: 10, filter: {}, semanticWeight: .7, keywordWeight: .3, rerank: false }),
  'hyb rrf .5/.5': (q) => c.search.hybrid(ctx, { query: q, limit: 10, filter: {}, semanticWeight: .5, keywordWeight: .5, rerank: true }),
};
for (const [name, f] of Object.entries(variants)) {
  let first = 0, top3 = 0, top10 = 0;
  for (let i = 0; i < set.pairs.length; i++) { const r = (await f(set.pairs[i].question)).hits.findIndex((h) => h.memory.id === ids[i]); if (r === 0) first++; if (r >= 0 && r < 3) top3++; if (r >= 0) top10++; }
  console.log(name.padEnd(16), 'first', first, 'top3', top3, 'top10', top10);
}
await c.close(); process.exit(0);
