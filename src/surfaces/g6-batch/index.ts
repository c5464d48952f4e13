import type { Surface } from '../http-kit/surface.ts';
import { createG6ErrorHandler } from './errors.ts';
import { g6Routes, type G6Deps } from './routes.ts';

/** G6: batch operations. */
export const g6Surface: Surface<G6Deps> = {
  name: 'G6 batch',
  prefixes: ['/api/v1/batch'],
  async register(app, deps) {
    await app.register(g6Routes, { prefix: '/api/v1/batch', ...deps });
  },
  errorHandler: createG6ErrorHandler,
};
