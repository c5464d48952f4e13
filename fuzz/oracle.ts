/**
 * What every answer must satisfy, whatever was sent: no server error, an answer in time, and nothing of the
 * server's insides (stack frames, source paths, SQL) in the body.
 */
export interface Answer {
  status: number;
  body: string;
  ms: number;
  /** The answer's headers, where the transport has them (the dashboard's cases read its cookies). */
  headers?: Record<string, string | string[] | number | undefined>;
}

const LEAKS: [what: string, pattern: RegExp][] = [
  ['a stack frame', /\n\s+at \S|\bat [\w.<>]+ \(\S+:\d+:\d+\)|at (?:file:\/\/)?\/\S+:\d+:\d+/],
  ['a source path', /\.(?:ts|js|mjs|cjs):\d+/],
  ['SQLite error text', /SQLITE_[A-Z]|sqlite3?\b.*error|no such (?:table|column)/i],
  ['SQL', /\bSELECT\s+\S+.*\bFROM\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b|\bDELETE FROM\b|near "[^"]*": syntax error/i],
];

/** Problems with one answer; `sent` is the request's text, so a value merely echoed back is not counted as a leak. */
export function judge(answer: Answer, sent: string, timeBoundMs: number): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (answer.ms > timeBoundMs) problems.push(`answered after ${Math.round(answer.ms)} ms (bound ${timeBoundMs} ms)`);
  for (const [what, pattern] of LEAKS) {
    const m = pattern.exec(answer.body);
    if (m && !sent.includes(m[0])) problems.push(`${what} in the body: ${JSON.stringify(m[0].slice(0, 80))}`);
  }
  return problems;
}

/** The server's log lines at this pino level or above are problems of the case that caused them. */
export const ERROR_LOG_LEVEL = 50;

/** A pino line in one line of text: level, message, the error's type, message and first stack frame, the request. */
export function describeLogLine(line: Record<string, unknown>): string {
  const err = line.err as { type?: string; message?: string; stack?: string } | undefined;
  const frame = err?.stack?.split('\n').find((s) => s.trim().startsWith('at '))?.trim();
  const req = line.req as { method?: string; url?: string } | undefined;
  const error = err ? ` ${err.type ?? ''}: ${err.message ?? ''}${frame ? ` (${frame})` : ''}` : '';
  return `[level ${String(line.level)}] ${String(line.msg ?? '')}${error}${req?.url ? ` ${req.method} ${req.url.slice(0, 120)}` : ''}`;
}
