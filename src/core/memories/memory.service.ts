import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { EmbeddingError, type Embedder } from '../embeddings/embedder.port.ts';
import { DomainError, type FieldProblem } from '../errors.ts';
import { isUuid, newUuid } from '../ids.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import { chargeQuota } from '../operations/quota.ts';
import type { Scope } from '../scope.ts';
import type { TopicRepository } from '../topics/topic.repository.ts';
import type { AtomicStep, Deletion, EventsFor, MemoryIndex, MemoryStore } from './memory.repository.ts';
import { AtomicStepFailed } from './memory.repository.ts';
import { embeddingGenerated, memoryCreated, memoryDeleted, memorySuperseded, memoryUpdated } from '../events/memory-events.ts';
import { checkValidityBounds, withValidity, type ValidityOption } from './validity.ts';
import {
  assertContentSize, checkContent, checkMemoryType, checkMetadata, checkTitle, checkTopicId, normalizeTags,
  throwIfProblems, type ContentLimits,
} from './memory.rules.ts';
import {
  CLIENT_ID_PATTERN, DEFAULT_MEMORY_TYPE, type ListQuery, type Memory, type MemoryPatch, type MemoryTombstone,
  type MemoryVersion, type NewMemoryInput, type StoredVector,
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

/** A create may supersede at most this many memories at once. */
export const MAX_SUPERSEDES = 100;
/**
 * `return_related`: memories of the workspace valid now whose calibrated similarity to the written memory is at least
 * this (docs/memory-lifecycle.md): near-duplicates, shown so the caller can decide to supersede. Similar is not the
 * same fact, so nothing is superseded automatically.
 */
export const RELATED_MIN_SIMILARITY = 0.85;
export const RELATED_LIMIT = 5;
/** A supersession chain is followed at most this many steps each way (history). */
export const MAX_CHAIN_STEPS = 50;

/** A near-duplicate of a written memory (`return_related`). */
export interface RelatedMemory {
  id: string;
  title: string;
  similarity: number;
}

/** A memory's history: its kept earlier states and its supersession chain (or, once deleted, its tombstone). */
export interface MemoryHistory {
  /** The memory as it is now; null when it was deleted (then `tombstone` says when, by whom and why). */
  memory: Memory | null;
  tombstone: MemoryTombstone | null;
  versions: MemoryVersion[];
  total: number;
  /** The memories this one replaced, nearest first (each superseded the one after it), and those that replaced it, nearest first. */
  chain: { supersedes: ChainLink[]; supersededBy: ChainLink[] };
}
export interface ChainLink {
  id: string;
  title: string;
  validFrom: Date;
  validUntil: Date | null;
}
const linkOf = (m: Memory): ChainLink => ({ id: m.id, title: m.title, validFrom: m.validFrom, validUntil: m.validUntil });

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
    checkValidityBounds(input.validFrom, input.validUntil, problems);
    if (input.supersedes !== undefined) {
      if (!Array.isArray(input.supersedes) || input.supersedes.length > MAX_SUPERSEDES) {
        problems.push({ field: 'supersedes', reason: 'too_many', message: `at most ${MAX_SUPERSEDES} memory ids` });
      } else if (input.supersedes.some((id) => typeof id !== 'string' || !isUuid(id.trim().toLowerCase()))) {
        problems.push({ field: 'supersedes', reason: 'invalid_format', message: 'must be memory ids (UUIDs)' });
      }
    }
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
    checkValidityBounds(patch.validFrom, patch.validUntil, problems);
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
      validFrom: input.validFrom ?? now,
      validUntil: input.validUntil ?? null,
      supersededBy: null,
      version: 1,
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
    if ((clean.validFrom !== undefined) !== (clean.validUntil !== undefined)) {
      // One bound changes: it must still make sense beside the stored other one.
      const current = await memories.findById(scope, id);
      if (!current) throw notFound();
      const problems: FieldProblem[] = [];
      checkValidityBounds(clean.validFrom ?? current.validFrom, clean.validUntil === undefined ? current.validUntil : clean.validUntil, problems);
      throwIfProblems(problems);
    }
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

  /**
   * The steps that mark each of `ids` replaced by `successor` (valid_until = its valid_from), checked first: each must
   * be a memory of the scope, valid from before the successor, not the successor itself and not already replaced
   * by another memory.
   */
  async function supersedeSteps(scope: Scope, actorId: string, successor: Pick<Memory, 'id' | 'validFrom'>,
    ids: readonly string[], at: Date, fieldName: 'supersedes' | 'by' = 'supersedes'): Promise<AtomicStep[]> {
    const steps: AtomicStep[] = [];
    for (const raw of new Set(ids.map((id) => id.trim().toLowerCase()))) {
      const old = await memories.findById(scope, raw);
      const field = { field: fieldName, reason: 'invalid_value' } as const;
      if (!old) {
        throw new DomainError('NOT_FOUND', `Memory ${raw} to supersede not found`, { resource: 'memory', fields: [{ ...field, reason: 'not_found', message: `no memory ${raw}` }] });
      }
      if (old.id === successor.id) throw new DomainError('VALIDATION_FAILED', 'A memory cannot supersede itself', { fields: [{ ...field, message: 'a memory cannot supersede itself' }] });
      if (old.supersededBy !== null && old.supersededBy !== successor.id) {
        throw new DomainError('CONFLICT', `Memory ${old.id} is already superseded by ${old.supersededBy}`, {
          fields: [{ ...field, reason: 'conflict', message: `already superseded by ${old.supersededBy}` }],
        });
      }
      if (successor.validFrom.getTime() <= old.validFrom.getTime()) {
        throw new DomainError('VALIDATION_FAILED', `Memory ${old.id} is valid from after its successor`, {
          fields: [{ ...field, message: `the superseding memory must be valid from after ${old.id} (valid_from ${old.validFrom.toISOString()})` }],
        });
      }
      steps.push({
        kind: 'supersede', id: old.id, by: successor.id, validUntil: successor.validFrom,
        events: (m) => [memorySuperseded(m, successor.id, at, actorId)],
      });
    }
    return steps;
  }

  /** Runs steps atomically, turning a failed step back into its own error. */
  async function atomically(scope: Scope, steps: readonly AtomicStep[]): Promise<Memory[]> {
    try {
      return await memories.applyAtomically(scope, steps);
    } catch (err) {
      if (err instanceof AtomicStepFailed) throw err.error;
      throw err;
    }
  }

  /** Writes a prepared create, with the supersession it asks for in the same transaction. */
  async function insertPrepared(scope: Scope, actorId: string, p: PreparedCreate, supersedes: readonly string[] | undefined): Promise<Memory> {
    if (!supersedes || supersedes.length === 0) {
      await memories.insert(p.memory, p.vector, p.events);
      return p.memory;
    }
    const steps = await supersedeSteps(scope, actorId, p.memory, supersedes, p.memory.createdAt);
    const [created] = await atomically(scope, [{ kind: 'insert', memory: p.memory, vector: p.vector, events: p.events }, ...steps]);
    return created!;
  }

  /** Near-duplicates of a memory valid now (`return_related`), best first. */
  async function relatedTo(scope: Scope, memory: Memory): Promise<RelatedMemory[]> {
    const vector = (await memories.vectorsOf(scope, [memory.id], embedder.modelId)).get(memory.id);
    if (!vector) return [];
    const { hits } = await memories.searchSimilar(scope, {
      vector, modelId: embedder.modelId, limit: RELATED_LIMIT + 1, minCosine: calibration.minCosine(RELATED_MIN_SIMILARITY),
      filter: withValidity({}, undefined, clock.now()),
    });
    return hits.filter((h) => h.memory.id !== memory.id).slice(0, RELATED_LIMIT)
      .map((h) => ({ id: h.memory.id, title: h.memory.title, similarity: calibration.score(h.cosine) }));
  }

  return {
    resolveId,
    prepareCreate,
    supersedeSteps,
    relatedTo,
    prepareUpdate,
    embeddingText,

    /** Checks a new memory's fields without touching storage or the model (batch validate_only). */
    validateCreate: (input: NewMemoryInput): void => { validateNew(input); },
    validateUpdate: (patch: MemoryPatch): void => { validatePatch(patch); },

    /** Creates a memory on behalf of `actor` (its write quota is counted first, whatever the outcome). */
    async create(scope: Scope, actor: Principal, input: NewMemoryInput): Promise<Memory> {
      await chargeQuota(quota, 'memory.create', actor);
      return insertPrepared(scope, actor.userId, await prepareCreate(scope, actor.userId, input), input.supersedes);
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
      const prepared = await prepareCreate(scope, actor.userId, input);
      if (input.supersedes?.length) {
        // A duplicate was ruled out above; the supersession must commit with the insert, which the dedupe insert cannot.
        return { memory: await insertPrepared(scope, actor.userId, prepared, input.supersedes), deduplicated: false };
      }
      const existing = await memories.insertUnlessDuplicate(prepared.memory, prepared.vector, prepared.events);
      return existing ? { memory: existing, deduplicated: true } : { memory: prepared.memory, deduplicated: false };
    },

    /**
     * Marks memory `idOrPrefix` replaced by memory `byIdOrPrefix` after the fact (its valid_until becomes the
     * successor's valid_from), emitting memory.superseded. Superseding again by the same memory changes nothing.
     */
    async supersede(scope: Scope, actor: Principal, idOrPrefix: string, byIdOrPrefix: string): Promise<Memory> {
      await chargeQuota(quota, 'memory.supersede', actor);
      const id = await resolveId(scope, idOrPrefix);
      const successorMissing = () => new DomainError('NOT_FOUND', 'The superseding memory was not found', {
        resource: 'memory', fields: [{ field: 'by', reason: 'not_found', message: 'no such memory' }],
      });
      const successorId = await resolveId(scope, byIdOrPrefix).catch((err: unknown) => {
        throw err instanceof DomainError && err.code === 'NOT_FOUND' ? successorMissing() : err;
      });
      const successor = await memories.findById(scope, successorId);
      if (!successor) throw successorMissing();
      const current = await memories.findById(scope, id);
      if (!current) throw notFound();
      if (current.supersededBy === successor.id) return current;
      // A chain never loops: the successor must not itself be replaced, through any number of steps, by this memory.
      let next = successor.supersededBy;
      for (let i = 0; next !== null && i < MAX_CHAIN_STEPS; i++) {
        if (next === id) {
          throw new DomainError('VALIDATION_FAILED', 'That supersession would make a loop', { fields: [{ field: 'by', reason: 'invalid_value', message: `${successor.id} is already replaced by ${id}` }] });
        }
        next = (await memories.findById(scope, next))?.supersededBy ?? null;
      }
      const steps = await supersedeSteps(scope, actor.userId, successor, [id], clock.now(), 'by');
      const [after] = await atomically(scope, steps);
      return after!;
    },

    /** A memory's kept versions (newest first, paginated) and its supersession chain; a deleted memory's tombstone. */
    async history(scope: Scope, idOrPrefix: string, page: { limit: number; offset: number }): Promise<MemoryHistory> {
      // A full id resolves without a read, so a forgotten memory's id still answers, with its tombstone.
      const id = await resolveId(scope, idOrPrefix);
      const memory = await memories.findById(scope, id);
      if (!memory) {
        const tombstone = await memories.tombstoneOf(scope, id);
        if (!tombstone) throw notFound();
        return { memory: null, tombstone, versions: [], total: 0, chain: { supersedes: [], supersededBy: [] } };
      }
      const { versions, total } = await memories.history(scope, id, page);
      const supersedes: ChainLink[] = [];
      let older = await memories.findSupersededBy(scope, id);
      const seen = new Set([id]);
      while (older.length > 0 && supersedes.length < MAX_CHAIN_STEPS) {
        const fresh = older.filter((m) => !seen.has(m.id));
        if (fresh.length === 0) break;
        for (const m of fresh) { seen.add(m.id); supersedes.push(linkOf(m)); }
        // Follow the most recent of them back (a memory may replace several; the chain shows each).
        older = await memories.findSupersededBy(scope, fresh[fresh.length - 1]!.id);
      }
      const supersededBy: ChainLink[] = [];
      let next = memory.supersededBy;
      while (next !== null && !seen.has(next) && supersededBy.length < MAX_CHAIN_STEPS) {
        seen.add(next);
        const m = await memories.findById(scope, next);
        if (!m) break;
        supersededBy.push(linkOf(m));
        next = m.supersededBy;
      }
      return { memory, tombstone: null, versions, total, chain: { supersedes, supersededBy } };
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
      const deletion: Deletion = { at, by: actor.userId, reason };
      const deleted = await memories.delete(scope, id, deletion, (m) => [memoryDeleted(m, at, actor.userId, reason)]);
      if (!deleted) throw notFound();
      return { id, deletedAt: at };
    },

    /** Lists the scope's memories valid now (or as `validity` asks: as of a moment, or all). */
    list: (scope: Scope, query: ListQuery, validity?: ValidityOption) =>
      memories.list(scope, { ...query, filter: withValidity(query.filter, validity, clock.now()) }),

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
        const ok = await memories.delete(scope, found.id, { at, by: actor.userId, reason: 'user_request' },
          (m) => [memoryDeleted(m, at, actor.userId, 'user_request')]);
        (ok ? deleted : failed).push(legacyId);
      }
      return { deleted, failed };
    },
  };
}

export const notFound = () => new DomainError('NOT_FOUND', 'Memory not found', { resource: 'memory' });
