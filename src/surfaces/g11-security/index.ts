import type { Surface } from '../http-kit/surface.ts';
import { createG11ErrorHandler } from './errors.ts';
import { g11Routes, type G11Deps } from './routes.ts';

/** G11: the secrets component under `/v1/security`: secrets, API keys, audit logs, webhooks, MCP resources and approvals. */
export const g11Surface: Surface<G11Deps> = {
  name: 'G11 security',
  prefixes: ['/v1/security'],
  async register(app, deps) {
    await app.register(g11Routes, { ...deps });
  },
  errorHandler: createG11ErrorHandler,
};
