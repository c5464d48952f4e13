import type { Surface } from '../http-kit/surface.ts';
import { createG4ErrorHandler } from './errors.ts';
import { g4AnalyticsRoutes, type G4AnalyticsDeps } from './analytics.routes.ts';
import { g4Routes, type G4Deps } from './routes.ts';
import { g4StreamRoutes, type G4StreamDeps } from './stream.routes.ts';

/** G4: search and discovery (search, vector search, suggestions, embeddings, search analytics), the search stream and live search. */
export const g4Surface: Surface<G4Deps & G4StreamDeps & G4AnalyticsDeps> = {
  name: 'G4 search and discovery',
  prefixes: ['/v1/search', '/v1/embeddings', '/v1/analytics'],
  async register(app, deps) {
    await app.register(g4Routes, { ...deps });
    await app.register(g4StreamRoutes, { ...deps });
    await app.register(g4AnalyticsRoutes, { ...deps });
  },
  errorHandler: createG4ErrorHandler,
};
