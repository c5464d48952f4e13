import type { EventScope } from '../../../core/events/event.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { WebhookRepository } from '../../../core/webhooks/webhook.repository.ts';
import { webhookSecretContext } from '../../../core/webhooks/webhook-secret.ts';
import { WEBHOOK_FLAVOURS } from '../../../core/webhooks/webhook-flavours.ts';
import type { ClaimedDelivery, DeliveryRecord, WebhookKind } from '../../../core/webhooks/webhook.types.ts';
import { pgInt, pgJson, pgTime, SqlParams, type PgExecutor } from './pg-executor.ts';
import { toStoredEvent, type PgEventRow } from './pg-outbox.ts';
import { storedSecretOf, toWebhook, type PgWebhookRow } from './pg-webhook.rows.ts';

interface DeliveryRow {
  id: string; webhook_id: string; event_seq: number | string; attempts: number; next_attempt_at: Date;
}

interface DeliveryRecordRow {
  id: string; webhook_id: string; state: string; attempts: number; next_attempt_at: Date; last_status: number | null;
  last_error: string | null; created_at: Date; finished_at: Date | null; event_id: string | null; event_type: string | null;
}

const toDeliveryRecord = (r: DeliveryRecordRow): DeliveryRecord => ({
  id: r.id, webhookId: r.webhook_id, eventId: r.event_id, eventType: r.event_type, state: r.state as DeliveryRecord['state'],
  attempts: r.attempts, nextAttemptAt: r.state === 'pending' ? new Date(r.next_attempt_at) : null, lastStatus: r.last_status,
  lastError: r.last_error, createdAt: new Date(r.created_at), finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
});

interface SecretRow { seq: number | string; id: string; kind: string; tenant_id: string; mode: string; workspace: string | null }
interface PlaintextRow extends SecretRow { plaintext_secret: string }
interface SealedRow extends SecretRow { secret_key_id: string; secret_wrapped_key: string; secret_payload: string }

const scopeOf = (r: SecretRow) => ({ tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace });

/** `sealedSecrets` refs: the row's seq, the order they are paged in. */
function parseRef(ref: string): string {
  if (!/^-?[0-9]{1,19}$/.test(ref)) throw new Error(`not a webhook secret ref: ${ref}`);
  return ref;
}

function scopeWhere(p: SqlParams, scope: EventScope, kind: WebhookKind): string {
  const base = `kind = ${p.add(kind)} AND tenant_id = ${p.add(scope.tenantId)} AND mode = ${p.add(scope.mode)}`;
  return WEBHOOK_FLAVOURS[kind].scoped === 'workspace' ? `${base} AND workspace = ${p.add(scope.workspace)}` : base;
}

export function createPgWebhookRepository(db: PgExecutor): WebhookRepository {
  return {
    async insert(w, secret) {
      await db.query(`INSERT INTO webhooks (id, kind, tenant_id, mode, workspace, url, events, description, status,
        retry_policy, filters, created_at, updated_at, secret_key_id, secret_wrapped_key, secret_payload)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [w.id, w.kind, w.scope.tenantId, w.scope.mode, w.scope.workspace, w.url, pgJson(w.events), w.description, w.status,
        pgJson(w.retryPolicy), pgJson(w.filters), pgTime(w.createdAt), pgTime(w.updatedAt), secret.keyId, secret.wrappedKey, secret.payload]);
    },

    async findById(scope, kind, id) {
      const p = new SqlParams();
      const [row] = await db.query<PgWebhookRow>(`SELECT * FROM webhooks WHERE ${scopeWhere(p, scope, kind)} AND id = ${p.add(id)}`, p.values);
      return row ? toWebhook(row) : null;
    },

    async list(scope, kind, q) {
      const p = new SqlParams();
      let where = scopeWhere(p, scope, kind);
      if (q.active !== undefined) where += q.active ? " AND status = 'active'" : " AND status <> 'active'";
      if (q.event !== undefined) where += ` AND events ? ${p.add(q.event)}`;
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM webhooks WHERE ${where}`, p.values);
      const rows = await db.query<PgWebhookRow>(
        `SELECT * FROM webhooks WHERE ${where} ORDER BY created_at, seq LIMIT ${p.add(q.limit)} OFFSET ${p.add(q.offset)}`, p.values);
      return { items: rows.map(toWebhook), total: count!.n };
    },

    async countCreatedSince(scope, kind, since) {
      const p = new SqlParams();
      const [row] = await db.query<{ n: number }>(
        `SELECT COUNT(*)::int AS n FROM webhooks WHERE ${scopeWhere(p, scope, kind)} AND created_at >= ${p.add(pgTime(since))}`, p.values);
      return row!.n;
    },

    async update(scope, kind, id, patch, at) {
      const p = new SqlParams();
      const sets = [`updated_at = GREATEST(${p.add(pgTime(at))}::timestamptz, updated_at + interval '1 millisecond')`];
      const set = (column: string, value: unknown) => sets.push(`${column} = ${p.add(value)}`);
      if (patch.url !== undefined) set('url', patch.url);
      if (patch.events !== undefined) set('events', pgJson(patch.events));
      if (patch.description !== undefined) set('description', patch.description);
      if (patch.status !== undefined) set('status', patch.status);
      if (patch.retryPolicy !== undefined) set('retry_policy', pgJson(patch.retryPolicy));
      if (patch.filters !== undefined) set('filters', pgJson(patch.filters));
      const [row] = await db.query<PgWebhookRow>(
        `UPDATE webhooks SET ${sets.join(', ')} WHERE ${scopeWhere(p, scope, kind)} AND id = ${p.add(id)} RETURNING *`, p.values);
      return row ? toWebhook(row) : null;
    },

    async delete(scope, kind, id) {
      return db.transaction(async (tx) => {
        const p = new SqlParams();
        const gone = await tx.query(`DELETE FROM webhooks WHERE ${scopeWhere(p, scope, kind)} AND id = ${p.add(id)} RETURNING id`, p.values);
        if (gone.length > 0) await tx.query("DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'pending'", [id]);
        return gone.length > 0;
      });
    },

    async claimDue(now, limit, perWebhook, leaseMs) {
      const at = pgTime(now);
      // The worker looks after every commit that appended events, most of which created no delivery: one statement
      // (the partial index deliveries_due) settles that, instead of a transaction's three and a pooled connection's
      // checkout (on a loaded server, about two more transactions per G1 create). A delivery that becomes due after
      // this look waits for the next wake-up or poll, as one that becomes due after the claim below would.
      const [probe] = await db.query<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)) AS due`, [at]);
      if (!probe?.due) return [];
      return db.transaction(async (tx) => {
        // Rows another worker is claiming right now are skipped, not waited for.
        const due = await tx.query<DeliveryRow>(`SELECT d.id, d.webhook_id, d.event_seq, d.attempts, d.next_attempt_at
          FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
          WHERE d.state = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1)
            AND w.status = 'active'
          ORDER BY d.next_attempt_at, d.event_seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED`, [at, limit * 4]);
        if (due.length === 0) return [];
        // The per-webhook cap counts leases of every worker: lock the webhooks concerned (in id order, no deadlock)
        // so two workers cannot both see room for the same last slot.
        const webhookIds = [...new Set(due.map((d) => d.webhook_id))].sort();
        const webhooks = new Map((await tx.query<PgWebhookRow>(
          'SELECT * FROM webhooks WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [webhookIds])).map((w) => [w.id, w]));
        const inFlight = new Map((await tx.query<{ webhook_id: string; n: number }>(
          `SELECT webhook_id, COUNT(*)::int AS n FROM webhook_deliveries
           WHERE state = 'pending' AND lease_until > $1 AND webhook_id = ANY($2::text[]) GROUP BY webhook_id`,
          [at, webhookIds])).map((r) => [r.webhook_id, r.n]));
        const chosen = due.filter((d) => {
          const n = inFlight.get(d.webhook_id) ?? 0;
          if (n >= perWebhook || !webhooks.has(d.webhook_id)) return false;
          inFlight.set(d.webhook_id, n + 1);
          return true;
        }).slice(0, limit);
        if (chosen.length === 0) return [];
        await tx.query(`UPDATE webhook_deliveries SET lease_until = $1 WHERE id = ANY($2::text[])`,
          [pgTime(new Date(now.getTime() + leaseMs)), chosen.map((d) => d.id)]);
        const events = new Map((await tx.query<PgEventRow>('SELECT * FROM events WHERE seq = ANY($1::bigint[])',
          [chosen.map((d) => String(d.event_seq))])).map((e) => [pgInt(e.seq), toStoredEvent(e)]));
        const claimed: ClaimedDelivery[] = [];
        for (const d of chosen) {
          const event = events.get(pgInt(d.event_seq));
          if (!event) continue;
          const webhook = webhooks.get(d.webhook_id)!;
          claimed.push({
            delivery: { id: d.id, webhookId: d.webhook_id, eventSeq: event.seq, attempts: d.attempts, nextAttemptAt: d.next_attempt_at },
            webhook: toWebhook(webhook),
            event,
            secret: storedSecretOf(webhook),
          });
        }
        return claimed;
      });
    },

    async complete(id, result) {
      await db.transaction(async (tx) => {
        const [d] = await tx.query<{ webhook_id: string }>(
          "SELECT webhook_id FROM webhook_deliveries WHERE id = $1 AND state = 'pending' FOR UPDATE", [id]);
        if (!d) return;
        const at = pgTime(result.at);
        if (result.ok) {
          await tx.query(`UPDATE webhook_deliveries SET state = 'succeeded', attempts = attempts + 1, lease_until = NULL,
            last_status = $1, last_error = NULL, finished_at = $2 WHERE id = $3`, [result.status, at, id]);
          await tx.query(`UPDATE webhooks SET total_attempts = total_attempts + 1, successful_deliveries = successful_deliveries + 1,
            last_delivery_at = $1 WHERE id = $2`, [at, d.webhook_id]);
          return;
        }
        if (result.retryAt) {
          await tx.query(`UPDATE webhook_deliveries SET attempts = attempts + 1, lease_until = NULL, next_attempt_at = $1,
            last_status = $2, last_error = $3 WHERE id = $4`, [pgTime(result.retryAt), result.status, result.error, id]);
        } else {
          await tx.query(`UPDATE webhook_deliveries SET state = 'failed', attempts = attempts + 1, lease_until = NULL,
            last_status = $1, last_error = $2, finished_at = $3 WHERE id = $4`, [result.status, result.error, at, id]);
        }
        await tx.query(`UPDATE webhooks SET total_attempts = total_attempts + 1, last_delivery_at = $1,
          failed_deliveries = failed_deliveries + $2 WHERE id = $3`, [at, result.retryAt ? 0 : 1, d.webhook_id]);
        if (result.failWebhook) await tx.query("UPDATE webhooks SET status = 'failed', updated_at = $1 WHERE id = $2", [at, d.webhook_id]);
      });
    },

    async release(id, retryAt) {
      await db.query("UPDATE webhook_deliveries SET lease_until = NULL, next_attempt_at = $1 WHERE id = $2 AND state = 'pending'",
        [pgTime(retryAt), id]);
    },

    async listDeliveries(scope, kind, webhookId, page) {
      const p = new SqlParams();
      const [found] = await db.query(`SELECT 1 FROM webhooks WHERE ${scopeWhere(p, scope, kind)} AND id = ${p.add(webhookId)}`, p.values);
      if (!found) return { items: [], total: 0 };
      const [count] = await db.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [webhookId]);
      const rows = await db.query<DeliveryRecordRow>(`SELECT d.id, d.webhook_id, d.state, d.attempts, d.next_attempt_at, d.last_status,
        d.last_error, d.created_at, d.finished_at, e.id AS event_id, e.type AS event_type
        FROM webhook_deliveries d LEFT JOIN events e ON e.seq = d.event_seq
        WHERE d.webhook_id = $1 ORDER BY d.seq DESC LIMIT $2 OFFSET $3`, [webhookId, page.limit, page.offset]);
      return { items: rows.map(toDeliveryRecord), total: count!.n };
    },

    async redeliver(scope, kind, webhookId, deliveryId, now) {
      const p = new SqlParams();
      const [found] = await db.query(`SELECT 1 FROM webhooks WHERE ${scopeWhere(p, scope, kind)} AND id = ${p.add(webhookId)}`, p.values);
      if (!found) return 'not_found';
      const changed = await db.query(`UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $1, lease_until = NULL, finished_at = NULL
        WHERE id = $2 AND webhook_id = $3 AND state <> 'pending' RETURNING id`, [pgTime(now), deliveryId, webhookId]);
      if (changed.length > 0) return 'requeued';
      const [still] = await db.query('SELECT 1 FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2', [deliveryId, webhookId]);
      return still ? 'pending' : 'not_found';
    },

    async pendingCount() {
      const [row] = await db.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'");
      return row!.n;
    },

    async plaintextSecrets(limit) {
      const rows = await db.query<PlaintextRow>(`SELECT seq, id, kind, tenant_id, mode, workspace, plaintext_secret
        FROM webhooks WHERE plaintext_secret IS NOT NULL ORDER BY seq LIMIT $1`, [limit]);
      return rows.map((r) => ({ id: r.id, kind: r.kind as WebhookKind, scope: scopeOf(r), plaintext: r.plaintext_secret }));
    },

    async sealSecrets(rows) {
      if (rows.length === 0) return 0;
      return db.transaction(async (tx) => {
        let n = 0;
        for (const r of rows) {
          n += (await tx.query(`UPDATE webhooks SET plaintext_secret = NULL, secret_key_id = $1, secret_wrapped_key = $2,
            secret_payload = $3 WHERE id = $4 AND plaintext_secret = $5 RETURNING 1 AS one`,
          [r.sealed.keyId, r.sealed.wrappedKey, r.sealed.payload, r.id, r.plaintext])).length;
        }
        return n;
      });
    },

    async sealedSecrets(after, limit) {
      const p = new SqlParams();
      const from = after === null ? '' : `AND seq > ${p.add(parseRef(after))}::bigint`;
      const rows = await db.query<SealedRow>(`SELECT seq, id, kind, tenant_id, mode, workspace, secret_key_id, secret_wrapped_key,
        secret_payload FROM webhooks WHERE secret_key_id IS NOT NULL ${from} ORDER BY seq LIMIT ${p.add(limit)}`, p.values);
      return rows.map((r) => ({
        ref: String(pgInt(r.seq)),
        context: webhookSecretContext({ id: r.id, scope: scopeOf(r) }),
        sealed: { keyId: r.secret_key_id, wrappedKey: r.secret_wrapped_key, payload: r.secret_payload },
      }));
    },

    async rewrapSecret(ref, sealed) {
      await db.query(`UPDATE webhooks SET secret_key_id = $1, secret_wrapped_key = $2, secret_payload = $3
        WHERE seq = $4::bigint AND secret_key_id IS NOT NULL`, [sealed.keyId, sealed.wrappedKey, sealed.payload, parseRef(ref)]);
    },
  };
}
