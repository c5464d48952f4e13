import type { Surface } from '../http-kit/surface.ts';
import { createG5ErrorHandler } from './errors.ts';
import { g5Routes, type G5Deps } from './routes.ts';

/** G5: OpenAI-style embeddings. */
export const g5Surface: Surface<G5Deps> = {
  name: 'G5 embeddings',
  prefixes: ['/api/v1/embeddings'],
  async register(app, deps) {
    await app.register(g5Routes, { prefix: '/api/v1/embeddings', ...deps });
  },
  errorHandler: createG5ErrorHandler,
};
