import { readFileSync } from 'node:fs';
import { cosine } from '/work/wt/retrieval/src/core/embeddings/vectors.ts';
import { keywordTerms, wordsOf } from '/work/wt/retrieval/src/core/search/query-terms.ts';
const d = JSON.parse(readFileSync('/work/wt/retrieval/test/fixtures/paraphrase-set.json', 'utf8'));
const V = JSON.parse(readFileSync('/tmp/retr/vecs.json', 'utf8'));
const stem = (w: string) => w.replace(/(ing|ed|es|s)$/,'');
const docs: Set<string>[] = d.pairs.map((p: any) => new Set(wordsOf(`${p.title} ${p.content}`).map(stem)));
const N = docs.length;
const idf = (t: string) => { const n = docs.filter((s) => s.has(t)).length; return Math.max(1e-6, Math.log((N - n + 0.5) / (n + 0.5))); };
function cov(q: string, j: number) { const ts = keywordTerms(q).map(stem); let tot = 0, got = 0; for (const t of ts) { const w = idf(t); tot += w; if (docs[j]!.has(t)) got += w; } return tot > 0 ? got / tot : 0; }
const M = V.mv;
function evalW(w: number, idx: number[], uidx: number[]) {
  const rows = idx.map((i) => { const z = M.map((m: number[], j: number) => cosine(V.qv[i], m) + w * cov(d.pairs[i].question, j)); return { i, z }; });
  const urows = uidx.map((u) => Math.max(...M.map((m: number[], j: number) => cosine(V.uv[u], m) + w * cov(d.unrelated[u], j))));
  let first = 0, top3 = 0; const right: number[] = [];
  for (const { i, z } of rows) { const order = z.map((x: number, j: number) => [x, j]).sort((a: number[], b: number[]) => b[0]! - a[0]!); const r = order.findIndex(([, j]: number[]) => j === i); if (r === 0) first++; if (r < 3) top3++; right.push(z[i]); }
  return { first: first / idx.length, top3: top3 / idx.length, right, urows };
}
const all = d.pairs.map((_: any, i: number) => i); const uall = d.unrelated.map((_: any, i: number) => i);
for (const w of [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7]) {
  const r = evalW(w, all, uall);
  // best threshold: maximize (#right first with z>=t) subject to unrelated below t >= 80%
  const us = [...r.urows].sort((a, b) => a - b); const t = us[Math.ceil(0.8 * us.length) - 1]! + 1e-9; // 80% strictly below-or-equal
  const aboveRight = r.right.filter((x) => x > t).length / r.right.length;
  console.log(`w=${w} first ${(r.first*100).toFixed(1)} top3 ${(r.top3*100).toFixed(1)} t80=${t.toFixed(3)} right>t ${(aboveRight*100).toFixed(1)} unrelMax p50 ${us[15]!.toFixed(3)}`);
}
