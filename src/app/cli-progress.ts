import type CliProgress from 'cli-progress';

/**
 * Progress of a long CLI command (reindex, export, import) on stderr: a cli-progress bar (count, rate, ETA) when
 * stderr is a terminal and cli-progress is installed (a development dependency), else a plain line at every tenth of
 * the way, which logs and pipes can keep.
 */
export interface CountProgress {
  /** `total` may be unknown (null) until it is counted. */
  update(done: number, total: number | null): void;
  stop(): void;
}

const rateText = (perSecond: number): string => (perSecond >= 10 ? Math.round(perSecond).toString() : perSecond.toFixed(1));

function etaText(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** One line per tenth of the way: `mnemo: reindex 300/1000 memories (120/s, eta 6s)`. */
export function lineCountProgress(label: string, unit: string, write: (text: string) => void, now = () => Date.now()): CountProgress {
  const started = now();
  let first: number | null = null;
  let lastTenth = -1;
  let last = { done: -1, total: null as number | null };
  let printed = -1;
  const line = (done: number, total: number | null) => {
    printed = done;
    const seconds = Math.max((now() - started) / 1000, 1e-3);
    const rate = (done - (first ?? 0)) / seconds;
    const tail = total === null ? `${rateText(rate)}/s` : `${rateText(rate)}/s, eta ${etaText(rate > 0 ? (total - done) / rate : Infinity)}`;
    write(`mnemo: ${label} ${done}${total === null ? '' : `/${total}`} ${unit} (${tail})\n`);
  };
  return {
    update(done, total) {
      first ??= done;
      last = { done, total };
      const tenth = total === null || total === 0 ? Math.floor(done / 1000) : Math.floor((done * 10) / total);
      if (tenth === lastTenth) return;
      lastTenth = tenth;
      line(done, total);
    },
    stop() {
      if (last.done >= 0 && printed !== last.done) line(last.done, last.total);
    },
  };
}

/** The bar on a terminal (`label [████░░] 300/1000 memories | 120/s | eta 6s`), else `fallback`. */
export async function terminalCountProgress(label: string, unit: string, fallback: CountProgress, stream: NodeJS.WriteStream = process.stderr): Promise<CountProgress> {
  if (!stream.isTTY) return fallback;
  let cliProgress: typeof CliProgress;
  try {
    ({ default: cliProgress } = await import('cli-progress'));
  } catch {
    return fallback;
  }
  const bar = new cliProgress.SingleBar({
    format: `${label} [{bar}] {value}/{total} ${unit} | {speed}/s | eta {eta_formatted}`, stream, hideCursor: true, etaBuffer: 50,
  }, cliProgress.Presets.shades_classic);
  const started = Date.now();
  let first: number | null = null;
  let running = false;
  return {
    update(done, total) {
      first ??= done;
      const speed = rateText((done - first) / Math.max((Date.now() - started) / 1000, 1e-3));
      if (!running) { bar.start(total ?? done, done, { speed }); running = true; }
      if (total !== null) bar.setTotal(total);
      bar.update(done, { speed });
    },
    stop() { if (running) bar.stop(); },
  };
}
