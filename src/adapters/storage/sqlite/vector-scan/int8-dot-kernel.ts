import { wasm, type SharedMemory } from './wasm.ts';

/**
 * A WebAssembly SIMD kernel for the int8 pre-scan: the dot products of blocks of int8 rows with one int16 query,
 * written as bytes here because the repository has no WebAssembly toolchain. The codes are laid out in blocks of
 * `blockRows` rows (matrix-storage.ts): within a block, the codes of dimensions 2p and 2p + 1 of all its rows sit
 * together (2 × blockRows bytes: row 0's two codes, row 1's, …), so one pair of query values multiplies a run of
 * contiguous codes, and the query's zero dimensions are never read. The kernel walks only the pairs it is given — a
 * sparse query (a short text under the hashing embedder touches some 40 of 512 dimensions) reads that share of the
 * codes; a dense one lists every pair. Two functions, one module; `int8Dots` picks one per call:
 *
 *   (import "env" "memory" (memory 1 65536 shared))
 *   (func (export "dots") (param $codes $pairs $qpairs $npairs $blocks $blockRows $blockBytes $out i32)
 *     for b in 0..blocks:                          ;; block = codes + b * blockBytes; outp = out + 4 * blockRows * b
 *       outp[0 .. blockRows) = 0                   ;; int32, one a row
 *       for j in 0..npairs:                        ;; one pair at a time: every pair listed is one sequential stream
 *         p = block + i32.load(pairs + 4j)         ;; the pair's byte offset in a block (2 × blockRows × pair)
 *         qv = i32x4.splat(i32.load(qpairs + 4j))  ;; the two int16 query values, low one first
 *         for o = outp; p < run end; p += 64, o += 128:   ;; 64 bytes = 32 rows × 2 codes
 *           for m in 0..3:
 *             v = v128.load(p + 16m)
 *             o[32m ..]      += i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(v), qv)    ;; rows 8m .. 8m+3
 *             o[32m + 16 ..] += i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(v), qv)   ;; rows 8m+4 .. 8m+7
 *   (func (export "dotsGrouped") ...same parameters)
 *     as dots, but the pairs in groups of G (8 while 8 are left, then 4: the lists are padded with zero pairs to a
 *     multiple of 4): p_0 .. p_G-1 and qv_0 .. qv_G-1 at once, and for each 32 rows the two accumulators of each
 *     16-byte slice are loaded once, get the G pairs' products in registers, and are stored once.
 *
 * Why two: the runs of a sparse query's pairs lie 2 KiB apart and more, and one pair at a time waits on memory for
 * each run in turn (and loads and stores every accumulator once a pair); G runs read side by side keep G streams in
 * flight: 2.5-2.7x faster at 12-64 pairs of 256 in 1M rows (BENCHMARKS.md, "The int8 kernel: a sparse query's pairs
 * in groups"). A query that lists (nearly) every pair reads each block front to back, which one pair at a time
 * streams as well or better.
 *
 * The memory is shared, so the matrix's codes are written once by the main thread and read in place by the scan
 * workers. Sums cannot overflow: |code| <= 127, |query| <= 127, and 1536 dims give at most 1536 * 16129 per row.
 */
const SIMD = 0xfd;
const op = {
  block: 0x02, loop: 0x03, br: 0x0c, brIf: 0x0d, end: 0x0b, localGet: 0x20, localSet: 0x21, localTee: 0x22,
  i32Load: 0x28, i32Const: 0x41, i32GtU: 0x4b, i32GeU: 0x4f, i32Add: 0x6a, i32Shl: 0x74,
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
/** (i32) the (j + i)-th i32 of the list at local `list`. */
const nth = (list: number, i = 0): number[] => [op.localGet, list, op.localGet, J, ...i32(2), op.i32Shl, op.i32Add, op.i32Load, ...memarg(4 * i)];
/** o[off ..] += dot(extend(v), qv) */
const accumulate = (off: number, extend: number[]): number[] => [
  op.localGet, O,
  op.localGet, O, ...simd.load, ...memarg(off),
  op.localGet, V, ...extend, op.localGet, QV, ...simd.dotI16x8, ...simd.i32x4Add,
  ...simd.store, ...memarg(off),
];

/**
 * A function's body: its locals, then for each block its outputs zeroed, `pairLoops` run (what differs between the
 * two functions), and the next block.
 */
const functionBody = (locals: number[], pairLoops: number[]): number[] => {
  const code = [
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
    ...pairLoops,
    op.localGet, OUT_END, op.localSet, OUTP,
    op.localGet, BLOCK, op.localGet, BLOCK_BYTES, op.i32Add, op.localSet, BLOCK,
    ...addTo(B, 1),
    op.br, 0,
    op.end, op.end,
    op.end,
  ];
  return [...uleb(locals.length / 2), ...locals, ...code];
};

/** dots: one pair at a time. */
const onePairAtATime = [
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
];

/** The pair lists' padding: dotsGrouped's last group reads up to a multiple of this many entries. */
export const PAD_TO = 4;

// dotsGrouped's extra locals: 18 lo, 19 hi (v128); 20.. the group's run pointers (i32), then its query values (v128).
const [LO, HI] = [18, 19];
const MAX_GROUP = 8;
const GP = (i: number): number => 20 + i;
const GQ = (i: number): number => 20 + MAX_GROUP + i;

/** dotsGrouped's loop over the pairs `group` at a time: while `group` are left (`whileFull`), or while any are (the tail). */
const groupLoop = (group: number, whileFull: boolean): number[] => {
  const slices: number[] = [];
  for (let m = 0; m < 4; m++) {
    slices.push(op.localGet, O, ...simd.load, ...memarg(32 * m), op.localSet, LO);
    slices.push(op.localGet, O, ...simd.load, ...memarg(32 * m + 16), op.localSet, HI);
    for (let i = 0; i < group; i++) {
      slices.push(op.localGet, GP(i), ...simd.load, ...memarg(16 * m), op.localSet, V);
      slices.push(op.localGet, LO, op.localGet, V, ...simd.extendLowS, op.localGet, GQ(i), ...simd.dotI16x8, ...simd.i32x4Add, op.localSet, LO);
      slices.push(op.localGet, HI, op.localGet, V, ...simd.extendHighS, op.localGet, GQ(i), ...simd.dotI16x8, ...simd.i32x4Add, op.localSet, HI);
    }
    slices.push(op.localGet, O, op.localGet, LO, ...simd.store, ...memarg(32 * m));
    slices.push(op.localGet, O, op.localGet, HI, ...simd.store, ...memarg(32 * m + 16));
  }
  return [
    op.block, 0x40, op.loop, 0x40,
    // while j + group <= npairs (whileFull), or j < npairs (the tail, read up to the padding)
    ...(whileFull
      ? [op.localGet, J, ...i32(group), op.i32Add, op.localGet, NPAIRS, op.i32GtU, op.brIf, 1]
      : [op.localGet, J, op.localGet, NPAIRS, op.i32GeU, op.brIf, 1]),
    ...Array.from({ length: group }, (_, i) => [
      op.localGet, BLOCK, ...nth(PAIRS, i), op.i32Add, op.localSet, GP(i),
      ...nth(QPAIRS, i), ...simd.i32x4Splat, op.localSet, GQ(i),
    ]).flat(),
    op.localGet, OUTP, op.localSet, O,
    op.block, 0x40, op.loop, 0x40,
    op.localGet, O, op.localGet, OUT_END, op.i32GeU, op.brIf, 1,
    ...slices,
    ...Array.from({ length: group }, (_, i) => addTo(GP(i), 64)).flat(),
    ...addTo(O, 128),
    op.br, 0,
    op.end, op.end,
    ...addTo(J, group),
    op.br, 0,
    op.end, op.end,
  ];
};

// Locals after the parameters: 8 i32 (8-15), 2 v128 (16-17); dotsGrouped adds 2 v128, MAX_GROUP i32 and MAX_GROUP v128.
const sharedLocals = [8, I32, 2, V128];
const dotsBody = functionBody(sharedLocals, onePairAtATime);
const groupedBody = functionBody([...sharedLocals, 2, V128, MAX_GROUP, I32, MAX_GROUP, V128],
  [...groupLoop(MAX_GROUP, true), ...groupLoop(PAD_TO, false)]);

/** Pages of the shared memory's declared maximum (4 GiB, the most a 32-bit WebAssembly memory can address). */
export const MAX_PAGES = 65536;

const bytes = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 8, I32, I32, I32, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...str('env'), ...str('memory'), 0x02, 0x03, ...uleb(1), ...uleb(MAX_PAGES)]),
  ...section(3, [2, 0, 0]),
  ...section(7, [2, ...str('dots'), 0x00, 0, ...str('dotsGrouped'), 0x00, 1]),
  ...section(10, [2, ...uleb(dotsBody.length), ...dotsBody, ...uleb(groupedBody.length), ...groupedBody]),
]);

/** The compiled kernel; instantiate it once per shared memory (cheap: the code is compiled once per thread). */
export const int8DotModule = new wasm.Module(bytes);

/**
 * dots(codes, pairs, qpairs, npairs, blocks, blockRows, blockBytes, out): for `blocks` blocks of `blockRows` rows (a
 * multiple of 32) from byte `codes` (each `blockBytes` long), the int32 dot product of every row with the query, over
 * the `npairs` dimension pairs listed at `pairs` (their byte offsets in a block, int32) with the query's values at
 * `qpairs` (two int16 packed in an int32, the even dimension low), written to `out` (int32, rows in order). Both lists
 * hold zero entries after the last pair up to a multiple of PAD_TO (writeQueryPairs writes them; a zero pair adds 0).
 */
export type DotsFn = (codes: number, pairs: number, qpairs: number, npairs: number, blocks: number, blockRows: number,
  blockBytes: number, out: number) => void;

/**
 * The kernel over `memory`: one pair at a time when the query lists at least 31/32 of the rows' pairs (it then reads
 * the blocks front to back), else in groups. At 1M rows of 512 dims the grouped loop took 0.37-0.44× the time up to
 * 128 of 256 pairs, 0.58× at 192, 0.89× at 240, 0.97× at 248, 1.17× at 252 and 1.00-1.07× at 256 (BENCHMARKS.md).
 */
export function int8Dots(memory: SharedMemory): DotsFn {
  const instance = new wasm.Instance(int8DotModule, { env: { memory } });
  const sequential = instance.exports.dots as DotsFn;
  const grouped = instance.exports.dotsGrouped as DotsFn;
  return (codes, pairs, qpairs, npairs, blocks, blockRows, blockBytes, out) =>
    // pairs of a row = blockBytes / (2 × blockRows)
    (64 * npairs * blockRows >= 31 * blockBytes ? sequential : grouped)(codes, pairs, qpairs, npairs, blocks, blockRows, blockBytes, out);
}
