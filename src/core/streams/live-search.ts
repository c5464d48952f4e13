import { isoTimestamp, type Clock } from '../clock.ts';
import { isValidAt } from '../memories/memory.types.ts';
import type { Embedder } from '../embeddings/embedder.port.ts';
import { cosine } from '../embeddings/vectors.ts';
import { calibrationFor, scoreCalibration, type ScoreCalibration } from '../search/score-calibration.ts';
import type { EventRepository } from '../events/event.repository.ts';
import type { StoredEvent } from '../events/event.types.ts';
import { prefixedId } from '../ids.ts';
import type { MemoryStore } from '../memories/memory.repository.ts';
import type { Scope } from '../scope.ts';
import type { SearchService } from '../search/search.service.ts';

/**
 * Live search: standing searches over memories created or updated after they began. A subscription holds its
 * query's vector; a memory event matches it when the event came later, carries one of the subscription's tags
 * (when it names any), and the memory's stored vector scores at or above the threshold. The transport (G4's
 * WebSocket) parses messages and renders; the matching is here.
 */

/** The event types live search follows. */
export const LIVE_SEARCH_EVENT_TYPES = ['memory.created', 'memory.updated'] as const;

export interface LiveSubscription {
  id: string;
  query: string;
  vector: Float32Array;
  /** Lowest calibrated similarity_score, 0..1 (docs/api.md, "Scores"). */
  threshold: number;
  /** Any of these tags; undefined: no tag filter. */
  tags: string[] | undefined;
  /** Only events after this seq (the log's end when the subscription began) are matched. */
  fromSeq: number;
}

export type LiveChange = 'created' | 'updated';

/** One subscription matched by one memory event. */
export interface LiveMatch {
  subscriptionId: string;
  event: StoredEvent;
  change: LiveChange;
  similarity: number;
}

/** The memory of a matched event, as the event carries it (the creation time read back when the event lacks it). */
export interface LiveMemory {
  id: string;
  title: unknown;
  content: string;
  tags: unknown;
  metadata: unknown;
  createdAt: string;
}

export interface LiveResult {
  subscriptionId: string;
  change: LiveChange;
  memory: LiveMemory;
  similarity: number;
}

const tagsOf = (e: StoredEvent): unknown[] => (Array.isArray(e.data.tags) ? (e.data.tags as unknown[]) : []);

/**
 * Which subscriptions each event of a page matches, in event order and, within an event, subscription order.
 * `vectors` holds the stored vector of each memory by id; an event whose memory has none (deleted since, or not
 * embedded by this model) matches nothing. Similarities are on the model's calibrated scale (score-calibration.ts;
 * the default is `(1 + cosine) / 2`).
 */
export function matchLiveEvents(
  subscriptions: Iterable<LiveSubscription>, page: readonly StoredEvent[], vectors: ReadonlyMap<string, ArrayLike<number>>,
  calibration: Pick<ScoreCalibration, 'score'> = scoreCalibration(0.4),
): LiveMatch[] {
  const subs = [...subscriptions];
  const matches: LiveMatch[] = [];
  for (const event of page) {
    if (!(LIVE_SEARCH_EVENT_TYPES as readonly string[]).includes(event.type)) continue;
    const vector = vectors.get(String(event.data.id));
    if (!vector) continue;
    const tags = tagsOf(event);
    for (const sub of subs) {
      if (event.seq <= sub.fromSeq) continue;
      if (sub.tags && !sub.tags.some((t) => tags.includes(t))) continue;
      const similarity = calibration.score(cosine(sub.vector, vector));
      if (similarity < sub.threshold) continue;
      matches.push({ subscriptionId: sub.id, event, change: event.type === 'memory.created' ? 'created' : 'updated', similarity });
    }
  }
  return matches;
}

export interface LiveSearchDeps {
  search: Pick<SearchService, 'embedQuery'>;
  embedder: Pick<Embedder, 'modelId'>;
  memories: Pick<MemoryStore, 'vectorsOf' | 'findById'>;
  events: Pick<EventRepository, 'latestSeq'>;
  clock: Clock;
}

export type LiveSearchService = ReturnType<typeof createLiveSearchService>;

export function createLiveSearchService(deps: LiveSearchDeps) {
  /**
   * The memory of an event; null when the memory is gone or not valid now (expired, superseded, or valid only from
   * later: a live search sees what a search would, docs/memory-lifecycle.md). Only matched events are read.
   */
  async function memoryOf(scope: Scope, e: StoredEvent): Promise<LiveMemory | null> {
    const d = e.data;
    const m = await deps.memories.findById(scope, String(d.id));
    if (!m || !isValidAt(m, deps.clock.now())) return null;
    const createdAt = typeof d.created_at === 'string' ? d.created_at : isoTimestamp(m.createdAt);
    return {
      id: String(d.id), title: d.title, content: typeof d.content === 'string' ? d.content : '', tags: d.tags,
      metadata: d.metadata, createdAt,
    };
  }

  return {
    /** A standing search from now on: embeds the query (EMBEDDING_FAILED / VALIDATION_FAILED as the search does). */
    async subscribe(spec: { query: string; threshold: number; tags: string[] | undefined }): Promise<LiveSubscription> {
      const { vector } = await deps.search.embedQuery(spec.query);
      const fromSeq = await deps.events.latestSeq();
      return { id: prefixedId('sub', 16), ...spec, vector, fromSeq };
    },

    /** The results a page of memory events of `scope` brings these subscriptions. */
    async results(scope: Scope, subscriptions: Iterable<LiveSubscription>, page: readonly StoredEvent[]): Promise<LiveResult[]> {
      const subs = [...subscriptions];
      if (subs.length === 0 || page.length === 0) return [];
      const ids = [...new Set(page.map((e) => String(e.data.id)))];
      const vectors = await deps.memories.vectorsOf(scope, ids, deps.embedder.modelId);
      const memories = new Map<StoredEvent, LiveMemory | null>();
      const results: LiveResult[] = [];
      for (const m of matchLiveEvents(subs, page, vectors, calibrationFor(deps.embedder.modelId))) {
        if (!memories.has(m.event)) memories.set(m.event, await memoryOf(scope, m.event));
        const memory = memories.get(m.event);
        if (!memory) continue;
        results.push({ subscriptionId: m.subscriptionId, change: m.change, memory, similarity: m.similarity });
      }
      return results;
    },
  };
}
