import type { Surface } from '../http-kit/surface.ts';
import { createG3ErrorHandler } from './errors.ts';
import { g3Routes, type G3Deps } from './routes.ts';

/** G3: search, hybrid search and batch search. */
export const g3Surface: Surface<G3Deps> = {
  name: 'G3 search',
  prefixes: ['/api/v1/search'],
  async register(app, deps) {
    await app.register(g3Routes, { prefix: '/api/v1/search', ...deps });
  },
  errorHandler: createG3ErrorHandler,
};
