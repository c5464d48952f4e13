import { wasm, type SharedMemory } from './wasm.ts';

/**
 * A WebAssembly SIMD kernel for the int8 pre-scan: the dot products of many int8 rows with one int16 query, written
 * as bytes here because the repository has no WebAssembly toolchain. Text form of the one function:
 *
 *   (import "env" "memory" (memory 1 65536 shared))
 *   (func (export "dots") (param $codes i32) (param $q16 i32) (param $out i32) (param $rows i32) (param $stride i32)
 *     (local $r i32) (local $j i32) (local $acc v128) (local $p i32)
 *     p = codes
 *     for r in 0..rows:                                   ;; rows >= 1, stride a positive multiple of 16
 *       acc = 0; j = 0
 *       do: acc += i32x4.dot_i16x8_s(v128.load8x8_s(p + j), v128.load(q16 + 2j))
 *           acc += i32x4.dot_i16x8_s(v128.load8x8_s(p + j + 8), v128.load(q16 + 2j + 16))
 *           j += 16
 *       while j < stride
 *       out[r] = acc.lane0 + acc.lane1 + acc.lane2 + acc.lane3
 *       p += stride
 *
 * The memory is shared, so the matrix's codes are written once by the main thread and read in place by the scan
 * workers. Sums cannot overflow: |code| <= 127, |query| <= 127, and 1536 dims give at most 384 * 2 * 16129 per lane.
 */
const SIMD = 0xfd;
const op = {
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b, localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Store: 0x36, i32Const: 0x41, i32GeU: 0x4f, i32LtU: 0x49, i32Add: 0x6a, i32Shl: 0x74,
};
const simd = {
  load: [SIMD, 0x00], load8x8s: [SIMD, 0x01], const: [SIMD, 0x0c], extractLane: [SIMD, 0x1b],
  i32x4Add: [SIMD, 0xae, 0x01], dotI16x8: [SIMD, 0xba, 0x01],
};
// Locals: 0 codes, 1 q16, 2 out, 3 rows, 4 stride, 5 r, 6 j, 7 acc (v128), 8 p.
const [CODES, Q16, OUT, ROWS, STRIDE, R, J, ACC, P] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
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
const str = (s: string): number[] => [...uleb(s.length), ...Buffer.from(s, 'utf8')];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const memarg = (offset: number): number[] => [0, ...uleb(offset)];

/** acc += dot(load8x8_s(p + j + off), load(q16 + 2j + 2off)) */
const accumulate = (off: number): number[] => [
  op.localGet, ACC,
  op.localGet, P, op.localGet, J, op.i32Add, ...simd.load8x8s, ...memarg(off),
  op.localGet, Q16, op.localGet, J, op.i32Const, 1, op.i32Shl, op.i32Add, ...simd.load, ...memarg(2 * off),
  ...simd.dotI16x8, ...simd.i32x4Add, op.localSet, ACC,
];

const body: number[] = [
  // locals: 2 x i32 (r, j), 1 x v128 (acc), 1 x i32 (p)
  3, 2, I32, 1, V128, 1, I32,
  op.localGet, CODES, op.localSet, P,
  op.block, 0x40,
  op.loop, 0x40,
  op.localGet, R, op.localGet, ROWS, op.i32GeU, op.brIf, 1,
  ...simd.const, ...new Array<number>(16).fill(0), op.localSet, ACC,
  op.i32Const, 0, op.localSet, J,
  op.loop, 0x40,
  ...accumulate(0), ...accumulate(8),
  op.localGet, J, op.i32Const, 16, op.i32Add, op.localTee, J, op.localGet, STRIDE, op.i32LtU, op.brIf, 0,
  op.end,
  op.localGet, OUT, op.localGet, R, op.i32Const, 2, op.i32Shl, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 0,
  op.localGet, ACC, ...simd.extractLane, 1, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 2, op.i32Add,
  op.localGet, ACC, ...simd.extractLane, 3, op.i32Add,
  op.i32Store, 2, 0,
  op.localGet, P, op.localGet, STRIDE, op.i32Add, op.localSet, P,
  op.localGet, R, op.i32Const, 1, op.i32Add, op.localSet, R,
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
