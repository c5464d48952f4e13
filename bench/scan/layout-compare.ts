/**
 * The vector scan against a previous version of itself, in one process on the same rows: `npx tsx
 * bench/scan/layout-compare.ts <rows> <queries> <dir>`, where <dir> is an earlier `vector-scan/` directory restored
 * beside the current one (its imports of `../sqlite-stored-vectors.ts` must resolve), e.g.
 * `mkdir -p src/adapters/storage/sqlite/vector-scan-prev && git archive <commit> src/adapters/storage/sqlite/vector-scan |
 * tar -x --strip-components=5 -C src/adapters/storage/sqlite/vector-scan-prev`. Rows: the hashing vectors (512 dims) of
 * the bench corpus (bench/lib/corpus.ts, as bench:engine seeds it), cached in the temp directory; queries: its search
 * queries (DENSE=1: stored rows plus noise, dense). Per query, alternately first: the search in 2 scan threads (wall
 * time) and in this thread (CPU time, which a loaded machine does not distort), limit 10 at threshold 0 (every row
 * counted), the answers compared with each other and with a plain exact scan (recall@10).
 */
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { memoryGenerator, searchQueries } from '../lib/corpus.ts';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { ScanPool } from '../../src/adapters/storage/sqlite/vector-scan/scan-pool.ts';
import { normaliseInto, plainTopK } from './baseline.ts';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [sizeArg, queriesArg, previousDir] = process.argv.slice(2);
if (!previousDir) throw new Error('usage: layout-compare.ts <rows> <queries> <previous vector-scan directory>');
const N = Number(sizeArg), D = 512, Q = Number(queriesArg);
const previous = resolve(previousDir);
const { VectorMatrix: OldMatrix } = await import(pathToFileURL(join(previous, 'vector-matrix.ts')).href) as { VectorMatrix: typeof VectorMatrix };
const { ScanPool: OldPool } = await import(pathToFileURL(join(previous, 'scan-pool.ts')).href) as { ScanPool: typeof ScanPool };
const gen = memoryGenerator(42);
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
const X = new Float32Array(N * D);
const t0 = performance.now();
const cacheFile = join(tmpdir(), `mnemo-layout-compare-${N}x${D}.bin`);
if (existsSync(cacheFile)) { const buf = readFileSync(cacheFile); new Uint8Array(X.buffer).set(buf); }
else {
  for (let r = 0; r < N; r++) { const b = gen(); normaliseInto(hashEmbed(`${b.title}\n\n${b.content}`, D), X, r * D); }
  writeFileSync(cacheFile, new Uint8Array(X.buffer));
}
console.log(`generated ${N} in ${((performance.now() - t0) / 1000).toFixed(0)} s, load ${loadavg()[0]!.toFixed(1)}`);
const source = { read: (key: number) => X.subarray(key * D, key * D + D) };
const fresh = new VectorMatrix(D, N, source);
const old = new OldMatrix(D, N, source);
for (let r = 0; r < N; r++) { const v = X.subarray(r * D, r * D + D); fresh.upsert(r, v); old.upsert(r, v); }
const pool = new ScanPool({ threads: 2 });
const oldPool = new OldPool({ threads: 2 });
const queries = searchQueries(7, 200);
const nt: number[] = [], ot: number[] = [], rec: number[] = [], same: number[] = [], nc: number[] = [], oc: number[] = [];
const cpu = (f: () => unknown) => { const s = process.cpuUsage(); f(); const d = process.cpuUsage(s); return (d.user + d.system) / 1000; };
let nnz = 0;
for (let i = 0; i < Q + 5; i++) {
  const q = process.env.DENSE ? Float32Array.from(X.subarray((i * 7919 % N) * D, (i * 7919 % N) * D + D), (x, j) => x + ((j * 7 + i) % 5 - 2) * 0.02) : hashEmbed(queries[i % queries.length]!, D);
  for (let j = 0; j < D; j++) if (q[j] !== 0) nnz++;
  const runNew = async () => { const s = performance.now(); const r = await fresh.searchIn(pool, q, 10, -1); return { r, ms: performance.now() - s }; };
  const runOld = async () => { const s = performance.now(); const r = await old.searchIn(oldPool, q, 10, -1); return { r, ms: performance.now() - s }; };
  let a, b;
  if (i % 2 === 0) { a = await runNew(); b = await runOld(); } else { b = await runOld(); a = await runNew(); }
  // CPU time of the whole search in this thread (no pool): what scheduling under load does not distort.
  const cn = i % 2 === 0 ? cpu(() => fresh.search(q, 10, -1)) : 0;
  const co = cpu(() => old.search(q, 10, -1));
  const cn2 = i % 2 === 1 ? cpu(() => fresh.search(q, 10, -1)) : cn;
  const exact = plainTopK(X, N, D, q, 10);
  const truth = new Set(exact.rows);
  if (i >= 5) {
    nt.push(a.ms); ot.push(b.ms); nc.push(cn2); oc.push(co);
    rec.push(a.r.hits.filter((h) => truth.has(h.key)).length / 10);
    same.push(JSON.stringify(a.r) === JSON.stringify(b.r) ? 1 : 0);
    if (a.r.total !== b.r.total) console.log('total differs', a.r.total, b.r.total);
  }
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1]!;
console.log(`N=${N} queries=${Q} mean query nnz dims=${(nnz / (Q + 5)).toFixed(0)} load=${loadavg()[0]!.toFixed(1)}`);
console.log(`new p50 ${med(nt).toFixed(2)} ms, old p50 ${med(ot).toFixed(2)} ms, per-query ratio median ${med(nt.map((x, i) => x / ot[i]!)).toFixed(3)}`);
console.log(`in-thread CPU ms per search: new p50 ${med(nc).toFixed(2)}, old p50 ${med(oc).toFixed(2)}, per-query ratio median ${med(nc.map((x, i) => x / oc[i]!)).toFixed(3)}`);
console.log(`recall@10 vs plain scan mean ${(rec.reduce((p, q) => p + q, 0) / rec.length).toFixed(3)} min ${Math.min(...rec)}; identical answers new vs old ${same.reduce((p, q) => p + q, 0)}/${same.length}`);
console.log(`matrix bytes new ${(fresh.bytes / 2 ** 20).toFixed(0)} MiB old ${(old.bytes / 2 ** 20).toFixed(0)} MiB; floats ${(N * D * 4 / 2 ** 20).toFixed(0)} MiB`);
await pool.close(); await oldPool.close();
