import type { NewEvent, StoredEvent } from '../../../core/events/event.types.ts';
import { prefixedId } from '../../../core/ids.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { webhookWants } from '../../../core/webhooks/webhook-filters.ts';
import { pgInt, pgTime, type PgQueryable } from './pg-executor.ts';
import { toWebhook, type PgWebhookRow } from './pg-webhook.rows.ts';

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
 * The outbox write, shared by every transaction that emits events: append the events and, for each, a pending
 * delivery per webhook that wants it, on the caller's transaction. Listeners of this process hear about the events
 * only after that transaction commits (`notify`). Mirrors SqliteOutbox; when fan-out moves into the core, only
 * `appendInTx` loses its delivery half.
 */
export class PgOutbox {
  private readonly listeners = new Set<(events: readonly StoredEvent[]) => void>();

  async appendInTx(tx: PgQueryable, events: readonly NewEvent[]): Promise<StoredEvent[]> {
    const stored: StoredEvent[] = [];
    for (const e of events) {
      const [row] = await tx.query<PgEventRow>(`INSERT INTO events (id, tenant_id, mode, workspace, type, data, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [e.id, e.scope.tenantId, e.scope.mode, e.scope.workspace, e.type, JSON.stringify(e.data), pgTime(e.createdAt)]);
      const event = toStoredEvent(row!);
      stored.push(event);
      const webhooks = e.scope.tenantId === null || e.scope.mode === null
        ? await tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE status = 'active'")
        : await tx.query<PgWebhookRow>("SELECT * FROM webhooks WHERE tenant_id = $1 AND mode = $2 AND status = 'active'",
          [e.scope.tenantId, e.scope.mode]);
      for (const w of webhooks) {
        if (webhookWants(toWebhook(w), event)) {
          await tx.query(`INSERT INTO webhook_deliveries (id, webhook_id, event_seq, state, next_attempt_at, created_at)
            VALUES ($1, $2, $3, 'pending', $4, $4)`, [prefixedId('dlv', 24), w.id, event.seq, pgTime(e.createdAt)]);
        }
      }
    }
    return stored;
  }

  /** After the commit: wake streams and the delivery worker of this process. */
  notify(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    for (const listener of this.listeners) {
      try {
        listener(events);
      } catch {
        // A listener's failure must not fail the write that already committed.
      }
    }
  }

  onAppended(listener: (events: readonly StoredEvent[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
