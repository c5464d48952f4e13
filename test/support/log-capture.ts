import type { ServerOptions } from '../../src/app/server.ts';
import { describeLogLine } from '../../fuzz/oracle.ts';

/** One pino line: its level (30 info, 40 warn, 50 error, 60 fatal), message and fields. */
export interface LogLine {
  level: number;
  msg?: string;
  [field: string]: unknown;
}

export const WARN_LEVEL = 40;
export const ERROR_LEVEL = 50;

export interface LogCapture {
  /** Server options that send the app's log lines here (pass them as createTestApp's `server`). */
  server: Pick<ServerOptions, 'logLevel' | 'logStream'>;
  /** Every line so far, parsed. */
  lines: LogLine[];
  /** Lines at `level` or above, from index `from` (a `lines.length` taken earlier) on. */
  atLeast(level: number, from?: number): LogLine[];
}

/**
 * The log lines of a test app, kept in memory, at `level` and above: a test asserts what the server logged (that a
 * client's mistake logs no error, say). `warn` keeps them few: the app logs two info lines per request.
 */
export function captureLogs(level: 'info' | 'warn' = 'warn'): LogCapture {
  const lines: LogLine[] = [];
  return {
    server: { logLevel: level, logStream: { write: (line) => { lines.push(JSON.parse(line) as LogLine); } } },
    lines,
    atLeast: (min, from = 0) => lines.slice(from).filter((l) => l.level >= min),
  };
}

/** Lines for a failure message, one a line: level, message, error and its first stack frame. */
export const describeLogLines = (lines: readonly LogLine[]): string => lines.map(describeLogLine).join('\n');
