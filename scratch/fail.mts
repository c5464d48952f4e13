import { readFileSync } from 'node:fs';
import { cosine } from '/work/wt/retrieval/src/core/embeddings/vectors.ts';
const d = JSON.parse(readFileSync('/work/wt/retrieval/test/fixtures/paraphrase-set.json', 'utf8'));
const V = JSON.parse(readFileSync('/tmp/retr/vecs.json', 'utf8'));
d.pairs.forEach((p: any, i: number) => {
  const s = V.mv.map((m: number[]) => cosine(V.qv[i], m)); const order = s.map((x: number, j: number) => [x, j]).sort((a: number[], b: number[]) => b[0]! - a[0]!);
  const r = order.findIndex(([, j]: number[]) => j === i);
  if (r > 0) console.log(r + 1, s[i].toFixed(3), p.question, '=>', d.pairs[order[0]![1]].content.slice(0, 60), order[0]![0].toFixed(3));
});
