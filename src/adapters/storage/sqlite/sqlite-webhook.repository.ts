import type { EventScope } from '../../../core/events/event.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SealedValue } from '../../../core/secrets/secret.types.ts';
import type { WebhookRepository } from '../../../core/webhooks/webhook.repository.ts';
import { webhookSecretContext } from '../../../core/webhooks/webhook-secret.ts';
import { WEBHOOK_FLAVOURS } from '../../../core/webhooks/webhook-flavours.ts';
import type { ClaimedDelivery, DeliveryRecord, WebhookKind } from '../../../core/webhooks/webhook.types.ts';
import type { SqliteDb } from './sqlite.database.ts';
import { toStoredEvent, type EventRow } from './sqlite-outbox.ts';
import { storedSecretOf, toWebhook, type WebhookRow } from './sqlite-webhook.rows.ts';

interface DeliveryRow {
  seq: number; id: string; webhook_id: string; event_seq: number; attempts: number; state: string;
  next_attempt_at: number; lease_until: number | null;
}

interface DeliveryRecordRow {
  id: string; webhook_id: string; state: string; attempts: number; next_attempt_at: number; last_status: number | null;
  last_error: string | null; created_at: number; finished_at: number | null; event_id: string | null; event_type: string | null;
}

const toDeliveryRecord = (r: DeliveryRecordRow): DeliveryRecord => ({
  id: r.id, webhookId: r.webhook_id, eventId: r.event_id, eventType: r.event_type, state: r.state as DeliveryRecord['state'],
  attempts: r.attempts, nextAttemptAt: r.state === 'pending' ? new Date(r.next_attempt_at) : null, lastStatus: r.last_status,
  lastError: r.last_error, createdAt: new Date(r.created_at), finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
});

interface SecretRow { seq: number; id: string; kind: string; tenant_id: string; mode: string; workspace: string | null }
interface PlaintextRow extends SecretRow { plaintext_secret: string }
interface SealedRow extends SecretRow { secret_key_id: string; secret_wrapped_key: string; secret_payload: string }

/** `sealedSecrets` refs: the row's seq, the order they are paged in. */
function parseRef(ref: string): number {
  const seq = Number(ref);
  if (!Number.isSafeInteger(seq) || String(seq) !== ref) throw new Error(`not a webhook secret ref: ${ref}`);
  return seq;
}

function scopeWhere(scope: EventScope, kind: WebhookKind): { sql: string; params: unknown[] } {
  return WEBHOOK_FLAVOURS[kind].scoped === 'workspace'
    ? { sql: 'kind = ? AND tenant_id = ? AND mode = ? AND workspace = ?', params: [kind, scope.tenantId, scope.mode, scope.workspace] }
    : { sql: 'kind = ? AND tenant_id = ? AND mode = ?', params: [kind, scope.tenantId, scope.mode] };
}

export function createSqliteWebhookRepository(db: SqliteDb): WebhookRepository {
  const insert = db.prepare(`INSERT INTO webhooks (id, kind, tenant_id, mode, workspace, url, events, description,
    status, retry_policy, filters, created_at, updated_at, secret_key_id, secret_wrapped_key, secret_payload)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const plaintextSecrets = db.prepare<[number], PlaintextRow>(`SELECT seq, id, kind, tenant_id, mode, workspace, plaintext_secret
    FROM webhooks WHERE plaintext_secret IS NOT NULL ORDER BY seq LIMIT ?`);
  const sealSecret = db.prepare(`UPDATE webhooks SET plaintext_secret = NULL, secret_key_id = ?, secret_wrapped_key = ?,
    secret_payload = ? WHERE id = ? AND plaintext_secret = ?`);
  const sealedSecrets = db.prepare<[number, number], SealedRow>(`SELECT seq, id, kind, tenant_id, mode, workspace, secret_key_id,
    secret_wrapped_key, secret_payload FROM webhooks WHERE seq > ? AND secret_key_id IS NOT NULL ORDER BY seq LIMIT ?`);
  const rewrapSecret = db.prepare(`UPDATE webhooks SET secret_key_id = ?, secret_wrapped_key = ?, secret_payload = ?
    WHERE seq = ? AND secret_key_id IS NOT NULL`);
  const sealAll = db.transaction((rows: readonly { id: string; plaintext: string; sealed: SealedValue }[]) => rows.reduce((n, r) =>
    n + sealSecret.run(r.sealed.keyId, r.sealed.wrappedKey, r.sealed.payload, r.id, r.plaintext).changes, 0));
  const scopeOf = (r: SecretRow) => ({ tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace });
  const webhookById = db.prepare<[string], WebhookRow>('SELECT * FROM webhooks WHERE id = ?');
  const eventBySeq = db.prepare<[number], EventRow>('SELECT * FROM events WHERE seq = ?');

  // Prepared once: the delivery worker claims after every write that appends events (each create), so compiling these
  // statements per call cost more than running them when nothing is due.
  const dueDeliveries = db.prepare<[number, number, number], DeliveryRow>(`SELECT d.* FROM webhook_deliveries d
    JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
      AND w.status = 'active'
    ORDER BY d.next_attempt_at, d.event_seq LIMIT ?`);
  const leasedPerWebhook = db.prepare<[number], { webhook_id: string; n: number }>(`SELECT webhook_id, COUNT(*) AS n
    FROM webhook_deliveries WHERE state = 'pending' AND lease_until > ? GROUP BY webhook_id`);
  const lease = db.prepare('UPDATE webhook_deliveries SET lease_until = ? WHERE id = ?');
  const claimTx = db.transaction((now: number, limit: number, perWebhook: number, leaseMs: number): ClaimedDelivery[] => {
    const due = dueDeliveries.all(now, now, limit * 4);
    const inFlight = new Map<string, number>();
    for (const r of leasedPerWebhook.all(now)) inFlight.set(r.webhook_id, r.n);
    const claimed: ClaimedDelivery[] = [];
    for (const d of due) {
      if (claimed.length >= limit) break;
      const n = inFlight.get(d.webhook_id) ?? 0;
      if (n >= perWebhook) continue;
      const webhook = webhookById.get(d.webhook_id);
      const event = eventBySeq.get(d.event_seq);
      if (!webhook || !event) continue;
      inFlight.set(d.webhook_id, n + 1);
      lease.run(now + leaseMs, d.id);
      claimed.push({
        delivery: { id: d.id, webhookId: d.webhook_id, eventSeq: d.event_seq, attempts: d.attempts, nextAttemptAt: new Date(d.next_attempt_at) },
        webhook: toWebhook(webhook),
        event: toStoredEvent(event),
        secret: storedSecretOf(webhook),
      });
    }
    return claimed;
  });

  const completeTx = db.transaction((id: string, result: Parameters<WebhookRepository['complete']>[1]) => {
    const d = db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?').get(id);
    if (!d || d.state !== 'pending') return;
    const at = result.at.getTime();
    if (result.ok) {
      db.prepare(`UPDATE webhook_deliveries SET state = 'succeeded', attempts = attempts + 1, lease_until = NULL,
        last_status = ?, last_error = NULL, finished_at = ? WHERE id = ?`).run(result.status, at, id);
      db.prepare(`UPDATE webhooks SET total_attempts = total_attempts + 1, successful_deliveries = successful_deliveries + 1,
        last_delivery_at = ? WHERE id = ?`).run(at, d.webhook_id);
      return;
    }
    if (result.retryAt) {
      db.prepare(`UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = ?,
        last_status = ?, last_error = ? WHERE id = ?`).run(result.retryAt.getTime(), result.status, result.error, id);
    } else {
      db.prepare(`UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, lease_until = NULL,
        last_status = ?, last_error = ?, finished_at = ? WHERE id = ?`).run(result.status, result.error, at, id);
    }
    db.prepare(`UPDATE webhooks SET total_attempts = total_attempts + 1, last_delivery_at = ?,
      failed_deliveries = failed_deliveries + ? WHERE id = ?`).run(at, result.retryAt ? 0 : 1, d.webhook_id);
    if (result.failWebhook) db.prepare("UPDATE webhooks SET status = 'failed', updated_at = ? WHERE id = ?").run(at, d.webhook_id);
  });

  return {
    async insert(w, secret) {
      insert.run(w.id, w.kind, w.scope.tenantId, w.scope.mode, w.scope.workspace, w.url, JSON.stringify(w.events), w.description,
        w.status, JSON.stringify(w.retryPolicy), JSON.stringify(w.filters), w.createdAt.getTime(), w.updatedAt.getTime(),
        secret.keyId, secret.wrappedKey, secret.payload);
    },

    async findById(scope, kind, id) {
      const where = scopeWhere(scope, kind);
      const row = db.prepare<unknown[], WebhookRow>(`SELECT * FROM webhooks WHERE ${where.sql} AND id = ?`).get(...where.params, id);
      return row ? toWebhook(row) : null;
    },

    async list(scope, kind, q) {
      const where = scopeWhere(scope, kind);
      let sql = `FROM webhooks WHERE ${where.sql}`;
      const params = [...where.params];
      if (q.active !== undefined) sql += q.active ? " AND status = 'active'" : " AND status <> 'active'";
      if (q.event !== undefined) {
        sql += ' AND EXISTS (SELECT 1 FROM json_each(webhooks.events) WHERE value = ?)';
        params.push(q.event);
      }
      const total = (db.prepare(`SELECT COUNT(*) AS n ${sql}`).get(...params) as { n: number }).n;
      const rows = db.prepare<unknown[], WebhookRow>(`SELECT * ${sql} ORDER BY created_at, seq LIMIT ? OFFSET ?`).all(...params, q.limit, q.offset);
      return { items: rows.map(toWebhook), total };
    },

    async countCreatedSince(scope, kind, since) {
      const where = scopeWhere(scope, kind);
      return (db.prepare(`SELECT COUNT(*) AS n FROM webhooks WHERE ${where.sql} AND created_at >= ?`).get(...where.params, since.getTime()) as { n: number }).n;
    },

    async update(scope, kind, id, patch, at) {
      const sets = ['updated_at = MAX(?, updated_at + 1)'];
      const values: unknown[] = [at.getTime()];
      const set = (column: string, value: unknown) => { sets.push(`${column} = ?`); values.push(value); };
      if (patch.url !== undefined) set('url', patch.url);
      if (patch.events !== undefined) set('events', JSON.stringify(patch.events));
      if (patch.description !== undefined) set('description', patch.description);
      if (patch.status !== undefined) set('status', patch.status);
      if (patch.retryPolicy !== undefined) set('retry_policy', JSON.stringify(patch.retryPolicy));
      if (patch.filters !== undefined) set('filters', JSON.stringify(patch.filters));
      const where = scopeWhere(scope, kind);
      const row = db.prepare<unknown[], WebhookRow>(`UPDATE webhooks SET ${sets.join(', ')} WHERE ${where.sql} AND id = ? RETURNING *`)
        .get(...values, ...where.params, id);
      return row ? toWebhook(row) : null;
    },

    async delete(scope, kind, id) {
      const where = scopeWhere(scope, kind);
      return db.transaction(() => {
        const gone = db.prepare(`DELETE FROM webhooks WHERE ${where.sql} AND id = ?`).run(...where.params, id).changes > 0;
        if (gone) db.prepare("DELETE FROM webhook_deliveries WHERE webhook_id = ? AND state = 'pending'").run(id);
        return gone;
      })();
    },

    async claimDue(now, limit, perWebhook, leaseMs) {
      return claimTx(now.getTime(), limit, perWebhook, leaseMs);
    },

    async complete(id, result) {
      completeTx(id, result);
    },

    async release(id, retryAt) {
      db.prepare("UPDATE webhook_deliveries SET lease_until = NULL, next_attempt_at = ? WHERE id = ? AND state = 'pending'").run(retryAt.getTime(), id);
    },

    async listDeliveries(scope, kind, webhookId, page) {
      const where = scopeWhere(scope, kind);
      if (!db.prepare(`SELECT 1 FROM webhooks WHERE ${where.sql} AND id = ?`).get(...where.params, webhookId)) return { items: [], total: 0 };
      const { n } = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?').get(webhookId)!;
      const rows = db.prepare<[string, number, number], DeliveryRecordRow>(`SELECT d.id, d.webhook_id, d.state, d.attempts, d.next_attempt_at,
        d.last_status, d.last_error, d.created_at, d.finished_at, e.id AS event_id, e.type AS event_type
        FROM webhook_deliveries d LEFT JOIN events e ON e.seq = d.event_seq
        WHERE d.webhook_id = ? ORDER BY d.seq DESC LIMIT ? OFFSET ?`).all(webhookId, page.limit, page.offset);
      return { items: rows.map(toDeliveryRecord), total: n };
    },

    async redeliver(scope, kind, webhookId, deliveryId, now) {
      const where = scopeWhere(scope, kind);
      if (!db.prepare(`SELECT 1 FROM webhooks WHERE ${where.sql} AND id = ?`).get(...where.params, webhookId)) return 'not_found';
      const changed = db.prepare(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ?, lease_until = NULL, finished_at = NULL
        WHERE id = ? AND webhook_id = ? AND state <> 'pending'`).run(now.getTime(), deliveryId, webhookId).changes;
      if (changed > 0) return 'requeued';
      return db.prepare('SELECT 1 FROM webhook_deliveries WHERE id = ? AND webhook_id = ?').get(deliveryId, webhookId) ? 'pending' : 'not_found';
    },

    async pendingCount() {
      return (db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE state = 'pending'").get() as { n: number }).n;
    },

    async plaintextSecrets(limit) {
      return plaintextSecrets.all(limit).map((r) => ({ id: r.id, kind: r.kind as WebhookKind, scope: scopeOf(r), plaintext: r.plaintext_secret }));
    },

    async sealSecrets(rows) {
      return sealAll(rows);
    },

    async sealedSecrets(after, limit) {
      return sealedSecrets.all(after === null ? Number.MIN_SAFE_INTEGER : parseRef(after), limit).map((r) => ({
        ref: String(r.seq),
        context: webhookSecretContext({ id: r.id, scope: scopeOf(r) }),
        sealed: { keyId: r.secret_key_id, wrappedKey: r.secret_wrapped_key, payload: r.secret_payload },
      }));
    },

    async rewrapSecret(ref, sealed) {
      rewrapSecret.run(sealed.keyId, sealed.wrappedKey, sealed.payload, parseRef(ref));
    },
  };
}
