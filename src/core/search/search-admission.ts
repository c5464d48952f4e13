import { DomainError } from '../errors.ts';

export interface AdmissionLimits {
  /** Searches running at once; more wait in line. */
  maxActive: number;
  /** Searches waiting for a slot; past it a search is refused at once (OVERLOADED) instead of waiting. */
  maxQueued: number;
  /** What a refused caller is told to wait before trying again. */
  retryAfterMs: number;
}

export type SearchAdmission = ReturnType<typeof createSearchAdmission>;

/**
 * Bounds concurrent searches: at most `maxActive` run, at most `maxQueued` wait in arrival order, and the rest are
 * refused at once, so that an overload answers quickly rather than piling up requests that will all be late.
 * A waiting search leaves the line when its signal aborts (its deadline passed).
 */
export function createSearchAdmission(limits: AdmissionLimits) {
  let active = 0;
  const line: { admit: () => void }[] = [];

  /** Hands the slot to the next in line, or frees it. */
  function leave(): void {
    const next = line.shift();
    if (next) next.admit();
    else active -= 1;
  }
  const releaseOnce = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      leave();
    };
  };

  return {
    /** Resolves with the slot's release once the search may run; rejects with OVERLOADED, or the signal's reason. */
    enter(signal?: AbortSignal): Promise<() => void> {
      if (active < limits.maxActive) {
        active += 1;
        return Promise.resolve(releaseOnce());
      }
      if (line.length >= limits.maxQueued) {
        return Promise.reject(new DomainError('OVERLOADED',
          `Too many searches at once (${limits.maxActive} running, ${limits.maxQueued} waiting); try again shortly`,
          { retryAfterMs: limits.retryAfterMs }));
      }
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const at = line.indexOf(waiter);
          if (at >= 0) line.splice(at, 1);
          reject(signal?.reason);
        };
        const waiter = {
          admit: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(releaseOnce());
          },
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        line.push(waiter);
      });
    },

    get active(): number {
      return active;
    },

    get waiting(): number {
      return line.length;
    },
  };
}
