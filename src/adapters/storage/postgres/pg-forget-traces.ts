import { forgottenStoredData } from '../../../core/events/memory-events.ts';
import { forgetInJob, ingestionWriteOf } from '../../../core/ingestion/ingestion-forget.ts';
import type { Scope } from '../../../core/scope.ts';
import type { StoredMessage, StoredProposal } from '../ingestion-row.ts';
import { pgJson, type PgQueryable } from './pg-executor.ts';

/** As SQLite's (sqlite-forget-traces.ts): a forgotten memory's deliveries keep no excerpt of the receiver's answer. */
export const FORGOTTEN_DELIVERY_ERROR = 'answer excerpt dropped: the memory was forgotten';

/**
 * Locks the ingestion job that wrote memory `memoryId`, if any, before the memory's row is deleted: with the job
 * always locked before its memories, two transactions forgetting memories of one job (a forget by filter, a DELETE)
 * wait for each other instead of deadlocking (each holding a memory the other needs, and one of them the job).
 */
export async function lockIngestionOf(tx: PgQueryable, scope: Scope, memoryId: string): Promise<void> {
  const [memory] = await tx.query<{ client_id: string | null }>(
    'SELECT client_id FROM memories WHERE tenant_id = $1 AND mode = $2 AND workspace = $3 AND id = $4',
    [scope.tenantId, scope.mode, scope.workspace, memoryId]);
  const write = ingestionWriteOf(memory?.client_id ?? null);
  if (write) await tx.query('SELECT 1 FROM ingestions WHERE id = $1 FOR UPDATE', [write.jobId]);
}

/**
 * Removes what a deleted memory left outside its row, on the caller's transaction (see MemoryStore.delete); mirrors
 * SQLite's forgetMemoryTraces:
 * - its stored events (events.memory_id: memory.*, embedding.generated) are rewritten to `forgottenEventData`, so
 *   stream replays, G8 resume and the webhook deliveries still due (which read the event row when sent) carry its
 *   id only;
 * - the `last_error` of those events' deliveries (an excerpt of the receiver's answer, which may echo the payload)
 *   is replaced by FORGOTTEN_DELIVERY_ERROR;
 * - the ingestion job that wrote it (named by its client id `ingest:<job>:<proposal>`) loses its text: the proposal's
 *   content and the messages it came from are blanked (forgetInJob).
 * The rows' old versions are dead tuples until VACUUM reclaims them (autovacuum does): no query sees them, but
 * they stay in the table's files until then (docs/api.md, "Forgetting").
 */
export async function forgetMemoryTraces(tx: PgQueryable, scope: Scope, memoryId: string, clientId: string | null): Promise<void> {
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
  const write = ingestionWriteOf(clientId);
  if (!write) return;
  // FOR UPDATE: a worker's or a review's save committing meanwhile is waited for and read, not overwritten.
  const [job] = await tx.query<{ messages: StoredMessage[]; proposals: StoredProposal[] }>(`SELECT messages, proposals FROM ingestions
    WHERE id = $1 AND tenant_id = $2 AND mode = $3 AND workspace = $4 FOR UPDATE`, [write.jobId, scope.tenantId, scope.mode, scope.workspace]);
  const kept = job ? forgetInJob(job.proposals, job.messages, memoryId, write) : null;
  if (!kept) return;
  // As SQLite's: the revision goes up (a review over what it read before fails) and the lease goes (a worker holding
  // it cannot save its copy of the proposals back; the job is taken again and finds them decided).
  await tx.query(`UPDATE ingestions SET messages = $1::jsonb, proposals = $2::jsonb, revision = revision + 1,
    lease_token = NULL, lease_until = NULL WHERE id = $3`, [pgJson(kept.messages), pgJson(kept.proposals), write.jobId]);
}
