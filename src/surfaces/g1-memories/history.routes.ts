import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { ChainLink, MemoryHistory, MemoryService } from '../../core/memories/memory.service.ts';
import type { MemoryTombstone, MemoryVersion } from '../../core/memories/memory.types.ts';
import { authGuard, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG1ErrorHandler } from './errors.ts';
import { toWire } from './mappers.ts';
import { ErrorWire, IdParams, MemoryWire } from './schemas.ts';

export interface G1HistoryDeps extends AuthDeps {
  memories: Pick<MemoryService, 'history'>;
  clock: Clock;
}

const HistoryQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Earlier versions per page, 1-100' }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0, description: 'Earlier versions to skip (newest first)' }),
});

const Iso = Type.String({ description: 'ISO 8601 UTC' });
const IsoOrNull = Type.Union([Iso, Type.Null()]);
const Metadata = Type.Object({}, { additionalProperties: true });

const VersionWire = Type.Object({
  version: Type.Integer({ description: 'The version number this state had (1 as created)' }),
  title: Type.String(),
  content: Type.String(),
  memory_type: Type.String(),
  type: Type.String({ description: 'Same as memory_type' }),
  tags: Type.Array(Type.String()),
  metadata: Metadata,
  topic_id: Type.Union([Type.String(), Type.Null()]),
  valid_from: Iso,
  valid_until: IsoOrNull,
  written_at: Type.String({ description: 'When this state was written (the memory\'s updated_at then)' }),
  written_by: Type.String({ description: 'The user id that wrote it' }),
  replaced_at: Type.String({ description: 'When the update that replaced it was made' }),
  replaced_by: Type.String({ description: 'The user id that made that update' }),
});

const LinkWire = Type.Object({ id: Type.String(), title: Type.String(), valid_from: Iso, valid_until: IsoOrNull });

const HistoryAnswer = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    memory_id: Type.String(),
    memory: Type.Union([MemoryWire, Type.Null()], { description: 'The memory as it is now (its `version` is the current one); null once deleted' }),
    tombstone: Type.Union([Type.Object({
      id: Type.String(), deleted_at: Iso, deleted_by: Type.String(), reason: Type.String({ description: 'user_request, batch or forget' }),
    }), Type.Null()], { description: 'A deleted memory: when, by whom and why (never its content); null otherwise' }),
    versions: Type.Array(VersionWire, { description: 'Earlier states, newest first (every update keeps the state it replaced)' }),
    pagination: Type.Object({
      total: Type.Integer({ description: 'Earlier versions kept' }), limit: Type.Integer(), offset: Type.Integer(), hasMore: Type.Boolean(),
    }),
    chain: Type.Object({
      supersedes: Type.Array(LinkWire, { description: 'The memories this one replaced, nearest first (each replaced the one after it)' }),
      superseded_by: Type.Array(LinkWire, { description: 'The memories that replaced this one, nearest first: the last holds now' }),
    }),
  }),
});

const versionWire = (v: MemoryVersion) => ({
  version: v.version, title: v.title, content: v.content, memory_type: v.memoryType, type: v.memoryType, tags: v.tags,
  metadata: v.metadata, topic_id: v.topicId,
  valid_from: isoTimestamp(v.validFrom), valid_until: v.validUntil ? isoTimestamp(v.validUntil) : null,
  written_at: isoTimestamp(v.writtenAt), written_by: v.writtenBy, replaced_at: isoTimestamp(v.replacedAt), replaced_by: v.replacedBy,
});

const linkWire = (l: ChainLink) => ({
  id: l.id, title: l.title, valid_from: isoTimestamp(l.validFrom), valid_until: l.validUntil ? isoTimestamp(l.validUntil) : null,
});

const tombstoneWire = (t: MemoryTombstone) => ({
  id: t.memoryId, deleted_at: isoTimestamp(t.deletedAt), deleted_by: t.deletedBy, reason: t.reason,
});

/** The G1 answer of a memory's history (one page of its versions). */
export const historyWire = (h: MemoryHistory, memoryId: string, page: { limit: number; offset: number }) => ({
  memory_id: h.memory?.id ?? h.tombstone?.memoryId ?? memoryId,
  memory: h.memory === null ? null : toWire(h.memory),
  tombstone: h.tombstone === null ? null : tombstoneWire(h.tombstone),
  versions: h.versions.map(versionWire),
  pagination: { total: h.total, limit: page.limit, offset: page.offset, hasMore: page.offset + h.versions.length < h.total },
  chain: { supersedes: h.chain.supersedes.map(linkWire), superseded_by: h.chain.supersededBy.map(linkWire) },
});

/**
 * `GET /api/v1/memories/{id}/history?limit&offset` (G1's envelope, `X-API-Key`): a memory's earlier versions, newest
 * first, and its supersession chain both ways; a deleted memory (by its full UUID) answers its tombstone
 * (core MemoryService.history; docs/memory-lifecycle.md). Register with prefix `/api/v1/memories`.
 */
export const g1HistoryRoutes: FastifyPluginAsync<G1HistoryDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));

  r.get('/:id/history', {
    config: { operation: 'memory.history' },
    schema: {
      tags: ['G1 memories'], security: [{ apiKey: [] }],
      summary: 'A memory\'s earlier versions and its supersession chain',
      description: '`versions`: the states updates replaced, newest first, each with who wrote it and when it was replaced '
        + '(the current state is `memory`). `chain.supersedes`: the memories it replaced; `chain.superseded_by`: those that '
        + 'replaced it. A deleted memory, named by its full UUID, answers `memory: null` and its `tombstone` (no content). '
        + 'Does not count an access.',
      params: IdParams,
      querystring: HistoryQuery,
      response: { 200: HistoryAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 409: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const page = { limit: req.query.limit, offset: req.query.offset };
    const history = await deps.memories.history(scopeOf(req), req.params.id, page);
    return { success: true as const, data: historyWire(history, req.params.id, page) };
  });
};
