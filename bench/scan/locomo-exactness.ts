/**
 * `npx tsx bench/scan/locomo-exactness.ts [--data FILE]`: Mnemo's int8 pre-scan + exact re-rank against a plain float
 * scan on vectors of real text: every LoCoMo turn (all conversations in one workspace) and every question, embedded
 * with the hashing embedder at 512 and 1536 dims. Reports recall@10 and identical rankings (ids, order, total) with
 * no threshold and at the spec's default threshold (similarity 0.7, cosine 0.4). LoCoMo (CC BY-NC 4.0, evaluation
 * only) is read at run time from outside the repository; nothing of it is written anywhere.
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { REPO_ROOT } from '../lib/server.ts';
import { loadLocomo } from '../quality/locomo.ts';
import { normaliseInto } from './baseline.ts';
import { exactScore } from '../../src/adapters/storage/sqlite/vector-scan/exact-score.ts';

const opts = new Command('locomo-exactness').option('--data <file>', 'locomo10.json', resolve(REPO_ROOT, '../shared/data/locomo10.json')).parse().opts<{ data: string }>();
const conversations = await loadLocomo(opts.data);
const turns = conversations.flatMap((c) => c.turns.map((t) => t.text));
const questions = conversations.flatMap((c) => c.questions.map((q) => q.question));
const pool = new ScanPool({ threads: 2, inlineBelow: 0 });
const lines: string[] = [];
for (const dims of [512, 1536]) {
  const matrix = new VectorMatrix(dims, turns.length);
  const plain = new Float32Array(turns.length * dims);
  turns.forEach((text, row) => { const v = hashEmbed(text, dims); matrix.upsert(row, v); normaliseInto(v, plain, row * dims); });
  for (const minCosine of [-1, 0.4]) {
    let identical = 0;
    let recallSum = 0;
    let asked = 0;
    for (const question of questions) {
      const qv = hashEmbed(question, dims);
      if (qv.every((x) => x === 0)) continue;
      asked++;
      const q = new Float32Array(dims);
      normaliseInto(qv, q);
      const scored: { key: number; s: number }[] = [];
      for (let row = 0; row < turns.length; row++) {
        const s = exactScore(plain, row * dims, q, dims);
        if (s >= minCosine) scored.push({ key: row, s });
      }
      scored.sort((a, b) => b.s - a.s || a.key - b.key);
      const expected = scored.slice(0, 10).map((h) => h.key);
      const got = await matrix.searchIn(pool, qv, 10, minCosine);
      const ids = got.hits.map((h) => h.key);
      recallSum += expected.length === 0 ? 1 : expected.filter((id) => ids.includes(id)).length / expected.length;
      if (got.total === scored.length && ids.length === expected.length && ids.every((id, i) => id === expected[i])) identical++;
    }
    lines.push(`| ${turns.length.toLocaleString('en')} | ${dims} | ${minCosine === -1 ? 'none' : 'cosine 0.4'} | ${asked} | ${(recallSum / asked).toFixed(4)} | ${identical}/${asked} |`);
  }
}
await pool.close();
process.stdout.write([
  '| LoCoMo turns (one workspace) | dims | threshold | questions | recall@10 | identical ranking and total |',
  '| ---: | ---: | --- | ---: | ---: | ---: |',
  ...lines,
].join('\n') + '\n');
