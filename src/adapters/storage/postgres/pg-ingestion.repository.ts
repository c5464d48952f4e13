import { randomUUID } from 'node:crypto';
import type { IngestionRepository } from '../../../core/ingestion/ingestion.repository.ts';
import type { IngestionJob, IngestionUpdate } from '../../../core/ingestion/ingestion.types.ts';
import { ingestionFromRow, ingestionJsonColumns, storedProposals, type IngestionRow } from '../ingestion-row.ts';
import { pgJson, pgTime, pgTimeOrNull, SqlParams, type PgExecutor, type PgQueryable } from './pg-executor.ts';
import type { PgOutbox } from './pg-outbox.ts';

type Row = IngestionRow<Date, unknown>;

const toJob = (r: Row): IngestionJob => ingestionFromRow(r, (d) => d, (value) => value);

/** How many times a claim that lost its tenant's last slot to a concurrent claimer looks again before answering null. */
const CLAIM_TRIES = 4;

/**
 * A claim's candidate: the oldest job that is active and under no unexpired lease, whose tenant holds fewer than
 * `$2` unexpired leases. Rows another claimer (or a save) holds are skipped, not waited for.
 */
const CANDIDATE = `SELECT id, tenant_id FROM ingestions i
  WHERE i.state IN ('queued', 'running') AND (i.lease_until IS NULL OR i.lease_until <= $1)
    AND (SELECT COUNT(*) FROM ingestions a WHERE a.tenant_id = i.tenant_id AND a.state IN ('queued', 'running')
      AND a.lease_until > $1) < $2
  ORDER BY i.created_at, i.id LIMIT 1 FOR UPDATE OF i SKIP LOCKED`;

/** The columns a worker's result or a review saves, as `SET` text over `p`. */
function saveSet(u: IngestionUpdate, p: SqlParams): string {
  return `state = ${p.add(u.state)}, proposals = ${p.add(pgJson(storedProposals(u.proposals)))}::jsonb,
    usage = ${p.add(pgJson(u.usage))}::jsonb, error = ${p.add(u.error === null ? null : pgJson(u.error))}::jsonb,
    prompt_version = ${p.add(u.promptVersion)}, updated_at = ${p.add(pgTime(u.updatedAt))}::timestamptz,
    finished_at = ${p.add(pgTimeOrNull(u.finishedAt))}::timestamptz, revision = revision + 1`;
}

/**
 * Ingestion jobs; every change is one conditional UPDATE (by lease or revision), with its events in its transaction.
 * Claims are atomic across nodes: `FOR UPDATE SKIP LOCKED` on the job, and the tenant's advisory lock around the count
 * of its leases, so two claimers cannot both take a tenant's last slot.
 */
export function createPgIngestionRepository(db: PgExecutor, outbox: PgOutbox): IngestionRepository {
  /** Runs a conditional save on `tx`; when it matched, appends its events there and tells listeners after the commit. */
  async function save(run: (tx: PgQueryable) => Promise<unknown[]>, events: IngestionUpdate['events']): Promise<boolean> {
    const stored = await db.transaction(async (tx) => ((await run(tx)).length === 0 ? null : outbox.appendInTx(tx, events ?? [])));
    if (stored === null) return false;
    outbox.notify(stored);
    return true;
  }

  /** One claim attempt: the job leased, `null` when none is due, `full` when a concurrent claim took its tenant's last slot. */
  function claimOnce(now: Date, leaseMs: number, perTenant: number): Promise<Row | null | 'full'> {
    const at = pgTime(now);
    return db.transaction(async (tx) => {
      const [candidate] = await tx.query<{ id: string; tenant_id: string }>(CANDIDATE, [at, perTenant]);
      if (!candidate) return null;
      // Claimers of one tenant count its leases one at a time (held to COMMIT); each statement after it sees the
      // leases committed before (READ COMMITTED), so the count below is exact.
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('mnemo.ingestions:' || $1::text, 0))", [candidate.tenant_id]);
      const [leased] = await tx.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ingestions
        WHERE tenant_id = $1 AND state IN ('queued', 'running') AND lease_until > $2`, [candidate.tenant_id, at]);
      if (leased!.n >= perTenant) return 'full';
      const [row] = await tx.query<Row>(`UPDATE ingestions SET state = 'running', lease_token = $2,
        lease_until = $3, attempts = attempts + 1, revision = revision + 1, updated_at = $4 WHERE id = $1 RETURNING *`,
      [candidate.id, randomUUID(), pgTime(new Date(now.getTime() + leaseMs)), at]);
      return row!;
    });
  }

  return {
    async insert(job) {
      const json = ingestionJsonColumns(job);
      await db.query(`INSERT INTO ingestions (id, tenant_id, mode, workspace, requested_by_key, requested_by_user, ingest_mode,
          policy, state, messages, metadata, tags, proposals, error, usage, prompt_version, attempts, revision, created_at,
          updated_at, finished_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`, [
        job.id, job.scope.tenantId, job.scope.mode, job.scope.workspace, job.requestedBy.keyId, job.requestedBy.userId, job.mode,
        job.policy, job.state, pgJson(json.messages), pgJson(json.metadata), pgJson(json.tags), pgJson(json.proposals),
        json.error === null ? null : pgJson(json.error), pgJson(json.usage), job.promptVersion, job.attempts, job.revision,
        pgTime(job.createdAt), pgTime(job.updatedAt), pgTimeOrNull(job.finishedAt),
      ]);
    },
    async find(scope, id) {
      const [row] = await db.query<Row>('SELECT * FROM ingestions WHERE tenant_id = $1 AND mode = $2 AND workspace = $3 AND id = $4',
        [scope.tenantId, scope.mode, scope.workspace, id]);
      return row ? toJob(row) : null;
    },
    async list(scope, query) {
      const p = new SqlParams([scope.tenantId, scope.mode, scope.workspace]);
      const where = `tenant_id = $1 AND mode = $2 AND workspace = $3${query.state === undefined ? '' : ` AND state = ${p.add(query.state)}`}`;
      const [total] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ingestions WHERE ${where}`, [...p.values]);
      const rows = await db.query<Row>(`SELECT * FROM ingestions WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT ${p.add(query.limit)} OFFSET ${p.add(query.offset)}`, p.values);
      return { items: rows.map(toJob), total: total!.n };
    },
    async countActive(tenantId) {
      const [row] = await db.query<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM ingestions WHERE tenant_id = $1 AND state IN ('queued', 'running')", [tenantId]);
      return row!.n;
    },
    async claimNext(now, leaseMs, perTenant) {
      for (let i = 0; i < CLAIM_TRIES; i++) {
        const row = await claimOnce(now, leaseMs, perTenant);
        if (row === 'full') continue; // the next look no longer offers that tenant's jobs
        return row ? { job: toJob(row), lease: row.lease_token!, leaseUntil: row.lease_until! } : null;
      }
      return null;
    },
    async renew(id, lease, until) {
      return (await db.query('UPDATE ingestions SET lease_until = $1 WHERE id = $2 AND lease_token = $3 RETURNING id',
        [pgTime(until), id, lease])).length === 1;
    },
    async finish(id, lease, update) {
      return save((tx) => {
        const p = new SqlParams();
        const set = saveSet(update, p);
        return tx.query(`UPDATE ingestions SET ${set}, lease_token = NULL, lease_until = NULL
          WHERE id = ${p.add(id)} AND lease_token = ${p.add(lease)} RETURNING id`, p.values);
      }, update.events);
    },
    async saveReview(scope, id, revision, update, lease) {
      return save((tx) => {
        const p = new SqlParams();
        const set = saveSet(update, p);
        return tx.query(`UPDATE ingestions SET ${set}, lease_token = ${p.add(lease?.token ?? null)},
            lease_until = ${p.add(lease ? pgTime(lease.until) : null)}::timestamptz
          WHERE tenant_id = ${p.add(scope.tenantId)} AND mode = ${p.add(scope.mode)} AND workspace = ${p.add(scope.workspace)}
            AND id = ${p.add(id)} AND revision = ${p.add(revision)} RETURNING id`, p.values);
      }, update.events);
    },
    async pruneFinished(olderThan) {
      const gone = await db.query(`DELETE FROM ingestions WHERE state IN ('completed', 'failed') AND finished_at < $1 RETURNING id`,
        [pgTime(olderThan)]);
      return gone.length;
    },
  };
}
