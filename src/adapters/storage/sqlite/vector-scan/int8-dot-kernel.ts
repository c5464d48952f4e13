import { wasm, type SharedMemory } from './wasm.ts';

/**
 * A WebAssembly SIMD kernel for the int8 pre-scan: the dot products of blocks of int8 rows with one int16 query,
 * written as bytes here because the repository has no WebAssembly toolchain. The codes are laid out in blocks of
 * `blockRows` rows (matrix-storage.ts): within a block, the codes of dimensions 2p and 2p + 1 of all its rows sit
 * together (2 × blockRows bytes: row 0's two codes, row 1's, …), so one pair of query values multiplies a run of
 * contiguous codes, and the query's zero dimensions are never read. The kernel walks only the pairs it is given — a
 * sparse query (a short text under the hashing embedder touches some 40 of 512 dimensions) reads that share of the
 * codes, in runs long enough for the hardware to stream; a dense one lists every pair. Text form of the one function:
 *
 *   (import "env" "memory" (memory 1 65536 shared))
 *   (func (export "dots") (param $codes i32) (param $pairs i32) (param $qpairs i32) (param $npairs i32)
 *                         (param $blocks i32) (param $blockRows i32) (param $blockBytes i32) (param $out i32)
 *     for b in 0..blocks:                          ;; block = codes + b * blockBytes; outp = out + 4 * blockRows * b
 *       outp[0 .. blockRows) = 0                   ;; int32, one a row
 *       for j in 0..npairs:
 *         p = block + i32.load(pairs + 4j)         ;; the pair's byte offset in a block (2 × blockRows × pair)
 *         qv = i32x4.splat(i32.load(qpairs + 4j))  ;; the two int16 query values, low one first
 *         for o = outp; p < run end; p += 64, o += 128:   ;; 64 bytes = 32 rows × 2 codes
 *           for m in 0..3:
 *             v = v128.load(p + 16m)
 *             o[32m ..]      += i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(v), qv)    ;; rows 8m .. 8m+3
 *             o[32m + 16 ..] += i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(v), qv)   ;; rows 8m+4 .. 8m+7
 *
 * The memory is shared, so the matrix's codes are written once by the main thread and read in place by the scan
 * workers. Sums cannot overflow: |code| <= 127, |query| <= 127, and 1536 dims give at most 1536 * 16129 per row.
 */
const SIMD = 0xfd;
const op = {
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b, localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, i32Const: 0x41, i32GeU: 0x4f, i32Add: 0x6a, i32Shl: 0x74,
};
const simd = {
  load: [SIMD, 0x00], store: [SIMD, 0x0b], const: [SIMD, 0x0c], i32x4Splat: [SIMD, 0x11],
  extendLowS: [SIMD, 0x87, 0x01], extendHighS: [SIMD, 0x88, 0x01], i32x4Add: [SIMD, 0xae, 0x01], dotI16x8: [SIMD, 0xba, 0x01],
};
// Locals: 0-7 the parameters; 8 b, 9 j, 10 p, 11 end, 12 o, 13 block, 14 outp, 15 outEnd (i32); 16 qv, 17 v (v128).
const [CODES, PAIRS, QPAIRS, NPAIRS, BLOCKS, BLOCK_ROWS, BLOCK_BYTES, OUT] = [0, 1, 2, 3, 4, 5, 6, 7];
const [B, J, P, END, O, BLOCK, OUTP, OUT_END, QV, V] = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
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

const zero = [...simd.const, ...new Array<number>(16).fill(0)];
/** (i32) the j-th i32 of the list at local `list`. */
const nth = (list: number): number[] => [op.localGet, list, op.localGet, J, ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg(0)];
/** o[off ..] += dot(extend(v), qv) */
const accumulate = (off: number, extend: number[]): number[] => [
  op.localGet, O,
  op.localGet, O, ...simd.load, ...memarg(off),
  op.localGet, V, ...extend, op.localGet, QV, ...simd.dotI16x8, ...simd.i32x4Add,
  ...simd.store, ...memarg(off),
];

const body: number[] = [
  2, 8, I32, 2, V128,
  op.localGet, CODES, op.localSet, BLOCK,
  op.localGet, OUT, op.localSet, OUTP,
  op.block, 0x40, op.loop, 0x40,
  op.localGet, B, op.localGet, BLOCKS, op.i32GeU, op.brIf, 1,
  // outEnd = outp + 4 × blockRows; the block's outputs zeroed
  op.localGet, OUTP, op.localGet, BLOCK_ROWS, ...i32(2), op.i32Shl, op.i32Add, op.localSet, OUT_END,
  op.localGet, OUTP, op.localSet, O,
  op.block, 0x40, op.loop, 0x40,
  op.localGet, O, op.localGet, OUT_END, op.i32GeU, op.brIf, 1,
  op.localGet, O, ...zero, ...simd.store, ...memarg(0),
  ...addTo(O, 16),
  op.br, 0,
  op.end, op.end,
  ...i32(0), op.localSet, J,
  op.block, 0x40, op.loop, 0x40,
  op.localGet, J, op.localGet, NPAIRS, op.i32GeU, op.brIf, 1,
  // p = block + pairs[j]; end = p + 2 × blockRows; qv = splat(qpairs[j]); o = outp
  op.localGet, BLOCK, ...nth(PAIRS), op.i32Add, op.localTee, P,
  op.localGet, BLOCK_ROWS, ...i32(1), op.i32Shl, op.i32Add, op.localSet, END,
  ...nth(QPAIRS), ...simd.i32x4Splat, op.localSet, QV,
  op.localGet, OUTP, op.localSet, O,
  op.block, 0x40, op.loop, 0x40,
  op.localGet, P, op.localGet, END, op.i32GeU, op.brIf, 1,
  ...[0, 1, 2, 3].flatMap((m) => [
    op.localGet, P, ...simd.load, ...memarg(16 * m), op.localSet, V,
    ...accumulate(32 * m, simd.extendLowS), ...accumulate(32 * m + 16, simd.extendHighS),
  ]),
  ...addTo(P, 64), ...addTo(O, 128),
  op.br, 0,
  op.end, op.end,
  ...addTo(J, 1),
  op.br, 0,
  op.end, op.end,
  op.localGet, OUT_END, op.localSet, OUTP,
  op.localGet, BLOCK, op.localGet, BLOCK_BYTES, op.i32Add, op.localSet, BLOCK,
  ...addTo(B, 1),
  op.br, 0,
  op.end, op.end,
  op.end,
];

/** Pages of the shared memory's declared maximum (4 GiB, the most a 32-bit WebAssembly memory can address). */
export const MAX_PAGES = 65536;

const bytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 8, I32, I32, I32, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...str('env'), ...str('memory'), 0x02, 0x03, ...uleb(1), ...uleb(MAX_PAGES)]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...str('dots'), 0x00, 0]),
  ...section(10, [1, ...uleb(body.length), ...body]),
]);

/** The compiled kernel; instantiate it once per shared memory (cheap: the code is compiled once per thread). */
export const int8DotModule = new wasm.Module(bytes);

/**
 * dots(codes, pairs, qpairs, npairs, blocks, blockRows, blockBytes, out): for `blocks` blocks of `blockRows` rows (a
 * multiple of 32) from byte `codes` (each `blockBytes` long), the int32 dot product of every row with the query, over
 * the `npairs` dimension pairs listed at `pairs` (their byte offsets in a block, int32) with the query's values at
 * `qpairs` (two int16 packed in an int32, the even dimension low), written to `out` (int32, rows in order).
 */
export type DotsFn = (codes: number, pairs: number, qpairs: number, npairs: number, blocks: number, blockRows: number,
  blockBytes: number, out: number) => void;

export function int8Dots(memory: SharedMemory): DotsFn {
  const instance = new wasm.Instance(int8DotModule, { env: { memory } });
  return instance.exports.dots as DotsFn;
}
