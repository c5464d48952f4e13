import { wasm, type SharedMemory } from './wasm.ts';

/**
 * A WebAssembly SIMD kernel for the int8 pre-scan: the dot products of many int8 rows with one int16 query, written
 * as bytes here because the repository has no WebAssembly toolchain. Text form of the one function:
 *
 *   (import "env" "memory" (memory 1 65536 shared))
 *   (func (export "dots") (param $codes i32) (param $q16 i32) (param $out i32) (param $rows i32) (param $stride i32)
 *     (local $r i32) (local $acc v128) (local $p i32) (local $acc2 v128) (local $pq i32) (local $end i32)
 *     p = codes
 *     for r in 0..rows:                                   ;; rows >= 1, stride a positive multiple of 16
 *       acc = acc2 = 0; pq = q16; end = p + stride
 *       while end - p >= 64:                              ;; 64 codes a round, two accumulators in turn
 *         for o in 0, 16, 32, 48:
 *           acc  += i32x4.dot_i16x8_s(v128.load8x8_s(p + o), v128.load(pq + 2o))
 *           acc2 += i32x4.dot_i16x8_s(v128.load8x8_s(p + o + 8), v128.load(pq + 2o + 16))
 *         p += 64; pq += 128
 *       while p < end:                                    ;; the rest, 16 a round
 *         acc  += i32x4.dot_i16x8_s(v128.load8x8_s(p), v128.load(pq))
 *         acc2 += i32x4.dot_i16x8_s(v128.load8x8_s(p + 8), v128.load(pq + 16))
 *         p += 16; pq += 32
 *       acc += acc2
 *       out[r] = acc.lane0 + acc.lane1 + acc.lane2 + acc.lane3
 *
 * The 64-code rounds read their offsets from the instructions (one address update a round, not one per load) and
 * alternate two accumulators (no add waits for the one before), which is faster than a 16-code loop at wide vectors.
 *
 * The memory is shared, so the matrix's codes are written once by the main thread and read in place by the scan
 * workers. Sums cannot overflow: |code| <= 127, |query| <= 127, and 1536 dims give at most 384 * 2 * 16129 per lane.
 */
const SIMD = 0xfd;
const op = {
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b, localGet: 0x20, localSet: 0x21,
  i32Store: 0x36, i32Const: 0x41, i32GeU: 0x4f, i32LtU: 0x49, i32Add: 0x6a, i32Sub: 0x6b, i32Shl: 0x74,
};
const simd = {
  load: [SIMD, 0x00], load8x8s: [SIMD, 0x01], const: [SIMD, 0x0c], extractLane: [SIMD, 0x1b],
  i32x4Add: [SIMD, 0xae, 0x01], dotI16x8: [SIMD, 0xba, 0x01],
};
// Locals: 0 codes, 1 q16, 2 out, 3 rows, 4 stride (the parameters), 5 r, 6 acc (v128), 7 p, 8 acc2 (v128), 9 pq, 10 end.
const [CODES, Q16, OUT, ROWS, STRIDE, R, ACC, P, ACC2, PQ, END] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const V128 = 0x7b;
const I32 = 0x7f;

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}
/** A non-negative i32.const immediate (signed LEB128: a byte's bit 6 is the sign, so 64 needs two bytes). */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>>= 7;
    if (n === 0 && (byte & 0x40) === 0) return [...out, byte];
    out.push(byte | 0x80);
  }
}
const str = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const memarg = (offset: number): number[] => [0, ...uleb(offset)];
const i32 = (n: number): number[] => [op.i32Const, ...sleb(n)];
const addTo = (local: number, n: number): number[] => [op.localGet, local, ...i32(n), op.i32Add, op.localSet, local];

/** acc += dot(load8x8_s(p + off), load(pq + 2off)) */
const accumulate = (acc: number, off: number): number[] => [
  op.localGet, acc,
  op.localGet, P, ...simd.load8x8s, ...memarg(off),
  op.localGet, PQ, ...simd.load, ...memarg(2 * off),
  ...simd.dotI16x8, ...simd.i32x4Add, op.localSet, acc,
];
const zero = [...simd.const, ...new Array<number>(16).fill(0)];

const body: number[] = [
  // locals: r (i32), acc (v128), p (i32), acc2 (v128), pq and end (i32)
  5, 1, I32, 1, V128, 1, I32, 1, V128, 2, I32,
  op.localGet, CODES, op.localSet, P,
  op.block, 0x40,
  op.loop, 0x40,
  op.localGet, R, op.localGet, ROWS, op.i32GeU, op.brIf, 1,
  ...zero, op.localSet, ACC, ...zero, op.localSet, ACC2,
  op.localGet, Q16, op.localSet, PQ,
  op.localGet, P, op.localGet, STRIDE, op.i32Add, op.localSet, END,
  op.block, 0x40, op.loop, 0x40,
  // end − p < 64 (p never passes end, so the difference cannot wrap, where p + 64 could at the top of memory)
  op.localGet, END, op.localGet, P, op.i32Sub, ...i32(64), op.i32LtU, op.brIf, 1,
  ...accumulate(ACC, 0), ...accumulate(ACC2, 8), ...accumulate(ACC, 16), ...accumulate(ACC2, 24),
  ...accumulate(ACC, 32), ...accumulate(ACC2, 40), ...accumulate(ACC, 48), ...accumulate(ACC2, 56),
  ...addTo(P, 64), ...addTo(PQ, 128),
  op.br, 0,
  op.end, op.end,
  op.block, 0x40, op.loop, 0x40,
  op.localGet, P, op.localGet, END, op.i32GeU, op.brIf, 1,
  ...accumulate(ACC, 0), ...accumulate(ACC2, 8),
  ...addTo(P, 16), ...addTo(PQ, 32),
  op.br, 0,
  op.end, op.end,
  op.localGet, ACC, op.localGet, ACC2, ...simd.i32x4Add, op.localSet, ACC,
  op.localGet, OUT, op.localGet, R, ...i32(2), op.i32Shl, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 0,
  op.localGet, ACC, ...simd.extractLane, 1, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 2, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 3, op.i32Add,
  op.i32Store, 2, 0,
  ...addTo(R, 1),
  op.br, 0,
  op.end,
  op.end,
  op.end,
];

/** Pages of the shared memory's declared maximum (4 GiB, the most a 32-bit WebAssembly memory can address). */
export const MAX_PAGES = 65536;

const bytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...str('env'), ...str('memory'), 0x02, 0x03, ...uleb(1), ...uleb(MAX_PAGES)]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...str('dots'), 0x00, 0]),
  ...section(10, [1, ...uleb(body.length), ...body]),
]);

/** The compiled kernel; instantiate it once per shared memory (cheap: the code is compiled once per thread). */
export const int8DotModule = new wasm.Module(bytes);

export type DotsFn = (codes: number, q16: number, out: number, rows: number, stride: number) => void;

export function int8Dots(memory: SharedMemory): DotsFn {
  const instance = new wasm.Instance(int8DotModule, { env: { memory } });
  return instance.exports.dots as DotsFn;
}
