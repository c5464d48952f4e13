import type { Surface } from '../http-kit/surface.ts';
import { g7AnalyticsRoutes, type G7ReportDeps } from './analytics.routes.ts';
import { g7AnalyticsStreamRoutes, type G7StreamDeps } from './analytics-stream.routes.ts';
import { createG7ErrorHandler } from './errors.ts';
import { g7ClientAnalyticsRoutes, type G7ClientDeps } from './client-analytics.routes.ts';

/** G7: analytics (the report, JSON or CSV, and the WebSocket stream). */
export const g7Surface: Surface<G7StreamDeps & G7ReportDeps & G7ClientDeps> = {
  name: 'G7 analytics',
  prefixes: ['/api/v1/analytics'],
  async register(app, deps) {
    await app.register(g7AnalyticsRoutes, { prefix: '/api/v1/analytics', ...deps });
    await app.register(g7AnalyticsStreamRoutes, { prefix: '/api/v1/analytics', ...deps });
    await app.register(g7ClientAnalyticsRoutes, { prefix: '/api/v1/analytics', ...deps });
  },
  errorHandler: createG7ErrorHandler,
};
