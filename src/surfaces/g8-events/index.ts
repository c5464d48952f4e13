import type { Surface } from '../http-kit/surface.ts';
import { createG8ErrorHandler } from './errors.ts';
import { g8Routes, type G8Deps } from './routes.ts';

/** G8: the Server-Sent Events stream of the event log. */
export const g8Surface: Surface<G8Deps> = {
  name: 'G8 event stream',
  prefixes: ['/api/v1/stream'],
  async register(app, deps) {
    await app.register(g8Routes, { prefix: '/api/v1/stream', ...deps });
  },
  errorHandler: createG8ErrorHandler,
};
