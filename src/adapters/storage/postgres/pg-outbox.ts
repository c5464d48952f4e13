import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import { eventMemoryId, storedEventData } from '../../../core/events/memory-events.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { fanOut, fanOutCandidates, type NewDelivery } from '../../../core/webhooks/fan-out.ts';
import { pgInt, pgJson, pgTime, type PgQueryable } from './pg-executor.ts';
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


  async appendInTx(tx: PgQueryable, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    if (events.length === 0) return [];
    if (this.serializeAppends) await tx.query('SELECT pg_advisory_xact_lock($1)', [EVENT_APPEND_LOCK]);
    // One statement for every event, rows in the order given (ORDER BY ord), so their seqs follow that order. The log
    // keeps storedEventData (a memory.deleted: only its id and the deletion's facts); the fan-out judges the event as
    // built (webhook filters read the deleted memory's tags and metadata). As SqliteOutbox.
    const rows = await tx.query<PgEventRow>(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at, memory_id)
      SELECT e.id, e.tenant_id, e.mode, e.workspace, e.type, e.data::jsonb, e.created_at::timestamptz, e.memory_id
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
        WITH ORDINALITY AS e(id, tenant_id, mode, workspace, type, data, created_at, memory_id, ord)
      ORDER BY e.ord RETURNING seq, id, tenant_id, mode, workspace, type, data, created_at`,
    [events.map((e) => e.id), events.map((e) => e.scope.tenantId), events.map((e) => e.scope.mode),
      events.map((e) => e.scope.workspace), events.map((e) => e.type), events.map((e) => pgJson(storedEventData(e))),
      events.map((e) => pgTime(e.createdAt)), events.map((e) => eventMemoryId(e.type, e.data))]);
    const byId = new Map(rows.map((r) => [r.id, toStoredEvent(r)]));
    const stored = events.map((e) => byId.get(e.id)!);
    // Each scope's active webhooks read once per append, however many events share it.
    const candidatesOf = new Map<string, Promise<PgWebhookRow[]>>();
    const deliveries: NewDelivery[] = [];
    for (const [i, e] of events.entries()) {
      const which = fanOutCandidates(e);
      const key = which.kind === 'all' ? '' : `${which.tenantId}\u0000${which.mode}`;
      let candidates = candidatesOf.get(key);
      if (!candidates) {
        candidates = which.kind === 'all'
          ? tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE status = 'active'")
          : tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE tenant_id = $1 AND mode = $2 AND status = 'active'",
            [which.tenantId, which.mode]);
        candidatesOf.set(key, candidates);
      }
      deliveries.push(...fanOut({ ...stored[i]!, data: e.data }, (await candidates).map(toWebhook)));
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
