import { createMemoryRateLimiter } from '../adapters/rate-limit/memory.rate-limiter.ts';
import { createSqliteStorage } from '../adapters/storage/sqlite/sqlite.storage.ts';
import { createApiKeyService } from '../core/api-keys/api-key.service.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Embedder } from '../core/embeddings/embedder.port.ts';
import { createMemoryService } from '../core/memories/memory.service.ts';
import type { RateLimiter } from '../core/rate-limit/rate-limiter.port.ts';
import { createLimitsService, defaultTierLimits } from '../core/rate-limit/tier-limits.ts';
import { createSearchService } from '../core/search/search.service.ts';
import { createBatchService } from '../core/batch/batch.service.ts';
import { createTopicService } from '../core/topics/topic.service.ts';
import { createEmbeddingService } from '../core/embeddings/embedding.service.ts';
import { createTiktokenCounter } from '../adapters/tokenizer/tiktoken.counter.ts';
import type { Storage } from '../core/storage.port.ts';
import type { Config } from './config.ts';
import { createEmbedder } from './embedder.factory.ts';

/** Ports an embedding program (tests, benchmarks) may replace. */
export interface ContainerOverrides {
  clock?: Clock;
  storage?: Storage;
  embedder?: Embedder;
  limiter?: RateLimiter;
}

export type Container = ReturnType<typeof createContainer>;

/** Wires adapters into services: the composition root's one place for it. */
export function createContainer(config: Config, overrides: ContainerOverrides = {}) {
  const clock = overrides.clock ?? systemClock;
  const storage = overrides.storage ?? createSqliteStorage({ file: config.databaseFile });
  const embedder = overrides.embedder ?? createEmbedder(config.embeddings);
  const limiter = overrides.limiter ?? createMemoryRateLimiter(clock);

  const apiKeys = createApiKeyService({ keys: storage.apiKeys, clock });
  const limits = createLimitsService({
    limiter,
    policy: defaultTierLimits({ gatewayPerMinute: config.enterpriseRequestsPerMinute }),
  });
  const memories = createMemoryService({
    memories: storage.memories,
    topics: storage.topics,
    embedder,
    clock,
    limits: { maxContentBytes: config.maxContentBytes, maxEmbedChars: config.maxEmbedChars },
  });

  const topics = createTopicService({ topics: storage.topics, memories: storage.memories, clock });
  const search = createSearchService({
    memories: storage.memories,
    searchLog: storage.searchLog,
    events: storage.events,
    embedder,
    clock,
    timeoutMs: config.searchTimeoutMs,
    maxEmbedChars: config.maxEmbedChars,
  });

  const batch = createBatchService({ memories, search, store: storage.memories, limits, clock });
  const embeddings = createEmbeddingService({ embedder, tokens: createTiktokenCounter(), maxEmbedChars: config.maxEmbedChars });

  let closed = false;
  return {
    config,
    clock,
    storage,
    embedder,
    apiKeys,
    limits,
    memories,
    search,
    embeddings,
    topics,
    batch,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await embedder.close();
      await storage.close();
    },
  };
}
