import { forgottenStoredData } from '../../../core/events/memory-events.ts';
import type { Scope } from '../../../core/scope.ts';
import { pgJson, type PgQueryable } from './pg-executor.ts';

/** As SQLite's (sqlite-forget-traces.ts): a forgotten memory's deliveries keep no excerpt of the receiver's answer. */
export const FORGOTTEN_DELIVERY_ERROR = 'answer excerpt dropped: the memory was forgotten';

/**
 * Removes what a deleted memory left outside its row, on the caller's transaction (see MemoryStore.delete); mirrors
 * SQLite's forgetMemoryTraces:
 * - its stored events (events.memory_id: memory.*, embedding.generated) are rewritten to `forgottenEventData`, so
 *   stream replays, G8 resume and the webhook deliveries still due (which read the event row when sent) carry its
 *   id only;
 * - the `last_error` of those events' deliveries (an excerpt of the receiver's answer, which may echo the payload)
 *   is replaced by FORGOTTEN_DELIVERY_ERROR.
 * The rows' old versions are dead tuples until VACUUM reclaims them (autovacuum does): no query sees them, but
 * they stay in the table's files until then (docs/api.md, "Forgetting").
 */
export async function forgetMemoryTraces(tx: PgQueryable, scope: Scope, memoryId: string): Promise<void> {
  // By events_memory alone: with the scope in the WHERE the planner may walk the tenant's events (events_scope_seq)
  // instead, every event of the tenant per forgotten memory. The scope is checked on the few rows found.
  const found = await tx.query<{ seq: number | string; type: string; data: unknown; tenant_id: string | null; mode: string | null; workspace: string | null }>(
    'SELECT seq, type, data, tenant_id, mode, workspace FROM events WHERE memory_id = $1', [memoryId]);
  const events = found.filter((e) => e.tenant_id === scope.tenantId && e.mode === scope.mode && e.workspace === scope.workspace);
  for (const e of events) {
    const kept = forgottenStoredData(e.type, e.data, memoryId);
    if (JSON.stringify(kept) === JSON.stringify(e.data)) continue;
    await tx.query('UPDATE events SET data = $1 WHERE seq = $2', [pgJson(kept), e.seq]);
  }
  if (events.length > 0) {
    await tx.query(`UPDATE webhook_deliveries SET last_error = $1
      WHERE last_error IS NOT NULL AND event_seq = ANY($2::bigint[])`, [FORGOTTEN_DELIVERY_ERROR, events.map((e) => String(e.seq))]);
  }
}
