import type { Surface } from '../http-kit/surface.ts';
import { createG1ErrorHandler } from './errors.ts';
import { g1Routes, g1StoreAliasRoutes, type G1Deps } from './routes.ts';
import { topicRoutes, type TopicDeps } from './topics.routes.ts';

/** G1: memories (`X-API-Key`), the deprecated `/api/v1/store` alias, and topics in G1's envelope. */
export const g1Surface: Surface<G1Deps & TopicDeps> = {
  name: 'G1 memories',
  prefixes: ['/api/v1/memories', '/api/v1/store', '/api/v1/topics'],
  async register(app, deps) {
    await app.register(g1Routes, { prefix: '/api/v1/memories', ...deps });
    await app.register(g1StoreAliasRoutes, { prefix: '/api/v1/store', ...deps });
    await app.register(topicRoutes, { prefix: '/api/v1/topics', ...deps });
  },
  errorHandler: createG1ErrorHandler,
};
