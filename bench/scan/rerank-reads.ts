/**
 * How many rows a search reads from the store (the rows the int8 pre-scan and its refinement cannot decide, scored
 * exactly from their float vectors) at several thresholds, on the bench's hashing corpus: the matrix over a scratch
 * SQLite table of the same vectors, searched in this thread, every read counted. Also the cost of one read.
 *   npx tsx bench/scan/rerank-reads.ts [memories=100000] [dims=512]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { hashEmbed } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { storedVectors } from '../../src/adapters/storage/sqlite/sqlite-stored-vectors.ts';
import type { SqliteDb } from '../../src/adapters/storage/sqlite/sqlite.database.ts';
import { VectorMatrix } from '../../src/adapters/storage/sqlite/vector-scan/vector-matrix.ts';
import { MIN_COSINE_SLACK } from '../../src/core/memories/memory.repository.ts';
import { calibrationFor } from '../../src/core/search/score-calibration.ts';
import { memoryGenerator, searchQueries } from '../lib/corpus.ts';
import { loadAverage } from '../lib/machine.ts';
import { median } from '../lib/stats.ts';

const size = Number(process.argv[2] ?? 100_000);
const dims = Number(process.argv[3] ?? 512);
const dir = mkdtempSync(join(tmpdir(), 'mnemo-rerank-reads-'));
const db = new Database(join(dir, 'vectors.db'));
db.exec(`CREATE TABLE memory_vectors (memory_seq INTEGER NOT NULL, model_id TEXT NOT NULL, dims INTEGER NOT NULL,
  vector BLOB NOT NULL, PRIMARY KEY (memory_seq, model_id))`);
const insert = db.prepare('INSERT INTO memory_vectors VALUES (?, ?, ?, ?)');
const store = storedVectors(db as unknown as SqliteDb, 'm', dims);
let reads = 0;
const matrix = new VectorMatrix(dims, size, { read: (key) => { reads++; return store.read(key); } });
const next = memoryGenerator(42);
db.transaction(() => {
  for (let seq = 1; seq <= size; seq++) {
    const body = next();
    const v = hashEmbed(`${body.title}\n\n${body.content}`, dims);
    insert.run(seq, 'm', dims, Buffer.from(v.buffer, v.byteOffset, dims * 4));
    matrix.upsert(seq, v);
  }
})();
const queries = searchQueries(7, 30).map((q) => hashEmbed(q, dims));
console.log(`${size} memories x ${dims} dims, ${queries.length} queries, limit 10, load average ${loadAverage().toFixed(1)}`);
console.log('| threshold (similarity) | cosine | rows read per search: median | max | total (median) |');
console.log('| ---: | ---: | ---: | ---: | ---: |');
// The hashing embedder's calibration, as a search over this corpus would turn its threshold into a cosine.
const calibration = calibrationFor(`hashing:v1-${dims}`);
for (const similarity of [0, 0.5, 0.6, 0.7, 0.8]) {
  const minCosine = calibration.minCosine(similarity) - MIN_COSINE_SLACK;
  const counts: number[] = [];
  const totals: number[] = [];
  for (const q of queries) {
    reads = 0;
    totals.push(matrix.search(q, 10, minCosine).total);
    counts.push(reads);
  }
  console.log(`| ${similarity} | ${calibration.minCosine(similarity).toFixed(1)} | ${median(counts)} | ${Math.max(...counts)} | ${median(totals)} |`);
}
const keys = Array.from({ length: 20_000 }, (_, i) => 1 + ((i * 7919) % size));
const t0 = performance.now();
for (const key of keys) store.read(key);
console.log(`one read from the store: ${(((performance.now() - t0) * 1000) / keys.length).toFixed(1)} µs (random seqs)`);
db.close();
rmSync(dir, { recursive: true, force: true });
