import type { Surface } from '../http-kit/surface.ts';
import { createG2ErrorHandler } from './errors.ts';
import { g2ClientRoutes, type G2ClientDeps } from './client-routes.ts';
import { g2Routes, type G2Deps } from './routes.ts';

/** G2: the legacy single-record memory API. */
export const g2Surface: Surface<G2Deps & G2ClientDeps> = {
  name: 'G2 legacy memory',
  prefixes: ['/api/v1/memory'],
  async register(app, deps) {
    await app.register(g2Routes, { prefix: '/api/v1/memory', ...deps });
    await app.register(g2ClientRoutes, { prefix: '/api/v1/memory', ...deps });
  },
  errorHandler: createG2ErrorHandler,
};
