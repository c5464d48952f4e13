import { DomainError } from '../../../core/errors.ts';
import type { KeyMode, Scope } from '../../../core/scope.ts';
import type { TopicRepository } from '../../../core/topics/topic.repository.ts';
import type { Topic } from '../../../core/topics/topic.types.ts';
import { isUniqueViolation } from './sqlite-errors.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface Row {
  seq: number; id: string; tenant_id: string; mode: string; workspace: string; name: string;
  description: string | null; parent_id: string | null; metadata: string; created_at: number; updated_at: number;
  created_by: string;
}

const toTopic = (r: Row): Topic => ({
  id: r.id,
  scope: { tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace },
  name: r.name,
  description: r.description,
  parentId: r.parent_id,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  createdBy: r.created_by,
});

const SCOPE = 'tenant_id = ? AND mode = ? AND workspace = ?';
const params = (s: Scope): [string, string, string] => [s.tenantId, s.mode, s.workspace];
const duplicateName = (name: string | undefined) =>
  new DomainError('CONFLICT', `A topic named ${name ?? ''} already exists under the same parent`, {
    fields: [{ field: 'name', reason: 'conflict', message: 'already used under the same parent' }],
  });

export function createSqliteTopicRepository(db: SqliteDb): TopicRepository {
  const insert = db.prepare(`INSERT INTO topics (id, tenant_id, mode, workspace, name, description, parent_id, metadata,
    created_at, updated_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const byId = db.prepare<[string, string, string, string], Row>(`SELECT * FROM topics WHERE ${SCOPE} AND id = ?`);
  const all = db.prepare<[string, string, string], Row>(`SELECT * FROM topics WHERE ${SCOPE} ORDER BY created_at, seq`);
  const page = db.prepare<[string, string, string, number, number], Row>(
    `SELECT * FROM topics WHERE ${SCOPE} ORDER BY created_at, seq LIMIT ? OFFSET ?`);
  const count = db.prepare<[string, string, string], { n: number }>(`SELECT COUNT(*) AS n FROM topics WHERE ${SCOPE}`);

  const deleteTx = db.transaction((scope: Scope, id: string): boolean => {
    const topic = byId.get(...params(scope), id);
    if (!topic) return false;
    db.prepare(`UPDATE memories SET topic_id = NULL WHERE ${SCOPE} AND topic_id = ?`).run(...params(scope), id);
    db.prepare(`UPDATE topics SET parent_id = ? WHERE ${SCOPE} AND parent_id = ?`).run(topic.parent_id, ...params(scope), id);
    db.prepare(`DELETE FROM topics WHERE ${SCOPE} AND id = ?`).run(...params(scope), id);
    return true;
  });

  return {
    async insert(t) {
      try {
        insert.run(t.id, t.scope.tenantId, t.scope.mode, t.scope.workspace, t.name, t.description, t.parentId,
          JSON.stringify(t.metadata), t.createdAt.getTime(), t.updatedAt.getTime(), t.createdBy);
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicateName(t.name);
        throw err;
      }
    },
    async findById(scope, id) {
      const row = byId.get(...params(scope), id);
      return row ? toTopic(row) : null;
    },
    async listAll(scope) {
      return all.all(...params(scope)).map(toTopic);
    },
    async list(scope, p) {
      return { items: page.all(...params(scope), p.limit, p.offset).map(toTopic), total: count.get(...params(scope))!.n };
    },
    async update(scope, id, patch, at) {
      const sets = ['updated_at = MAX(?, updated_at + 1)'];
      const values: unknown[] = [at.getTime()];
      const set = (column: string, value: unknown) => { sets.push(`${column} = ?`); values.push(value); };
      if (patch.name !== undefined) set('name', patch.name);
      if (patch.description !== undefined) set('description', patch.description);
      if (patch.parentId !== undefined) set('parent_id', patch.parentId);
      if (patch.metadata !== undefined) set('metadata', JSON.stringify(patch.metadata));
      try {
        const row = db.prepare<unknown[], Row>(`UPDATE topics SET ${sets.join(', ')} WHERE ${SCOPE} AND id = ? RETURNING *`)
          .get(...values, ...params(scope), id);
        return row ? toTopic(row) : null;
      } catch (err) {
        if (isUniqueViolation(err)) throw duplicateName(patch.name);
        throw err;
      }
    },
    async delete(scope, id) {
      return deleteTx(scope, id);
    },
  };
}
