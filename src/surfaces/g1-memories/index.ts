import type { Surface } from '../http-kit/surface.ts';
import { createG1ErrorHandler } from './errors.ts';
import { g1ForgetRoutes, type G1ForgetDeps } from './forget.routes.ts';
import { g1HistoryRoutes, type G1HistoryDeps } from './history.routes.ts';
import { g1IngestRoutes, type G1IngestDeps } from './ingest.routes.ts';
import { g1Routes, g1StoreAliasRoutes, type G1Deps } from './routes.ts';
import { g1SupersedeRoutes, type G1SupersedeDeps } from './supersede.routes.ts';
import { topicRoutes, type TopicDeps } from './topics.routes.ts';

/** G1: memories (`X-API-Key`; forgetting by filter in forget.routes.ts, ingestion in ingest.routes.ts), the deprecated `/api/v1/store` alias, and topics in G1's envelope. */
export const g1Surface: Surface<G1Deps & TopicDeps & G1ForgetDeps & G1SupersedeDeps & G1HistoryDeps & G1IngestDeps> = {
  name: 'G1 memories',
  prefixes: ['/api/v1/memories', '/api/v1/store', '/api/v1/topics'],
  async register(app, deps) {
    await app.register(g1Routes, { prefix: '/api/v1/memories', ...deps });
    await app.register(g1ForgetRoutes, { prefix: '/api/v1/memories', ...deps });
    // Supersession and history (docs/memory-lifecycle.md), one file each.
    await app.register(g1SupersedeRoutes, { prefix: '/api/v1/memories', ...deps });
    await app.register(g1HistoryRoutes, { prefix: '/api/v1/memories', ...deps });
    // Conversations in (docs/ingestion.md): jobs, their proposals and a person's review.
    await app.register(g1IngestRoutes, { prefix: '/api/v1/memories', ...deps });
    await app.register(g1StoreAliasRoutes, { prefix: '/api/v1/store', ...deps });
    await app.register(topicRoutes, { prefix: '/api/v1/topics', ...deps });
  },
  errorHandler: createG1ErrorHandler,
};
