/**
 * Counts what a connection sent in a sliding window (e.g. events per minute). `take()` records one more and answers
 * false once the window already holds `max`: the caller then refuses (G8: a RATE_LIMITED frame and close).
 */
export function createRateWindow(options: { max: number; windowMs: number; now?: () => number }) {
  const now = options.now ?? (() => performance.now());
  const times: number[] = [];
  let head = 0;
  return {
    take(): boolean {
      const t = now();
      while (head < times.length && times[head]! <= t - options.windowMs) head++;
      if (head > 1024 && head * 2 > times.length) {
        times.splice(0, head);
        head = 0;
      }
      if (times.length - head >= options.max) return false;
      times.push(t);
      return true;
    },
  };
}
