import cliProgress from 'cli-progress';

/**
 * Progress for long phases, on stderr so stdout stays pure markdown. A terminal gets a cli-progress bar; a log file
 * (stderr not a TTY) gets a start line, a line every ~10 s and an end line instead of control characters.
 */
export interface Phase {
  update(value: number): void;
  increment(by?: number): void;
  stop(note?: string): void;
}

export function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

export function phase(label: string, total: number, unit = ''): Phase {
  const started = performance.now();
  let value = 0;
  const elapsed = () => ((performance.now() - started) / 1000).toFixed(1);

  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar({
      format: `${label.padEnd(34)} [{bar}] {value}/{total}${unit ? ` ${unit}` : ''} | {duration_formatted} | eta {eta_formatted}`,
      stream: process.stderr,
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
    }, cliProgress.Presets.shades_classic);
    bar.start(total, 0);
    return {
      update: (v) => { value = v; bar.update(v); },
      increment: (by = 1) => { value += by; bar.update(value); },
      stop: (note) => {
        bar.update(value);
        bar.stop();
        if (note) log(`  ${note}`);
      },
    };
  }

  log(`${label}: started (${total}${unit ? ` ${unit}` : ''})`);
  let lastLine = performance.now();
  const maybeLog = () => {
    if (performance.now() - lastLine < 10_000) return;
    lastLine = performance.now();
    log(`${label}: ${value}/${total}${unit ? ` ${unit}` : ''} after ${elapsed()} s`);
  };
  return {
    update: (v) => { value = v; maybeLog(); },
    increment: (by = 1) => { value += by; maybeLog(); },
    stop: (note) => log(`${label}: done in ${elapsed()} s${note ? ` (${note})` : ''}`),
  };
}
