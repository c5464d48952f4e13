import type { Surface } from '../http-kit/surface.ts';
import { createG10ErrorHandler } from './errors.ts';
import { g10Routes, type G10Deps } from './routes.ts';

/** G10: generic webhooks and the producer endpoint `POST /v1/events`. */
export const g10Surface: Surface<G10Deps> = {
  name: 'G10 webhooks',
  prefixes: ['/v1/webhooks', '/v1/events'],
  async register(app, deps) {
    await app.register(g10Routes, { ...deps });
  },
  errorHandler: createG10ErrorHandler,
};
