/**
 * What every answer must satisfy, whatever was sent: no server error, an answer in time, and nothing of the
 * server's insides (stack frames, source paths, SQL) in the body.
 */
export interface Answer {
  status: number;
  body: string;
  ms: number;
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
