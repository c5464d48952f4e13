import type { FastifyPluginAsync } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { SearchService } from '../../core/search/search.service.ts';
import type { AuthDeps } from '../http-kit/auth.ts';

export interface G3Deps extends AuthDeps {
  search: SearchService;
  clock: Clock;
}

/** G3: `/api/v1/search`, `/hybrid`, `/batch` (Bearer). Register with prefix `/api/v1/search`. */
export const g3Routes: FastifyPluginAsync<G3Deps> = async () => {
  // Filled in by the G3 work.
};
