import { readFileSync, writeFileSync } from 'node:fs';
import { createLocalEmbedder } from '/work/wt/retrieval/src/adapters/embeddings/local/local.embedder.ts';
import { cosine } from '/work/wt/retrieval/src/core/embeddings/vectors.ts';
const d = JSON.parse(readFileSync('/work/wt/retrieval/test/fixtures/paraphrase-set.json', 'utf8'));
const e = createLocalEmbedder();
await e.warmup();
const mems: string[] = d.pairs.map((p: any) => `${p.title}\n${p.content}`);
const memsC: string[] = d.pairs.map((p: any) => p.content);
const qs: string[] = d.pairs.map((p: any) => p.question);
const t0 = performance.now();
const mv = await e.embed(mems); const mvc = await e.embed(memsC); const qv = await e.embed(qs); const uv = await e.embed(d.unrelated);
console.error('embed s', (performance.now() - t0) / 1000);
writeFileSync('/tmp/retr/vecs.json', JSON.stringify({ mv: mv.map((v) => [...v]), mvc: mvc.map((v) => [...v]), qv: qv.map((v) => [...v]), uv: uv.map((v) => [...v]) }));
for (const [name, M] of [['title+content', mv], ['content', mvc]] as const) {
  let first = 0, top3 = 0; const right: number[] = []; const unrel: number[] = []; const wrongTop: number[] = [];
  qv.forEach((q, i) => {
    const s = M.map((m) => cosine(q, m)); const order = s.map((x, j) => [x, j]).sort((a, b) => b[0] - a[0]);
    const r = order.findIndex(([, j]) => j === i);
    if (r === 0) first++; if (r < 3) top3++; right.push(s[i]!);
    if (r !== 0) wrongTop.push(order[0]![0]);
  });
  uv.forEach((q) => unrel.push(Math.max(...M.map((m) => cosine(q, m)))));
  const q = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))]!.toFixed(3);
  console.log(name, 'first', first, 'top3', top3, 'right cos p5/p10/p50', q(right, .05), q(right, .1), q(right, .5), 'unrel max p50/p80/p90/max', q(unrel, .5), q(unrel, .8), q(unrel, .9), q(unrel, 1));
}
await (e as any).close?.();
process.exit(0);
