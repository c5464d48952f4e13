import { setImmediate as nextTurn } from 'node:timers/promises';

/** End of the slice of the current turn of the event loop, shared by every job (-Infinity: none open). */
let sliceEnd = -Infinity;
let sliceOpen = false;

/**
 * Runs a generator to completion on the event loop without holding it. The generator yields after each small
 * step. All jobs share one slice of `sliceMs` per turn of the event loop: once it is used up, every job waits
 * for the next turn (timers, I/O and other requests go first). A budget per job would not do: n concurrent
 * jobs would hold the loop n slices at a time.
 */
export async function runInSlices<T>(steps: Generator<void, T, void>, sliceMs: number): Promise<T> {
  for (;;) {
    const now = performance.now();
    if (!sliceOpen) openSlice(now, sliceMs);
    else if (now >= sliceEnd) {
      await nextTurn();
      continue;
    }
    const step = steps.next();
    if (step.done) return step.value;
  }
}

function openSlice(now: number, sliceMs: number): void {
  sliceOpen = true;
  sliceEnd = now + sliceMs;
  // Closed at the next turn's check phase, before the jobs that wait for it resume (immediates run in order).
  setImmediate(() => {
    sliceOpen = false;
  });
}
