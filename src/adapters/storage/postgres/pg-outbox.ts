import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import { eventMemoryId, storedEventData } from '../../../core/events/memory-events.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { fanOut, fanOutCandidates } from '../../../core/webhooks/fan-out.ts';
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
    const stored: StoredEvent[] = [];
    for (const e of events) {
      // The log keeps storedEventData (a memory.deleted: only its id and the deletion's facts); the fan-out judges
      // the event as built (webhook filters read the deleted memory's tags and metadata). As SqliteOutbox.
      const [row] = await tx.query<PgEventRow>(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at, memory_id)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [e.id, e.scope.tenantId, e.scope.mode, e.scope.workspace, e.type, pgJson(storedEventData(e)), pgTime(e.createdAt),
        eventMemoryId(e.type, e.data)]);
      const event = toStoredEvent(row!);
      stored.push(event);
      const which = fanOutCandidates(e);
      const candidates = which.kind === 'all'
        ? await tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE status = 'active'")
        : await tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE tenant_id = $1 AND mode = $2 AND status = 'active'",
          [which.tenantId, which.mode]);
      for (const d of fanOut({ ...event, data: e.data }, candidates.map(toWebhook))) {
        await tx.query(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, state, next_attempt_at, created_at)
          VALUES ($1, $2, $3, 'pending', $4, $5)`, [d.id, d.webhookId, d.eventSeq, pgTime(d.dueAt), pgTime(d.createdAt)]);
      }
    }
    return stored;
  }
}
