import { createHash, randomBytes } from 'node:crypto';

/** A statement text seen this many times is prepared from then on (one-off texts are not worth a server-side plan). */
const PREPARE_AFTER = 2;
/** Distinct texts prepared at most, per process: each is kept by every pooled connection that ran it. */
const MAX_PREPARED = 256;
/** Texts counted at most before the counts start afresh (texts built with a varying number of rows never repeat). */
const MAX_COUNTED = 4096;

/**
 * Which statements a pooled executor sends as named, prepared statements, and under which names. The server then
 * parses each once per connection and may keep a generic plan, which for the search path's short statements costs
 * more than running them (BENCHMARKS.md, "PostgreSQL server: where search time goes").
 *
 * A name is the text's hash and a suffix of the connection's own: one name never stands for two texts (a pooler that
 * hands one server session to several nodes' connections cannot bind another node's statement under it), and two
 * connections sharing one session (PGlite behind pglite-socket in the tests) do not prepare the same name twice.
 * A server that loses or already holds a statement (a transaction-mode pooler, `DISCARD ALL`) turns preparing off for
 * the process: see {@link isLostPreparedStatement}.
 */
export class PreparedStatementNames {
  private readonly counts = new Map<string, number>();
  private readonly names = new Map<string, string>();
  private readonly suffixes = new WeakMap<object, string>();
  private on: boolean;

  constructor(enabled: boolean) {
    this.on = enabled;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** The name `text` is prepared under on `connection`, or null to send it unnamed. */
  nameFor(text: string, connection: object): string | null {
    if (!this.on) return null;
    let base = this.names.get(text);
    if (base === undefined) {
      const seen = (this.counts.get(text) ?? 0) + 1;
      if (seen < PREPARE_AFTER || this.names.size >= MAX_PREPARED) {
        if (this.counts.size >= MAX_COUNTED) this.counts.clear();
        this.counts.set(text, seen);
        return null;
      }
      this.counts.delete(text);
      base = `mnemo_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      this.names.set(text, base);
    }
    let suffix = this.suffixes.get(connection);
    if (suffix === undefined) this.suffixes.set(connection, (suffix = randomBytes(5).toString('hex')));
    return `${base}_${suffix}`;
  }

  /** From now on every statement goes unnamed. */
  turnOff(): void {
    this.on = false;
  }
}

/**
 * The server does not hold a statement this connection prepared (26000: a transaction-mode pooler moved the
 * connection to another server session, or the session was reset), already holds its name (42P05: a session shared
 * with another connection that prepared it), or cannot run it as prepared because a table it reads changed shape
 * (0A000 "cached plan must not change result type": another node's migration during a rolling upgrade): the statement
 * did not run, and can be sent again unnamed.
 */
export const isLostPreparedStatement = (err: unknown): boolean => {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '26000' || e?.code === '42P05'
    || (e?.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type'));
};
