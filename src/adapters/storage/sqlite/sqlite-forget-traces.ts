import { forgottenStoredData } from '../../../core/events/memory-events.ts';
import { forgetInJob, ingestionWriteOf } from '../../../core/ingestion/ingestion-forget.ts';
import type { Scope } from '../../../core/scope.ts';
import type { StoredMessage, StoredProposal } from '../ingestion-row.ts';
import type { SqliteDb } from './sqlite.database.ts';

/**
 * What a webhook delivery's `last_error` says once the memory its event was about is forgotten: the excerpt of the
 * receiver's answer it held may echo the payload that was sent (a receiver answering with the body it got).
 */
export const FORGOTTEN_DELIVERY_ERROR = 'answer excerpt dropped: the memory was forgotten';

interface Statements {
  events: (scope: Scope, memoryId: string) => { seq: number; type: string; data: string }[];
  rewrite: (seq: number, data: string) => void;
  scrubDeliveries: (scope: Scope, memoryId: string) => void;
  job: (scope: Scope, jobId: string) => { messages: string; proposals: string } | undefined;
  rewriteJob: (id: string, messages: string, proposals: string) => void;
}

/** Prepared once per connection (a delete runs this in its transaction, a forget once per memory). */
const prepared = new WeakMap<SqliteDb, Statements>();

function statementsOf(db: SqliteDb): Statements {
  let s = prepared.get(db);
  if (s) return s;
  // events_memory (migration 18) finds them; the scope is checked on each row.
  const events = db.prepare<[string, string, string, string], { seq: number; type: string; data: string }>(
    'SELECT seq, type, data FROM events WHERE memory_id = ? AND +tenant_id = ? AND +mode = ? AND +workspace = ?');
  const rewrite = db.prepare<[string, number]>('UPDATE events SET data = ? WHERE seq = ?');
  const scrub = db.prepare<[string, string, string, string, string]>(`UPDATE webhook_deliveries SET last_error = ?
    WHERE last_error IS NOT NULL AND event_seq IN (SELECT seq FROM events WHERE memory_id = ? AND +tenant_id = ? AND +mode = ? AND +workspace = ?)`);
  const job = db.prepare<[string, string, string, string], { messages: string; proposals: string }>(
    'SELECT messages, proposals FROM ingestions WHERE id = ? AND tenant_id = ? AND mode = ? AND workspace = ?');
  // The revision goes up so that a review saved over what it read before fails, and the lease goes so that a worker
  // holding it cannot save its copy of the proposals back (the job is taken again and finds them decided).
  const rewriteJob = db.prepare<[string, string, string]>(`UPDATE ingestions SET messages = ?, proposals = ?,
    revision = revision + 1, lease_token = NULL, lease_until = NULL WHERE id = ?`);
  s = {
    events: (scope, id) => events.all(id, scope.tenantId, scope.mode, scope.workspace),
    rewrite: (seq, data) => { rewrite.run(data, seq); },
    scrubDeliveries: (scope, id) => { scrub.run(FORGOTTEN_DELIVERY_ERROR, id, scope.tenantId, scope.mode, scope.workspace); },
    job: (scope, jobId) => job.get(jobId, scope.tenantId, scope.mode, scope.workspace),
    rewriteJob: (id, messages, proposals) => { rewriteJob.run(messages, proposals, id); },
  };
  prepared.set(db, s);
  return s;
}

/** The stored text of a forgotten memory's event (`forgottenStoredData`; an unreadable text keeps the id only). */
export function forgottenEventText(type: string, text: string, memoryId: string): string {
  let data: unknown = null;
  try {
    data = JSON.parse(text);
  } catch {
    // Unreadable: nothing of it is kept.
  }
  return JSON.stringify(forgottenStoredData(type, data, memoryId));
}

/**
 * Removes what a deleted memory left outside its row, in the caller's transaction (see MemoryStore.delete):
 * - its stored events (events.memory_id: memory.*, embedding.generated) are rewritten to `forgottenEventData`, so
 *   stream replays, G8 resume and the webhook deliveries still due — which read the event row when they are sent,
 *   never a copy — carry its id only;
 * - the `last_error` of those events' deliveries (an excerpt of the receiver's answer, which may echo the payload)
 *   is replaced by FORGOTTEN_DELIVERY_ERROR;
 * - the ingestion job that wrote it loses its text: the proposal's content and the messages it came from are blanked
 *   (forgetInJob). The memory's `clientId` names the job: every memory a job writes carries `ingest:<job>:<proposal>`
 *   (a primary-key read, not a scan of the scope's jobs; it also finds a job that has not recorded the memory yet).
 * Nothing else holds its content: kept idempotent answers (G11, G10) never hold a memory (docs/api.md, "Forgetting");
 * the search log holds callers' queries, not memories. With `PRAGMA secure_delete` (sqlite.database.ts) and FTS5's
 * secure-delete (migration 19) the bytes go from the file too.
 */
export function forgetMemoryTraces(db: SqliteDb, scope: Scope, memoryId: string, clientId: string | null): void {
  const s = statementsOf(db);
  for (const e of s.events(scope, memoryId)) {
    const text = forgottenEventText(e.type, e.data, memoryId);
    if (text !== e.data) s.rewrite(e.seq, text);
  }
  s.scrubDeliveries(scope, memoryId);
  const write = ingestionWriteOf(clientId);
  const job = write ? s.job(scope, write.jobId) : undefined;
  if (!write || !job) return;
  const kept = forgetInJob(JSON.parse(job.proposals) as StoredProposal[], JSON.parse(job.messages) as StoredMessage[], memoryId, write);
  if (kept) s.rewriteJob(write.jobId, JSON.stringify(kept.messages), JSON.stringify(kept.proposals));
}
