import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import { eventMemoryId, storedEventData } from '../../../core/events/memory-events.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { fanOut, fanOutCandidates, type NewDelivery } from '../../../core/webhooks/fan-out.ts';
import { pgInt, pgJson, pgTime, SqlParams, type PgQueryable, type PgStatement } from './pg-executor.ts';
import { toWebhook, type PgWebhookRow } from './pg-webhook.rows.ts';
import { CommitListeners } from '../commit-listeners.ts';

export interface PgEventRow {
  seq: number | string; id: string; tenant_id: string | null; mode: string | null; workspace: string | null; type: string;
  data: Record<string, unknown>; created_at: Date;
}

export const toStoredEvent = (r: PgEventRow): StoredEvent => ({
  seq: pgInt(r.seq),
  id: r.id,
  type: r.type,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode | null, workspace: r.workspace },
  data: r.data,
  createdAt: r.created_at,
});

/**
 * Serialises event appends across every connection and node: taken in the appending transaction and held until it
 * commits, so sequence numbers become visible in commit order and no reader of `seq > n` can pass one that commits
 * later (the ordering guarantee of EventRepository; docs/architecture.md, "Events").
 */
const EVENT_APPEND_LOCK = 0x6d6e656d; // 'mnem'

/** `FROM webhooks WHERE …`: the active webhooks that are candidates for any of `events` (fanOutCandidates). */
function candidateWebhooksSql(events: readonly NewEvent[], p: SqlParams): string {
  const which = events.map(fanOutCandidates);
  if (which.some((c) => c.kind === 'all')) return "FROM webhooks WHERE status = 'active'";
  const scoped = which.filter((c) => c.kind === 'scope');
  return `FROM webhooks WHERE status = 'active' AND (tenant_id, mode) IN
    (SELECT * FROM unnest(${p.add(scoped.map((c) => c.tenantId))}::text[], ${p.add(scoped.map((c) => c.mode))}::text[]))`;
}

/**
 * The outbox write, shared by every transaction that emits events: append the events and, for each, the pending
 * deliveries core's `fanOut` decides on, on the caller's transaction. Listeners of this process hear about the
 * events only after that transaction commits (`notify`). Mirrors SqliteOutbox.
 */
export class PgOutbox extends CommitListeners {
  /** @param serializeAppends take EVENT_APPEND_LOCK in each appending transaction (concurrent connections). */
  constructor(private readonly serializeAppends: boolean) {
    super();
  }


  /** The events INSERT, rows in the order given (ORDER BY ord) so that their seqs follow it; `where` may hold it back. */
  private insertEvents(events: readonly NewEvent[], p: SqlParams, where = 'TRUE'): string {
    // The log keeps storedEventData (a memory.deleted: only its id and the deletion's facts); the fan-out judges the
    // event as built (webhook filters read the deleted memory's tags and metadata). As SqliteOutbox.
    const column = (values: unknown[]) => p.add(values);
    return `INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at, memory_id)
      SELECT e.id, e.tenant_id, e.mode, e.workspace, e.type, e.data::jsonb, e.created_at::timestamptz, e.memory_id
      FROM unnest(${column(events.map((e) => e.id))}::text[], ${column(events.map((e) => e.scope.tenantId))}::text[],
        ${column(events.map((e) => e.scope.mode))}::text[], ${column(events.map((e) => e.scope.workspace))}::text[],
        ${column(events.map((e) => e.type))}::text[], ${column(events.map((e) => pgJson(storedEventData(e))))}::text[],
        ${column(events.map((e) => pgTime(e.createdAt)))}::text[], ${column(events.map((e) => eventMemoryId(e.type, e.data)))}::text[])
        WITH ORDINALITY AS e(id, tenant_id, mode, workspace, type, data, created_at, memory_id, ord)
      WHERE ${where}
      ORDER BY e.ord RETURNING seq, id, tenant_id, mode, workspace, type, data, created_at`;
  }

  /** The stored events, in the order given, from the rows of their INSERT. */
  private storedOf(events: readonly NewEvent[], rows: readonly PgEventRow[]): StoredEvent[] {
    const byId = new Map(rows.map((r) => [r.id, toStoredEvent(r)]));
    return events.map((e) => byId.get(e.id)!);
  }

  /**
   * A condition that holds when no active webhook is a candidate for any of `events` (fanOutCandidates): such an
   * append stores no delivery, so it needs no answer from the database before it commits.
   */
  noCandidateWebhooks(events: readonly NewEvent[], p: SqlParams): string {
    return `NOT EXISTS (SELECT 1 ${candidateWebhooksSql(events, p)})`;
  }

  /**
   * The statements of an append for a pipelined transaction (PgExecutor.pipelineTransaction), which cannot read the
   * candidate webhooks before it commits: the event lock, then the events, inserted only where `guard` holds (built on
   * the same parameters; {@link noCandidateWebhooks} or a condition that implies it). `storedBy` reads the last
   * statement's rows: the stored events, or null when the guard held them back (then nothing was appended).
   */
  pipelinedAppend(events: readonly NewEvent[], guard: (p: SqlParams) => string): {
    statements: PgStatement[]; storedBy: (rows: readonly PgEventRow[]) => StoredEvent[] | null;
  } {
    const p = new SqlParams();
    const where = guard(p);
    const insert = { sql: this.insertEvents(events, p, where), params: p.values };
    return {
      statements: this.serializeAppends ? [{ sql: 'SELECT pg_advisory_xact_lock($1)', params: [EVENT_APPEND_LOCK] }, insert] : [insert],
      storedBy: (rows) => (rows.length === 0 ? null : this.storedOf(events, rows)),
    };
  }

  async appendInTx(tx: PgQueryable, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    // The lock, the events and the candidate webhooks are sent together (one round trip on a pipelining connection)
    // and run in this order: the webhooks are read with the lock held.
    const lock = this.serializeAppends ? tx.query('SELECT pg_advisory_xact_lock($1)', [EVENT_APPEND_LOCK]) : Promise.resolve([]);
    const p = new SqlParams();
    const inserted = tx.query<PgEventRow>(this.insertEvents(events, p), p.values);
    // Every scope's active webhooks in one statement, however many events share one.
    const w = new SqlParams();
    const candidates = tx.query<PgWebhookRow>(`SELECT * ${candidateWebhooksSql(events, w)}`, w.values);
    const [, rows, hooks] = await Promise.all([lock, inserted, candidates]);
    const stored = this.storedOf(events, rows);
    const webhooks = hooks.map(toWebhook);
    const deliveries: NewDelivery[] = [];
    for (const [i, e] of events.entries()) {
      const which = fanOutCandidates(e);
      const mine = which.kind === 'all' ? webhooks : webhooks.filter((w) => w.scope.tenantId === which.tenantId && w.scope.mode === which.mode);
      deliveries.push(...fanOut({ ...stored[i]!, data: e.data }, mine));
    }
    if (deliveries.length > 0) {
      await tx.query(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, state, next_attempt_at, created_at)
        SELECT d.id, d.webhook_id, d.event_seq, 'pending', d.due::timestamptz, d.created::timestamptz
        FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[]) WITH ORDINALITY AS d(id, webhook_id, event_seq, due, created, ord)
        ORDER BY d.ord`,
      [deliveries.map((d) => d.id), deliveries.map((d) => d.webhookId), deliveries.map((d) => String(d.eventSeq)),
        deliveries.map((d) => pgTime(d.dueAt)), deliveries.map((d) => pgTime(d.createdAt))]);
    }
    return stored;
  }
}
