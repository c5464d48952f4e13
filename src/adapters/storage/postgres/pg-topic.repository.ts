import { DomainError } from '../../../core/errors.ts';
import type { KeyMode, Scope } from '../../../core/scope.ts';
import type { TopicRepository } from '../../../core/topics/topic.repository.ts';
import type { Topic } from '../../../core/topics/topic.types.ts';
import { isPgUniqueViolation, pgJson, pgTime, SqlParams, type PgExecutor } from './pg-executor.ts';

interface Row {
  id: string; tenant_id: string; mode: string; workspace: string; name: string; description: string | null;
  parent_id: string | null; metadata: Record<string, unknown>; created_at: Date; updated_at: Date; created_by: string;
}

const toTopic = (r: Row): Topic => ({
  id: r.id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  name: r.name,
  description: r.description,
  parentId: r.parent_id,
  metadata: r.metadata,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  createdBy: r.created_by,
});

const SCOPE = 'tenant_id = $1 AND mode = $2 AND workspace = $3';
const scopeParams = (s: Scope): unknown[] => [s.tenantId, s.mode, s.workspace];
const duplicateName = (name: string | undefined) =>
  new DomainError('CONFLICT', `A topic named ${name ?? ''} already exists under the same parent`, {
    fields: [{ field: 'name', reason: 'conflict', message: 'already used under the same parent' }],
  });

export function createPgTopicRepository(db: PgExecutor): TopicRepository {
  return {
    async insert(t) {
      try {
        await db.query(`INSERT INTO topics (id, tenant_id, mode, workspace, name, description, parent_id, metadata,
          created_at, updated_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [t.id, t.scope.tenantId, t.scope.mode, t.scope.workspace, t.name, t.description, t.parentId,
          pgJson(t.metadata), pgTime(t.createdAt), pgTime(t.updatedAt), t.createdBy]);
      } catch (err) {
        if (isPgUniqueViolation(err, 'topics_scope_parent_name')) throw duplicateName(t.name);
        throw err;
      }
    },
    async findById(scope, id) {
      const [row] = await db.query<Row>(`SELECT * FROM topics WHERE ${SCOPE} AND id = $4`, [...scopeParams(scope), id]);
      return row ? toTopic(row) : null;
    },
    async listAll(scope) {
      return (await db.query<Row>(`SELECT * FROM topics WHERE ${SCOPE} ORDER BY created_at, seq`, scopeParams(scope))).map(toTopic);
    },
    async list(scope, p) {
      const rows = await db.query<Row>(`SELECT * FROM topics WHERE ${SCOPE} ORDER BY created_at, seq LIMIT $4 OFFSET $5`,
        [...scopeParams(scope), p.limit, p.offset]);
      const [count] = await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM topics WHERE ${SCOPE}`, scopeParams(scope));
      return { items: rows.map(toTopic), total: count!.n };
    },
    async update(scope, id, patch, at) {
      const p = new SqlParams(scopeParams(scope));
      const where = `${SCOPE} AND id = ${p.add(id)}`;
      // Always moves forward, even when the clock did not: a reader can tell the update happened.
      const sets = [`updated_at = GREATEST(${p.add(pgTime(at))}::timestamptz, updated_at + interval '1 millisecond')`];
      if (patch.name !== undefined) sets.push(`name = ${p.add(patch.name)}`);
      if (patch.description !== undefined) sets.push(`description = ${p.add(patch.description)}`);
      if (patch.parentId !== undefined) sets.push(`parent_id = ${p.add(patch.parentId)}`);
      if (patch.metadata !== undefined) sets.push(`metadata = ${p.add(pgJson(patch.metadata))}`);
      try {
        const [row] = await db.query<Row>(`UPDATE topics SET ${sets.join(', ')} WHERE ${where} RETURNING *`, p.values);
        return row ? toTopic(row) : null;
      } catch (err) {
        if (isPgUniqueViolation(err, 'topics_scope_parent_name')) throw duplicateName(patch.name);
        throw err;
      }
    },
    async delete(scope, id) {
      return db.transaction(async (tx) => {
        const params = [...scopeParams(scope), id];
        const [topic] = await tx.query<Row>(`DELETE FROM topics WHERE ${SCOPE} AND id = $4 RETURNING *`, params);
        if (!topic) return false;
        await tx.query(`UPDATE memories SET topic_id = NULL WHERE ${SCOPE} AND topic_id = $4`, params);
        await tx.query(`UPDATE topics SET parent_id = $5 WHERE ${SCOPE} AND parent_id = $4`, [...params, topic.parent_id]);
        return true;
      });
    },
  };
}
