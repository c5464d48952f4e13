import type { Surface } from '../http-kit/surface.ts';
import { createG9ErrorHandler } from './errors.ts';
import { g9Routes, type G9Deps } from './routes.ts';

/** G9: webhooks for memory events. */
export const g9Surface: Surface<G9Deps> = {
  name: 'G9 memory webhooks',
  prefixes: ['/api/v1/webhooks'],
  async register(app, deps) {
    await app.register(g9Routes, { prefix: '/api/v1/webhooks', ...deps });
  },
  errorHandler: createG9ErrorHandler,
};
