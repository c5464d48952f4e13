/**
 * The int8 kernel's two loops side by side (int8-dot-kernel.ts): `dots`, a pair at a time, and `dotsGrouped`, 8 pairs
 * at a time, over the same random codes, for queries listing N of the 256 pairs of 512 dims, in this thread:
 * `npx tsx bench/scan/kernel-pairs.ts [rows] [pairs,pairs,...]`. Per pair count, 12 queries, the two loops alternately
 * first; the median time of one pass over every row. The outputs are compared (they must be equal).
 */
import { int8DotModule } from '../../src/adapters/storage/sqlite/vector-scan/int8-dot-kernel.ts';
import { CHUNK_ROWS, writeQueryPairs } from '../../src/adapters/storage/sqlite/vector-scan/scan-part.ts';
import { LARGE_BLOCK_ROWS } from '../../src/adapters/storage/sqlite/vector-scan/matrix-storage.ts';
import { wasm } from '../../src/adapters/storage/sqlite/vector-scan/wasm.ts';
import { loadAverage, describeMachine, machineLine } from '../lib/machine.ts';
import { createRng } from '../lib/prng.ts';

type Dots = (codes: number, pairs: number, qpairs: number, npairs: number, blocks: number, blockRows: number, blockBytes: number, out: number) => void;

const rows = Number(process.argv[2] ?? 1_000_000);
const counts = (process.argv[3] ?? '12,36,64,128,192,224,256').split(',').map(Number);
const STRIDE = 512;
const blockBytes = STRIDE * LARGE_BLOCK_ROWS;
const chunks = Math.ceil(rows / CHUNK_ROWS);
const PAIRS = 0;
const QPAIRS = 2 * STRIDE;
const OUT_A = 4 * STRIDE;
const OUT_B = OUT_A + 4 * CHUNK_ROWS;
const CODES = 65536;
const memory = new wasm.Memory({ initial: Math.ceil((CODES + chunks * CHUNK_ROWS * STRIDE) / 65536), maximum: 65536, shared: true });
const codes = new Int8Array(memory.buffer);
const rng = createRng(39);
const random = rng.next;
for (let i = CODES; i < codes.length; i++) codes[i] = Math.floor(random() * 255) - 127;
const { dots, dotsGrouped } = new wasm.Instance(int8DotModule, { env: { memory } }).exports as { dots: Dots; dotsGrouped: Dots };

const pass = (f: Dots, listed: number, out: number): number => {
  const started = performance.now();
  for (let c = 0; c < chunks; c++) f(CODES + c * CHUNK_ROWS * STRIDE, PAIRS, QPAIRS, listed, CHUNK_ROWS / LARGE_BLOCK_ROWS, LARGE_BLOCK_ROWS, blockBytes, out);
  return performance.now() - started;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

console.log(`${rows.toLocaleString('en')} rows × ${STRIDE} dims in blocks of ${LARGE_BLOCK_ROWS}; ${machineLine(describeMachine())}; load ${loadAverage().toFixed(1)}`);
console.log('| pairs listed (of 256) | a pair at a time, ms | 8 at a time, ms | grouped / one at a time |');
console.log('| ---: | ---: | ---: | ---: |');
for (const listed of counts) {
  const one: number[] = [];
  const grouped: number[] = [];
  for (let q = 0; q < 12; q++) {
    const chosen = new Set<number>();
    while (chosen.size < listed) chosen.add(Math.floor(random() * (STRIDE / 2)));
    const q16 = new Int16Array(STRIDE);
    for (const p of chosen) { q16[2 * p] = Math.floor(random() * 254) - 127 || 1; q16[2 * p + 1] = Math.floor(random() * 255) - 127; }
    const n = writeQueryPairs(memory.buffer, q16, PAIRS, QPAIRS, LARGE_BLOCK_ROWS);
    if (q % 2 === 0) { one.push(pass(dots, n, OUT_A)); grouped.push(pass(dotsGrouped, n, OUT_B)); }
    else { grouped.push(pass(dotsGrouped, n, OUT_B)); one.push(pass(dots, n, OUT_A)); }
    // The last chunk's outputs of both loops must agree.
    const a = new Int32Array(memory.buffer, OUT_A, CHUNK_ROWS);
    const b = new Int32Array(memory.buffer, OUT_B, CHUNK_ROWS);
    for (let i = 0; i < CHUNK_ROWS; i++) if (a[i] !== b[i]) throw new Error(`the loops differ at ${listed} pairs, row ${i}`);
  }
  console.log(`| ${listed} | ${median(one).toFixed(1)} | ${median(grouped).toFixed(1)} | ${(median(grouped) / median(one)).toFixed(2)}× |`);
}
