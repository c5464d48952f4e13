import { randomUUID } from 'node:crypto';
import type { IngestionRepository } from '../../../core/ingestion/ingestion.repository.ts';
import type { IngestionJob, IngestionUpdate } from '../../../core/ingestion/ingestion.types.ts';
import type { StoredEvent } from '../../../core/events/event.types.ts';
import type { Scope } from '../../../core/scope.ts';
import { ingestionFromRow, ingestionJsonColumns, storedProposals, type IngestionRow } from '../ingestion-row.ts';
import type { SqliteDb } from './sqlite.database.ts';
import type { SqliteOutbox } from './sqlite-outbox.ts';

type Row = IngestionRow<number, string>;

const toJob = (r: Row): IngestionJob => ingestionFromRow(r, (ms) => new Date(ms), (text) => JSON.parse(text));

const SCOPE = 'tenant_id = @tenantId AND mode = @mode AND workspace = @workspace';
const scopeParams = (s: Scope) => ({ tenantId: s.tenantId, mode: s.mode, workspace: s.workspace });

/**
 * Claimable: active and under no unexpired lease (queued, or running with its worker's lease lapsed), and its
 * tenant holds fewer than `perTenant` unexpired leases. `state IN (…)` is written as the partial indexes' predicate
 * so that SQLite uses them.
 */
const CLAIMABLE = `SELECT * FROM ingestions i
  WHERE i.state IN ('queued', 'running') AND (i.lease_until IS NULL OR i.lease_until <= @now)
    AND (SELECT COUNT(*) FROM ingestions a WHERE a.tenant_id = i.tenant_id AND a.state IN ('queued', 'running')
      AND a.lease_until > @now) < @perTenant
  ORDER BY i.created_at, i.id LIMIT 1`;

/** The columns a worker's result or a review saves (parameters of `saved`). */
const SAVE = `state = @state, proposals = @proposals, usage = @usage, error = @error, prompt_version = @promptVersion,
  updated_at = @updatedAt, finished_at = @finishedAt, revision = revision + 1`;

const saved = (u: IngestionUpdate) => ({
  state: u.state, proposals: JSON.stringify(storedProposals(u.proposals)), usage: JSON.stringify(u.usage),
  error: u.error === null ? null : JSON.stringify(u.error), promptVersion: u.promptVersion, updatedAt: u.updatedAt.getTime(),
  finishedAt: u.finishedAt?.getTime() ?? null,
});

/** Ingestion jobs; every change is one conditional UPDATE (by lease or revision), with its events in its transaction. */
export function createSqliteIngestionRepository(db: SqliteDb, outbox: SqliteOutbox): IngestionRepository {
  const insert = db.prepare(`INSERT INTO ingestions (id, tenant_id, mode, workspace, requested_by_key, requested_by_user,
      ingest_mode, policy, state, messages, metadata, tags, proposals, error, usage, prompt_version, attempts, revision,
      created_at, updated_at, finished_at)
    VALUES (@id, @tenantId, @mode, @workspace, @keyId, @userId, @ingestMode, @policy, @state, @messages, @metadata, @tags,
      @proposals, @error, @usage, @promptVersion, @attempts, @revision, @createdAt, @updatedAt, @finishedAt)`);
  const find = db.prepare<Record<string, unknown>, Row>(`SELECT * FROM ingestions WHERE ${SCOPE} AND id = @id`);
  const page = db.prepare<Record<string, unknown>, Row>(`SELECT * FROM ingestions WHERE ${SCOPE}
    AND (@state IS NULL OR state = @state) ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`);
  const count = db.prepare<Record<string, unknown>, number>(`SELECT COUNT(*) FROM ingestions WHERE ${SCOPE}
    AND (@state IS NULL OR state = @state)`).pluck();
  const active = db.prepare<[string], number>(`SELECT COUNT(*) FROM ingestions
    WHERE tenant_id = ? AND state IN ('queued', 'running')`).pluck();
  const claimable = db.prepare<Record<string, unknown>, Row>(CLAIMABLE);
  const lease = db.prepare<Record<string, unknown>, Row>(`UPDATE ingestions SET state = 'running', lease_token = @token,
    lease_until = @until, attempts = attempts + 1, revision = revision + 1, updated_at = @now WHERE id = @id RETURNING *`);
  const renew = db.prepare('UPDATE ingestions SET lease_until = ? WHERE id = ? AND lease_token = ?');
  const finish = db.prepare(`UPDATE ingestions SET ${SAVE}, lease_token = NULL, lease_until = NULL
    WHERE id = @id AND lease_token = @lease`);
  const review = db.prepare(`UPDATE ingestions SET ${SAVE}, lease_token = @token, lease_until = @until
    WHERE ${SCOPE} AND id = @id AND revision = @revision`);
  const prune = db.prepare<[number]>(`DELETE FROM ingestions WHERE state IN ('completed', 'failed') AND finished_at < ?`);

  // IMMEDIATE (below): the write lock is taken before the candidates and the tenant's leases are read, so claimers on
  // other connections or processes wait instead of reading the same row.
  const claimTx = db.transaction((now: number, leaseMs: number, perTenant: number) => {
    const row = claimable.get({ now, perTenant });
    if (!row) return null;
    return lease.get({ id: row.id, token: randomUUID(), until: now + leaseMs, now })!;
  });

  /** Runs a conditional save and, when it matched, appends its events in the same transaction. */
  const saveTx = db.transaction((run: () => number, events: IngestionUpdate['events']): StoredEvent[] | null => {
    if (run() === 0) return null;
    return outbox.appendInTx(events ?? []);
  });
  const save = (run: () => number, events: IngestionUpdate['events']): boolean => {
    const stored = saveTx.immediate(run, events);
    if (stored === null) return false;
    outbox.notify(stored);
    return true;
  };

  return {
    async insert(job) {
      const json = ingestionJsonColumns(job);
      insert.run({
        id: job.id, ...scopeParams(job.scope), keyId: job.requestedBy.keyId, userId: job.requestedBy.userId,
        ingestMode: job.mode, policy: job.policy, state: job.state, messages: JSON.stringify(json.messages),
        metadata: JSON.stringify(json.metadata), tags: JSON.stringify(json.tags), proposals: JSON.stringify(json.proposals),
        error: json.error === null ? null : JSON.stringify(json.error), usage: JSON.stringify(json.usage), promptVersion: job.promptVersion, attempts: job.attempts, revision: job.revision, createdAt: job.createdAt.getTime(),
        updatedAt: job.updatedAt.getTime(), finishedAt: job.finishedAt?.getTime() ?? null,
      });
    },
    async find(scope, id) {
      const row = find.get({ ...scopeParams(scope), id });
      return row ? toJob(row) : null;
    },
    async list(scope, query) {
      const params = { ...scopeParams(scope), state: query.state ?? null };
      return {
        items: page.all({ ...params, limit: query.limit, offset: query.offset }).map(toJob),
        total: count.get(params)!,
      };
    },
    async countActive(tenantId) {
      return active.get(tenantId)!;
    },
    async claimNext(now, leaseMs, perTenant) {
      const row = claimTx.immediate(now.getTime(), leaseMs, perTenant);
      return row ? { job: toJob(row), lease: row.lease_token!, leaseUntil: new Date(row.lease_until!) } : null;
    },
    async renew(id, leaseToken, until) {
      return renew.run(until.getTime(), id, leaseToken).changes === 1;
    },
    async finish(id, leaseToken, update) {
      return save(() => finish.run({ id, lease: leaseToken, ...saved(update) }).changes, update.events);
    },
    async saveReview(scope, id, revision, update, leaseTo) {
      return save(() => review.run({
        ...scopeParams(scope), id, revision, ...saved(update), token: leaseTo?.token ?? null, until: leaseTo?.until.getTime() ?? null,
      }).changes, update.events);
    },
    async pruneFinished(olderThan) {
      return prune.run(olderThan.getTime()).changes;
    },
  };
}
