/**
 * How the threads of one search share its rows. A static split gave each thread half of them, and the search ended
 * with the slower half: on two cores the event loop's own work during the scan (hybrid search's keyword leg, another
 * request) took a core from one thread, whose half then ended that much later while the other thread idled. Here
 * the rows are cut into chunks of CHUNK_ROWS and each part claims chunks in a shared table, one Int32 a chunk (0:
 * free, else the number of the part that took
 * it), by compare-and-swap: every chunk is scanned by exactly one part, and a part that gets less CPU takes fewer.
 * A part starts with its own share of the chunks, ascending, then takes what the other parts have not reached yet,
 * from the end of each of their shares backwards (where their owners come last).
 */
export interface ChunkShare {
  /** One Int32 a chunk: 0 while free, else the number of the part that claimed it. */
  owners: SharedArrayBuffer;
  /** This part's number, 1 to `parts`. */
  part: number;
  parts: number;
}

/** The claim table of a search over `chunks` chunks, every chunk free. */
export const newChunkOwners = (chunks: number): SharedArrayBuffer => new SharedArrayBuffer(4 * Math.max(1, chunks));

/**
 * The chunks (0 to `chunks` − 1) a part scans, in the order it claims them; without a share, all of them in order.
 * A chunk already claimed under this part's number is taken again: the part is being re-run (ScanPool runs a part
 * whose thread died in the event loop) and what the dead thread had claimed is scanned anew.
 */
export function* claimedChunks(share: ChunkShare | null | undefined, chunks: number): Generator<number> {
  if (!share || share.parts <= 1) {
    for (let c = 0; c < chunks; c++) yield c;
    return;
  }
  const owners = new Int32Array(share.owners);
  const { part, parts } = share;
  const take = (c: number): boolean => Atomics.load(owners, c) === part || Atomics.compareExchange(owners, c, 0, part) === 0;
  const startOf = (p: number): number => Math.floor((chunks * (p - 1)) / parts);
  for (let c = startOf(part); c < startOf(part + 1); c++) if (take(c)) yield c;
  for (let i = 1; i < parts; i++) {
    const other = ((part - 1 + i) % parts) + 1;
    for (let c = startOf(other + 1) - 1; c >= startOf(other); c--) if (take(c)) yield c;
  }
}
