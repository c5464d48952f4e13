import { randomUUID } from 'node:crypto';
import { createHashingEmbedder } from '../../src/adapters/embeddings/hashing.embedder.ts';
import { createMemoryRateLimiter } from '../../src/adapters/rate-limit/memory.rate-limiter.ts';
import { createSqliteStorage } from '../../src/adapters/storage/sqlite/sqlite.storage.ts';
import { ALL_PERMISSIONS, type Principal, type Tier } from '../../src/core/api-keys/api-key.types.ts';
import { createBatchService } from '../../src/core/batch/batch.service.ts';
import { ManualClock } from '../../src/core/clock.ts';
import type { Embedder } from '../../src/core/embeddings/embedder.port.ts';
import type { DomainError } from '../../src/core/errors.ts';
import type { StoredEvent } from '../../src/core/events/event.types.ts';
import { createMemoryService } from '../../src/core/memories/memory.service.ts';
import { createLimitsService, defaultTierLimits } from '../../src/core/rate-limit/tier-limits.ts';
import type { Scope } from '../../src/core/scope.ts';
import { createSearchService } from '../../src/core/search/search.service.ts';
import { createTopicService } from '../../src/core/topics/topic.service.ts';

export const DIMENSIONS = 256;

/**
 * The core services wired as src/app/container.ts wires them, over an in-memory SQLite store, the hashing embedder
 * (or another) and a manual clock: no HTTP, no files, no timers of ours.
 */
export function createServices(options: { embedder?: Embedder; maxContentBytes?: number; searchTimeoutMs?: number } = {}) {
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 9, 0, 0));
  const storage = createSqliteStorage({ file: ':memory:' });
  const embedder = options.embedder ?? createHashingEmbedder({ dimensions: DIMENSIONS });
  const limits = createLimitsService({ limiter: createMemoryRateLimiter(clock), policy: defaultTierLimits() });
  const memories = createMemoryService({
    memories: storage.memories, topics: storage.topics, embedder, clock,
    limits: { maxContentBytes: options.maxContentBytes ?? 100_000, maxEmbedChars: 8000 },
    quota: limits,
  });
  const search = createSearchService({
    memories: storage.memories, searchLog: storage.searchLog, events: storage.events, embedder, clock,
    timeoutMs: options.searchTimeoutMs ?? 10_000, maxEmbedChars: 8000,
  });
  const topics = createTopicService({ topics: storage.topics, memories: storage.memories, clock });
  const batch = createBatchService({ memories, search, store: storage.memories, limits, clock });
  return {
    clock, storage, embedder, limits, memories, search, topics, batch,
    /** Every event of the scope's tenant and mode, oldest first. */
    eventsOf: (scope: Scope): Promise<StoredEvent[]> =>
      storage.events.readAfter({ tenantId: scope.tenantId, mode: scope.mode, workspace: scope.workspace, afterSeq: 0, limit: 1000 }),
    close: () => storage.close(),
  };
}

export type Services = ReturnType<typeof createServices>;

/** A scope of its own tenant: nothing another test wrote is visible there. */
export const freshScope = (workspace = 'default'): Scope => ({ tenantId: `t-${randomUUID()}`, mode: 'live', workspace });

export function principalOf(scope: Scope, tier: Tier = 'enterprise', userId = 'user-1'): Principal {
  return {
    keyId: `key-${randomUUID()}`, tenantId: scope.tenantId, userId, tier, mode: scope.mode, scopes: new Set(ALL_PERMISSIONS), expiresAt: null,
  };
}

/** The caller `userId` of the scope's tenant, on a tier without quotas: services check quotas against the caller. */
export const actor = (scope: Scope, userId: string): Principal => principalOf(scope, 'enterprise', userId);

/** The DomainError a call rejects with; fails the test when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<DomainError> {
  try {
    await p;
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('expected a rejection');
}
