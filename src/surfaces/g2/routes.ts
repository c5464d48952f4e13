import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import type { Embedder } from '../../core/embeddings/embedder.port.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import type { MemoryRepository } from '../../core/memories/memory.repository.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import type { AuthDeps } from '../http-kit/auth.ts';

export interface G2Deps extends AuthDeps {
  memories: MemoryService;
  embeddings: EmbeddingService;
  embedder: Pick<Embedder, 'modelId' | 'dimensions'>;
  limits: Pick<LimitsService, 'gateway' | 'memoryWrite'>;
  /** Reading a memory's stored vector for GET. */
  storage: { memories: Pick<MemoryRepository, 'vectorsOf'> };
  clock: Clock;
}

/** G2 (legacy): `/api/v1/memory` (Bearer, optional X-Workspace-ID). Register with prefix `/api/v1/memory`. */
export const g2Routes: FastifyPluginAsync<G2Deps> = async () => {
  // Filled in by the G2 work.
};
