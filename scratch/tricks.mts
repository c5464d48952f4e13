import { readFileSync } from 'node:fs';
import { createLocalEmbedder } from '/work/wt/retrieval/src/adapters/embeddings/local/local.embedder.ts';
import { cosine } from '/work/wt/retrieval/src/core/embeddings/vectors.ts';
import { keywordTerms } from '/work/wt/retrieval/src/core/search/query-terms.ts';
const d = JSON.parse(readFileSync('/work/wt/retrieval/test/fixtures/paraphrase-set.json', 'utf8'));
const V = JSON.parse(readFileSync('/tmp/retr/vecs.json', 'utf8'));
const e = createLocalEmbedder(); await e.warmup();
const stripQ = (q: string) => keywordTerms(q).join(' ');
const qs2 = (await e.embed(d.pairs.map((p: any) => stripQ(p.question)))).map((v) => [...v]);
const us2 = (await e.embed(d.unrelated.map((q: string) => stripQ(q)))).map((v) => [...v]);
const mean = (vs: number[][]) => vs[0]!.map((_, k) => vs.reduce((s, v) => s + v[k]!, 0) / vs.length);
const sub = (a: number[], b: number[], f = 1) => a.map((x, k) => x - f * b[k]!);
function report(name: string, Q: number[][], U: number[][], M: number[][]) {
  let first = 0, top3 = 0; const right: number[] = [];
  Q.forEach((q, i) => { const s = M.map((m) => cosine(q, m)); const order = s.map((x, j) => [x, j]).sort((a, b) => b[0]! - a[0]!); const r = order.findIndex(([, j]) => j === i); if (r === 0) first++; if (r < 3) top3++; right.push(s[i]!); });
  const us = U.map((u) => Math.max(...M.map((m) => cosine(u, m)))).sort((a, b) => a - b); const t = us[Math.ceil(0.8 * us.length) - 1]!;
  console.log(name.padEnd(30), 'first', (first / Q.length * 100).toFixed(1), 'top3', (top3 / Q.length * 100).toFixed(1), 't80', t.toFixed(3), 'right>t', (right.filter((x) => x > t).length / right.length * 100).toFixed(1));
}
report('base', V.qv, V.uv, V.mv);
report('strip', qs2, us2, V.mv);
const avg = (a: number[][], b: number[][]) => a.map((v, i) => v.map((x, k) => x + b[i]![k]!));
report('avg(base,strip)', avg(V.qv, qs2), avg(V.uv, us2), V.mv);
// centering: mean from memories (corpus) and from questions+unrelated
const mu = mean(V.mv); const muq = mean([...V.qv, ...V.uv]);
for (const f of [0.5, 1]) report(`center mem f${f}`, V.qv.map((q: number[]) => sub(q, mu, f)), V.uv.map((q: number[]) => sub(q, mu, f)), V.mv.map((m: number[]) => sub(m, mu, f)));
report('center q by muq, m by mu', V.qv.map((q: number[]) => sub(q, muq)), V.uv.map((q: number[]) => sub(q, muq)), V.mv.map((m: number[]) => sub(m, mu)));
report('content only', V.qv, V.uv, V.mvc);
report('avg title/content', V.qv, V.uv, avg(V.mv, V.mvc));
process.exit(0);
