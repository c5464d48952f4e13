import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import type { MemoryRepository } from '../../core/memories/memory.repository.ts';
import type { SearchLogRepository } from '../../core/search/search-log.ts';
import type { SearchService } from '../../core/search/search.service.ts';
import type { AuthDeps } from '../http-kit/auth.ts';

export interface G4Deps extends AuthDeps {
  search: SearchService;
  embeddings: EmbeddingService;
  /** Suggestions read tags and titles straight from storage. */
  storage: { memories: Pick<MemoryRepository, 'suggestTags' | 'suggestTitles'>; searchLog: Pick<SearchLogRepository, 'suggestQueries'> };
  clock: Clock;
}

/** G4: `/v1/search`, `/v1/search/vector`, `/v1/search/suggestions`, `/v1/embeddings` (Bearer). Registered without a prefix: routes carry full paths. */
export const g4Routes: FastifyPluginAsync<G4Deps> = async () => {
  // Filled in by the G4 work.
};
