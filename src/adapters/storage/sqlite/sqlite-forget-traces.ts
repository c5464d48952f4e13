import { forgottenStoredData } from '../../../core/events/memory-events.ts';
import type { Scope } from '../../../core/scope.ts';
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
  s = {
    events: (scope, id) => events.all(id, scope.tenantId, scope.mode, scope.workspace),
    rewrite: (seq, data) => { rewrite.run(data, seq); },
    scrubDeliveries: (scope, id) => { scrub.run(FORGOTTEN_DELIVERY_ERROR, id, scope.tenantId, scope.mode, scope.workspace); },
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
 *   is replaced by FORGOTTEN_DELIVERY_ERROR.
 * Nothing else holds its content: kept idempotent answers (G11, G10) never hold a memory (docs/api.md, "Forgetting");
 * the search log holds callers' queries, not memories. With `PRAGMA secure_delete` (sqlite.database.ts) and FTS5's
 * secure-delete (migration 19) the bytes go from the file too.
 */
export function forgetMemoryTraces(db: SqliteDb, scope: Scope, memoryId: string): void {
  const s = statementsOf(db);
  for (const e of s.events(scope, memoryId)) {
    const text = forgottenEventText(e.type, e.data, memoryId);
    if (text !== e.data) s.rewrite(e.seq, text);
  }
  s.scrubDeliveries(scope, memoryId);
}
