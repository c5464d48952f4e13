import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import { eventMemoryId, storedEventData } from '../../../core/events/memory-events.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { fanOut, fanOutCandidates } from '../../../core/webhooks/fan-out.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { toWebhook, type WebhookRow } from './sqlite-webhook.rows.ts';
import { CommitListeners } from '../commit-listeners.ts';

export interface EventRow {
  seq: number; id: string; tenant_id: string | null; mode: string | null; workspace: string | null; type: string;
  data: string; created_at: number;
}

export const toStoredEvent = (r: EventRow): StoredEvent => ({
  seq: r.seq,
  id: r.id,
  type: r.type,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode | null, workspace: r.workspace },
  data: JSON.parse(r.data) as Record<string, unknown>,
  createdAt: new Date(r.created_at),
});

/**
 * The outbox write, shared by every transaction that emits events: append the events and, for each, store the
 * pending deliveries the core's `fanOut` decides on, from the candidate webhooks read in the same transaction (so
 * an event and its deliveries commit together). Must run inside the caller's transaction. Listeners hear about the events
 * only after that transaction commits (see `notifyAfterCommit`).
 */
export class SqliteOutbox extends CommitListeners {
  private readonly insertEvent;
  private readonly candidates;
  private readonly systemCandidates;
  private readonly insertDelivery;

  constructor(private readonly db: SqliteDb) {
    super();
    this.insertEvent = db.prepare<unknown[], EventRow>(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at, memory_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`);
    this.candidates = db.prepare<[string, string], WebhookRow>(
      "SELECT * FROM webhooks WHERE tenant_id = ? AND mode = ? AND status = 'active'");
    this.systemCandidates = db.prepare<[], WebhookRow>("SELECT * FROM webhooks WHERE status = 'active'");
    this.insertDelivery = db.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, state, next_attempt_at, created_at)
      VALUES (?, ?, ?, 'pending', ?, ?)`);
  }

  /** Inside a transaction: append and fan out. */
  appendInTx(events: readonly NewEvent[]): StoredEvent[] {
    const stored: StoredEvent[] = [];
    for (const e of events) {
      // The log keeps storedEventData (a memory.deleted: only its id and the deletion's facts); the fan-out judges
      // the event as built (webhook filters read the deleted memory's tags and metadata).
      const row = this.insertEvent.get(e.id, e.scope.tenantId, e.scope.mode, e.scope.workspace, e.type,
        JSON.stringify(storedEventData(e)), e.createdAt.getTime(), eventMemoryId(e.type, e.data))!;
      const event = toStoredEvent(row);
      stored.push(event);
      const which = fanOutCandidates(e);
      const candidates = which.kind === 'all' ? this.systemCandidates.all() : this.candidates.all(which.tenantId, which.mode);
      for (const d of fanOut({ ...event, data: e.data }, candidates.map(toWebhook))) {
        this.insertDelivery.run(d.id, d.webhookId, d.eventSeq, d.dueAt.getTime(), d.createdAt.getTime());
      }
    }
    return stored;
  }
}
