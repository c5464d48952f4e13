import type { Surface } from '../http-kit/surface.ts';
import { g7AnalyticsStreamRoutes, type G7StreamDeps } from './analytics-stream.routes.ts';
import { createG7ErrorHandler } from './errors.ts';

/** G7: analytics (the WebSocket stream). */
export const g7Surface: Surface<G7StreamDeps> = {
  name: 'G7 analytics',
  prefixes: ['/api/v1/analytics'],
  async register(app, deps) {
    await app.register(g7AnalyticsStreamRoutes, { prefix: '/api/v1/analytics', ...deps });
  },
  errorHandler: createG7ErrorHandler,
};
