import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { EmbeddingError, type Embedder } from '../embeddings/embedder.port.ts';
import { DomainError, type FieldProblem } from '../errors.ts';
import { isUuid, newUuid } from '../ids.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import { chargeQuota } from '../operations/quota.ts';
import type { Scope } from '../scope.ts';
import type { TopicRepository } from '../topics/topic.repository.ts';
import type { EventsFor, MemoryIndex, MemoryStore } from './memory.repository.ts';
import { embeddingGenerated, memoryCreated, memoryDeleted, memoryUpdated } from '../events/memory-events.ts';
import {
  assertContentSize, checkContent, checkMemoryType, checkMetadata, checkTitle, checkTopicId, normalizeTags,
  throwIfProblems, type ContentLimits,
} from './memory.rules.ts';
import {
  CLIENT_ID_PATTERN, DEFAULT_MEMORY_TYPE, type ListQuery, type Memory, type MemoryPatch, type NewMemoryInput,
  type StoredVector,
} from './memory.types.ts';
import { calibrationFor } from '../search/score-calibration.ts';

export const MIN_ID_PREFIX = 8;

/** A memory similar to another (MemoryService.similarTo). */
export interface SimilarMemory {
  memory: Memory;
  /** The model's calibrated similarity (core/search/score-calibration.ts). */
  similarity: number;
  cosine: number;
}
const AMBIGUOUS_CANDIDATES_SHOWN = 10;

export interface MemoryServiceLimits extends ContentLimits {
  /** Text beyond this many characters is not embedded (the model's useful context is far shorter). */
  maxEmbedChars: number;
}

/** What a memory is embedded from: its title and its content (the same text for writes, `mnemo reindex` and imports). */
export const memoryEmbeddingText = (title: string, content: string, maxEmbedChars: number): string =>
  `${title}\n\n${content}`.slice(0, maxEmbedChars);

export type MemoryService = ReturnType<typeof createMemoryService>;

export interface PreparedCreate {
  memory: Memory;
  vector: StoredVector;
  /** The events the create emits, built from the memory as stored. */
  events: EventsFor;
}
export interface PreparedUpdate {
  id: string;
  patch: MemoryPatch;
  vector: StoredVector | null;
  at: Date;
  actorId: string;
  events: EventsFor;
}

export function createMemoryService(deps: {
  /** The store, and the similarity ranking of `similarTo`. */
  memories: MemoryStore & Pick<MemoryIndex, 'searchSimilar'>;
  /** A memory's topic_id must name a topic of the same scope. */
  topics: Pick<TopicRepository, 'findById'>;
  embedder: Embedder;
  clock: Clock;
  limits: MemoryServiceLimits;
  /** Every create, update and delete counts against the caller's hourly memory-write quota first. */
  quota: Pick<LimitsService, 'memoryWrite'>;
}) {
  const { memories, topics, embedder, clock, limits, quota } = deps;
  /** Similarities shown and thresholds taken are on the model's calibrated scale, as every search's. */
  const calibration = calibrationFor(embedder.modelId);

  async function assertTopic(scope: Scope, topicId: string | null | undefined): Promise<void> {
    if (topicId === null || topicId === undefined) return;
    if (!(await topics.findById(scope, topicId.toLowerCase()))) {
      throw new DomainError('VALIDATION_FAILED', 'Unknown topic', { fields: [{ field: 'topic_id', reason: 'not_found', message: 'no such topic' }] });
    }
  }

  const embeddingText = (title: string, content: string): string => memoryEmbeddingText(title, content, limits.maxEmbedChars);

  async function embedOne(text: string): Promise<StoredVector> {
    let vector: Float32Array | undefined;
    try {
      [vector] = await embedder.embed([text]);
    } catch (err) {
      if (err instanceof EmbeddingError) {
        throw new DomainError('EMBEDDING_FAILED', `Embedding failed: ${err.message}`, { cause: err.message });
      }
      throw err;
    }
    if (!vector) throw new DomainError('EMBEDDING_FAILED', 'The embedder returned no vector');
    return { modelId: embedder.modelId, vector };
  }

  async function resolveId(scope: Scope, idOrPrefix: string): Promise<string> {
    const candidate = idOrPrefix.trim().toLowerCase();
    if (isUuid(candidate)) return candidate;
    if (candidate.length < MIN_ID_PREFIX) {
      throw new DomainError('VALIDATION_FAILED', `An id prefix must have at least ${MIN_ID_PREFIX} characters`, {
        fields: [{ field: 'id', reason: 'invalid_format', message: `must be a full UUID or a prefix of at least ${MIN_ID_PREFIX} characters` }],
      });
    }
    // No UUID can start with anything but hex digits and dashes: such an id simply does not exist.
    if (candidate.length > 36 || !/^[0-9a-f-]+$/.test(candidate)) throw notFound();
    const ids = await memories.findIdsByPrefix(scope, candidate, AMBIGUOUS_CANDIDATES_SHOWN + 1);
    if (ids.length === 0) throw notFound();
    if (ids.length > 1) {
      // Only ids inside the caller's scope can ever be listed here.
      throw new DomainError('AMBIGUOUS_ID', `The prefix ${candidate} matches more than one memory`, {
        prefix: candidate,
        candidates: ids.slice(0, AMBIGUOUS_CANDIDATES_SHOWN),
        fields: [{ field: 'id', reason: 'ambiguous', message: 'prefix matches more than one memory; give more characters' }],
      });
    }
    return ids[0]!;
  }

  function validateNew(input: NewMemoryInput): { tags: string[]; memoryType: string } {
    const problems: FieldProblem[] = [];
    if (input.clientId !== undefined && !CLIENT_ID_PATTERN.test(input.clientId)) {
      problems.push({ field: 'id', reason: 'invalid_format', message: 'must be 1-128 characters: letters, digits, _ . : -' });
    }
    checkTitle(input.title, problems);
    checkContent(input.content, problems);
    const memoryType = input.memoryType ?? DEFAULT_MEMORY_TYPE;
    checkMemoryType(memoryType, problems);
    const tags = normalizeTags(input.tags ?? [], problems);
    if (input.metadata) checkMetadata(input.metadata, problems);
    checkTopicId(input.topicId ?? null, problems);
    throwIfProblems(problems);
    assertContentSize(input.content, limits);
    return { tags, memoryType };
  }

  function validatePatch(patch: MemoryPatch): MemoryPatch {
    const problems: FieldProblem[] = [];
    const out: MemoryPatch = { ...patch };
    if (patch.title !== undefined) checkTitle(patch.title, problems);
    if (patch.content !== undefined) checkContent(patch.content, problems);
    if (patch.memoryType !== undefined) checkMemoryType(patch.memoryType, problems);
    if (patch.tags !== undefined) out.tags = normalizeTags(patch.tags, problems);
    if (patch.metadata !== undefined) checkMetadata(patch.metadata, problems);
    if (patch.topicId !== undefined) checkTopicId(patch.topicId, problems);
    const changes = Object.values(patch).filter((v) => v !== undefined).length;
    if (changes === 0) problems.push({ field: 'body', reason: 'empty', message: 'at least one field to update is required' });
    throwIfProblems(problems);
    if (patch.content !== undefined) assertContentSize(patch.content, limits);
    return out;
  }

  /**
   * Everything a create needs before the write: validation, the topic check and the embedding. No model or
   * network call may happen inside a transaction, and a failed embedding writes nothing.
   */
  async function prepareCreate(scope: Scope, actorId: string, input: NewMemoryInput): Promise<PreparedCreate> {
    const { tags, memoryType } = validateNew(input);
    await assertTopic(scope, input.topicId);
    const vector = input.vector ?? await embedOne(embeddingText(input.title, input.content));
    const now = clock.now();
    const memory: Memory = {
      id: newUuid(),
      clientId: input.clientId ?? null,
      scope,
      title: input.title,
      content: input.content,
      memoryType,
      tags,
      metadata: input.metadata ?? {},
      topicId: input.topicId?.toLowerCase() ?? null,
      createdAt: now,
      updatedAt: now,
      createdBy: actorId,
      updatedBy: actorId,
      accessCount: 0,
      lastAccessed: null,
    };
    // memory.created always; embedding.generated when Mnemo computed the vector (not for a client-supplied one).
    const events: EventsFor = (m) => (input.vector ? [memoryCreated(m)] : [memoryCreated(m), embeddingGenerated(m, vector, 'memory.created', now)]);
    return { memory, vector, events };
  }

  /** Validation, id resolution, topic check and (when title or content change) the new embedding. */
  async function prepareUpdate(scope: Scope, actorId: string, idOrPrefix: string, patch: MemoryPatch): Promise<PreparedUpdate> {
    const clean = validatePatch(patch);
    const id = await resolveId(scope, idOrPrefix);
    await assertTopic(scope, clean.topicId);
    if (clean.topicId) clean.topicId = clean.topicId.toLowerCase();
    let vector: StoredVector | null = null;
    if (clean.title !== undefined || clean.content !== undefined) {
      const current = await memories.findById(scope, id);
      if (!current) throw notFound();
      vector = await embedOne(embeddingText(clean.title ?? current.title, clean.content ?? current.content));
    }
    const changes = {
      content: clean.content !== undefined || clean.title !== undefined,
      metadata: clean.metadata !== undefined || clean.memoryType !== undefined || clean.topicId !== undefined,
      tags: clean.tags !== undefined,
    };
    const at = clock.now();
    const events: EventsFor = (m) => (vector
      ? [memoryUpdated(m, changes), embeddingGenerated(m, vector, 'memory.updated', at)]
      : [memoryUpdated(m, changes)]);
    return { id, patch: clean, vector, at, actorId, events };
  }

  /** Finds a memory by a legacy id: a client-chosen id, `mem_<uuid>`, or the bare UUID. */
  async function findByLegacyId(scope: Scope, legacyId: string): Promise<Memory> {
    const byClient = await memories.findByClientId(scope, legacyId);
    if (byClient) return byClient;
    const uuid = legacyId.startsWith('mem_') ? legacyId.slice(4) : legacyId;
    const found = isUuid(uuid) ? await memories.findById(scope, uuid.toLowerCase()) : null;
    if (!found) throw notFound();
    return found;
  }

  /** The update itself, once the quota is counted. */
  async function applyUpdate(scope: Scope, actorId: string, idOrPrefix: string, patch: MemoryPatch): Promise<Memory> {
    const p = await prepareUpdate(scope, actorId, idOrPrefix, patch);
    // updated_at moves forward even when two writes land in the same millisecond (the adapter sees to it).
    const updated = await memories.update(scope, p.id, p.patch, p.at, p.actorId, p.vector, p.events);
    if (!updated) throw notFound();
    return updated;
  }

  return {
    resolveId,
    prepareCreate,
    prepareUpdate,
    embeddingText,

    /** Checks a new memory's fields without touching storage or the model (batch validate_only). */
    validateCreate: (input: NewMemoryInput): void => { validateNew(input); },
    validateUpdate: (patch: MemoryPatch): void => { validatePatch(patch); },

    /** Creates a memory on behalf of `actor` (its write quota is counted first, whatever the outcome). */
    async create(scope: Scope, actor: Principal, input: NewMemoryInput): Promise<Memory> {
      await chargeQuota(quota, 'memory.create', actor);
      const { memory, vector, events } = await prepareCreate(scope, actor.userId, input);
      await memories.insert(memory, vector, events);
      return memory;
    },

    /**
     * Creates a memory unless the scope already holds one with identical content (`contentHash`: normalised
     * whitespace, see core/memories/content-hash.ts); then returns that one, writes nothing and emits no event.
     * The write quota is counted either way (the request is a write request). Racing creates of one content store
     * it once (the repository's atomic check-and-insert). The new memory's fields are validated first in both cases.
     */
    async createDeduplicated(scope: Scope, actor: Principal, input: NewMemoryInput): Promise<{ memory: Memory; deduplicated: boolean }> {
      await chargeQuota(quota, 'memory.create', actor);
      validateNew(input);
      // A duplicate found before the embedding saves the model call; the insert below checks again, atomically.
      const early = await memories.findByContent(scope, input.content);
      if (early) return { memory: early, deduplicated: true };
      const { memory, vector, events } = await prepareCreate(scope, actor.userId, input);
      const existing = await memories.insertUnlessDuplicate(memory, vector, events);
      return existing ? { memory: existing, deduplicated: true } : { memory, deduplicated: false };
    },

    /**
     * Memories of the scope most similar to one memory (its stored vector under the configured model, else its
     * text embedded now), best first, at most `limit`, whose calibrated similarity (score-calibration.ts, as every
     * search shows) is at or above `threshold`; the memory itself is never among them. `total` counts the others at
     * or above the threshold (exact up to EXACT_SIMILARITY_SCAN_MAX vectors, as searchSimilar).
     */
    async similarTo(scope: Scope, idOrPrefix: string, options: { limit: number; threshold: number }):
      Promise<{ memory: Memory; hits: SimilarMemory[]; total: number }> {
      const id = await resolveId(scope, idOrPrefix);
      const memory = await memories.findById(scope, id);
      if (!memory) throw notFound();
      const stored = (await memories.vectorsOf(scope, [id], embedder.modelId)).get(id);
      const vector = stored ?? (await embedOne(embeddingText(memory.title, memory.content))).vector;
      const { hits, total } = await memories.searchSimilar(scope, {
        vector, modelId: embedder.modelId, limit: options.limit + 1, minCosine: calibration.minCosine(options.threshold),
        filter: {},
      });
      const others = hits.filter((h) => h.memory.id !== id);
      // The memory's own stored vector matches itself (similarity 1, up to rounding) and was counted in total.
      const selfCounted = stored !== undefined && hits.length > others.length ? 1 : stored !== undefined && options.threshold < 0.999999 ? 1 : 0;
      const shown = others.slice(0, options.limit)
        .map((h) => ({ memory: h.memory, similarity: calibration.score(h.cosine), cosine: h.cosine }));
      return { memory, hits: shown, total: Math.max(others.length, total - selfCounted) };
    },

    /**
     * The id a legacy client (G2) knows a memory by: its client-chosen id when it has one, else `mem_<uuid>`.
     */
    legacyIdOf: (m: Memory): string => m.clientId ?? `mem_${m.id}`,

    findByLegacyId,

    /**
     * G2's update of a memory found by its legacy id: `text` replaces the content (and title) only when it differs
     * from the stored content, so an unchanged text is not re-embedded. An update that changes nothing still counts
     * as a write, and writes nothing (updated_at stays).
     */
    async updateByLegacyId(
      scope: Scope, actor: Principal, legacyId: string,
      change: { text?: { title: string; content: string } | undefined; patch: MemoryPatch; metadataKeys?: Record<string, string | null> | undefined },
    ): Promise<{ memory: Memory; textChanged: boolean }> {
      const current = await findByLegacyId(scope, legacyId);
      const textChanged = change.text !== undefined && change.text.content !== current.content;
      const patch: MemoryPatch = {
        ...(textChanged ? { title: change.text!.title, content: change.text!.content } : {}),
        ...Object.fromEntries(Object.entries(change.patch).filter(([, v]) => v !== undefined)),
      };
      // Single metadata keys (the client's summary, project_ref) set on the metadata the update leaves.
      const keys = Object.entries(change.metadataKeys ?? {});
      if (keys.length > 0) {
        const metadata = { ...(patch.metadata ?? current.metadata) };
        for (const [k, v] of keys) {
          if (v === null) delete metadata[k];
          else metadata[k] = v;
        }
        patch.metadata = metadata;
      }
      if (patch.content === current.content && !textChanged) delete patch.content;
      if (patch.title === current.title && !textChanged) delete patch.title;
      await chargeQuota(quota, 'memory.update', actor);
      const memory = Object.keys(patch).length > 0 ? await applyUpdate(scope, actor.userId, current.id, patch) : current;
      return { memory, textChanged: patch.title !== undefined || patch.content !== undefined };
    },

    /** Reads one memory without counting an access (checks, validation). */
    async find(scope: Scope, idOrPrefix: string): Promise<Memory> {
      const memory = await memories.findById(scope, await resolveId(scope, idOrPrefix));
      if (!memory) throw notFound();
      return memory;
    },

    /** Reads one memory by its UUID without counting an access; null when it does not (or no longer) exist. */
    findById: (scope: Scope, id: string): Promise<Memory | null> => memories.findById(scope, id),

    /** Reads one memory and counts the access. */
    async get(scope: Scope, idOrPrefix: string): Promise<Memory> {
      const id = await resolveId(scope, idOrPrefix);
      const memory = await memories.recordAccess(scope, id, clock.now());
      if (!memory) throw notFound();
      return memory;
    },

    /** The stored vectors of these memories under the configured model (a memory without one is absent). */
    vectorsOf: (scope: Scope, ids: readonly string[]): Promise<Map<string, Float32Array>> => memories.vectorsOf(scope, ids, embedder.modelId),

    /**
     * A memory's vector: the configured model's, else the one stored under `suppliedModelId` (a vector the client
     * supplied), else what the configured model makes of its text now (nothing is written).
     */
    async vectorOf(scope: Scope, m: Memory, suppliedModelId: string): Promise<Float32Array> {
      const stored = (await memories.vectorsOf(scope, [m.id], embedder.modelId)).get(m.id)
        ?? (await memories.vectorsOf(scope, [m.id], suppliedModelId)).get(m.id);
      return stored ?? (await embedOne(embeddingText(m.title, m.content))).vector;
    },

    /** Updates a memory on behalf of `actor` (its write quota is counted first, whatever the outcome). */
    async update(scope: Scope, actor: Principal, idOrPrefix: string, patch: MemoryPatch): Promise<Memory> {
      await chargeQuota(quota, 'memory.update', actor);
      return applyUpdate(scope, actor.userId, idOrPrefix, patch);
    },

    /**
     * Deletes permanently on behalf of `actor` (its write quota is counted first); `reason` goes into the
     * memory.deleted event (`user_request`, or `batch` from G6).
     */
    async delete(scope: Scope, actor: Principal, idOrPrefix: string, reason = 'user_request'): Promise<{ id: string; deletedAt: Date }> {
      await chargeQuota(quota, 'memory.delete', actor);
      const id = await resolveId(scope, idOrPrefix);
      const at = clock.now();
      const deleted = await memories.delete(scope, id, (m) => [memoryDeleted(m, at, actor.userId, reason)]);
      if (!deleted) throw notFound();
      return { id, deletedAt: at };
    },

    list: (scope: Scope, query: ListQuery) => memories.list(scope, query),

    /** Counts, sizes, accesses and tags of the scope (see ScopeUsage). */
    usage: (scope: Scope, options: { since: Date; top: number }) => memories.usage(scope, options),

    /**
     * Deletes each memory named by a legacy id (G2: client id, mem_<uuid> or UUID), one write each (quota counted
     * per deletion); ids that name nothing in the scope (or repeat one already deleted) come back in `failed`.
     */
    async deleteByLegacyIds(scope: Scope, actor: Principal, legacyIds: readonly string[]): Promise<{ deleted: string[]; failed: string[] }> {
      const deleted: string[] = [];
      const failed: string[] = [];
      for (const legacyId of legacyIds) {
        const found = await findByLegacyId(scope, legacyId).catch((err: unknown) => {
          if (err instanceof DomainError && err.code === 'NOT_FOUND') return null;
          throw err;
        });
        if (!found) {
          failed.push(legacyId);
          continue;
        }
        await chargeQuota(quota, 'memory.delete_many', actor);
        const at = clock.now();
        const ok = await memories.delete(scope, found.id, (m) => [memoryDeleted(m, at, actor.userId, 'user_request')]);
        (ok ? deleted : failed).push(legacyId);
      }
      return { deleted, failed };
    },
  };
}

export const notFound = () => new DomainError('NOT_FOUND', 'Memory not found', { resource: 'memory' });
