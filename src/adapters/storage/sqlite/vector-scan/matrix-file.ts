import { open, rename, rm } from 'node:fs/promises';
import { allocateRows, codeBytesFor, LARGE_BLOCK_ROWS, layoutFor, SMALL_BLOCK_ROWS, type MatrixRows } from './matrix-storage.ts';

/**
 * A VectorMatrix's rows as a file: what a load would compute from the stored floats (both code levels, scales,
 * errors, keys), written section by section as the shared buffers hold them, so that a load reads them back in large
 * chunks instead of quantising every float again. The file says which snapshot it is (`token`, `version`); whether
 * that snapshot is still the store's is the caller's to decide (sqlite-vector-snapshots.ts).
 */

const MAGIC = 'mnemo-vector-matrix';
/** Moves on whenever the codes or their layout change meaning: a file of another format is ignored (and rebuilt). */
const FORMAT = 1;
const HEADER_BYTES = 4096;
/** Bytes per read or write call: large enough to stream, small enough not to hold the thread pool long. */
const CHUNK = 8 << 20;
/** Reads under way at once while a file is read back. */
const READERS = 2;

export interface MatrixFileHeader {
  token: string;
  /** The workspace version the rows reflect. */
  version: number;
  dims: number;
  count: number;
}

interface StoredHeader extends MatrixFileHeader {
  magic: string;
  format: number;
  stride: number;
  blockRows: number;
  codesOffset: number;
  bytes: number;
}

/** The byte ranges of one buffer saved: [buffer, start in it, length]. */
type Section = [ArrayBufferLike, number, number];

function sectionsOf(rows: MatrixRows, dims: number, count: number): Section[] {
  const layout = layoutFor(dims, rows.blockRows);
  return [
    [rows.keys, 0, count * 8],
    [rows.scales, 0, count * 4],
    [rows.errors, 0, count * 8],
    [rows.residualScales, 0, count * 4],
    [rows.residualErrors, 0, count * 8],
    [rows.residuals, 0, count * dims],
    [rows.memory.buffer, layout.codesOffset, codeBytesFor(layout, count)],
  ];
}

const bytesOf = (sections: readonly Section[]): number => HEADER_BYTES + sections.reduce((sum, [, , length]) => sum + length, 0);

/** The temporary file a write of this process fills before renaming it to `path` (a crash leaves it behind). */
export const temporaryFileOf = (path: string): string => `${path}.${process.pid}.tmp`;

/**
 * Writes rows [0, count) to `path`: to a temporary file first (temporaryFileOf), flushed to disk, then renamed over
 * it, so that the path holds a whole file or none. One write per path at a time in a process. `signal` aborts it
 * between chunks (the temporary file is removed; the path keeps what it held).
 */
export async function writeMatrixFile(path: string, rows: MatrixRows, header: MatrixFileHeader, signal?: AbortSignal): Promise<void> {
  const { dims, count } = header;
  const layout = layoutFor(dims, rows.blockRows);
  const sections = sectionsOf(rows, dims, count);
  const stored: StoredHeader = {
    magic: MAGIC, format: FORMAT, ...header, stride: layout.stride, blockRows: layout.blockRows, codesOffset: layout.codesOffset,
    bytes: bytesOf(sections),
  };
  const head = Buffer.alloc(HEADER_BYTES);
  head.write(JSON.stringify(stored));
  const temporary = temporaryFileOf(path);
  const file = await open(temporary, 'w');
  try {
    await file.write(head, 0, HEADER_BYTES, 0);
    let position = HEADER_BYTES;
    for (const [buffer, start, length] of sections) {
      for (let done = 0; done < length;) {
        signal?.throwIfAborted();
        const n = Math.min(CHUNK, length - done);
        const { bytesWritten } = await file.write(new Uint8Array(buffer, start + done, n), 0, n, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    }
    signal?.throwIfAborted();
    await file.sync();
  } catch (err) {
    await file.close();
    await rm(temporary, { force: true });
    throw err;
  }
  await file.close();
  await rename(temporary, path);
}

/**
 * Reads a file written by writeMatrixFile into fresh rows with room for `capacity(count)` rows; null when there is no
 * such file, or it is of another format, width or layout, or shorter or longer than its header says (never trusted
 * in part).
 */
export async function readMatrixFile(path: string, dims: number, capacity: (count: number) => number):
  Promise<{ header: MatrixFileHeader; rows: MatrixRows } | null> {
  let file;
  try {
    file = await open(path, 'r');
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await file.read(head, 0, HEADER_BYTES, 0);
    if (bytesRead < HEADER_BYTES) return null;
    const stored = parseHeader(head);
    if (!stored || stored.dims !== dims || (stored.blockRows !== SMALL_BLOCK_ROWS && stored.blockRows !== LARGE_BLOCK_ROWS)) return null;
    const layout = layoutFor(dims, stored.blockRows);
    if (layout.stride !== stored.stride || layout.codesOffset !== stored.codesOffset) return null;
    const rows = allocateRows(layout, Math.max(stored.count, capacity(stored.count)));
    const sections = sectionsOf(rows, dims, stored.count);
    if (bytesOf(sections) !== stored.bytes || (await file.stat()).size !== stored.bytes) return null;
    // The file in CHUNK pieces, READERS at a time: most of a read's time is the kernel giving the fresh memory its
    // pages (BENCHMARKS.md, "A million memories on SQLite"), which two cores do side by side.
    const pieces: { target: Uint8Array; position: number }[] = [];
    let position = HEADER_BYTES;
    for (const [buffer, start, length] of sections) {
      for (let done = 0; done < length; done += CHUNK) {
        const n = Math.min(CHUNK, length - done);
        pieces.push({ target: new Uint8Array(buffer, start + done, n), position });
        position += n;
      }
    }
    const open = file;
    let next = 0;
    let complete = true;
    const reader = async (): Promise<void> => {
      while (complete && next < pieces.length) {
        const { target, position: at } = pieces[next++]!;
        for (let done = 0; done < target.length;) {
          const { bytesRead } = await open.read(target, done, target.length - done, at + done);
          if (bytesRead === 0) {
            complete = false;
            return;
          }
          done += bytesRead;
        }
      }
    };
    await Promise.all(Array.from({ length: READERS }, reader));
    if (!complete) return null;
    return { header: { token: stored.token, version: stored.version, dims, count: stored.count }, rows };
  } finally {
    await file.close();
  }
}

function parseHeader(head: Buffer): StoredHeader | null {
  const end = head.indexOf(0);
  try {
    const parsed = JSON.parse(head.toString('utf8', 0, end < 0 ? head.length : end)) as Partial<StoredHeader>;
    if (parsed.magic !== MAGIC || parsed.format !== FORMAT) return null;
    const numbers = [parsed.version, parsed.dims, parsed.count, parsed.stride, parsed.blockRows, parsed.codesOffset, parsed.bytes];
    if (typeof parsed.token !== 'string' || !numbers.every((n) => Number.isSafeInteger(n) && n! >= 0)) return null;
    return parsed as StoredHeader;
  } catch {
    return null;
  }
}
