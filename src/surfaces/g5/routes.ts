import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import type { AuthDeps } from '../http-kit/auth.ts';

export interface G5Deps extends AuthDeps {
  embeddings: EmbeddingService;
  clock: Clock;
}

/** G5: `POST /api/v1/embeddings` (Bearer). Register with prefix `/api/v1/embeddings`. */
export const g5Routes: FastifyPluginAsync<G5Deps> = async () => {
  // Filled in by the G5 work.
};
