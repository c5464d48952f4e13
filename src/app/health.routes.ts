import type { FastifyPluginAsync } from 'fastify';
import type { Container } from './container.ts';
import { VERSION } from './version.ts';
import { embeddingsHealth } from './embeddings-health.ts';
import { reindexRunHealth } from './reindex-run-health.ts';

const startedAt = Date.now();

/** What `/health` answers (and the dashboard's overview shows): the store's answer and the embeddings' coverage. */
export function createHealthCheck(c: Container) {
  const embeddings = embeddingsHealth(c.storage.memories, c.embedder);
  const reindexRun = reindexRunHealth(c.storage.reindexProgress, c.clock);
  return async () => {
    const storageOk = await c.storage.ping().catch(() => false);
    // No store, no run record to read (on PostgreSQL a read would wait for a pool connection to a store that is down).
    const [coverage, run] = await Promise.all([embeddings(), storageOk ? reindexRun() : null]);
    return {
      status: storageOk ? 'ok' : 'degraded',
      version: VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      storage: { kind: c.storage.kind, ok: storageOk },
      embeddings: { ...coverage, reindex_run: run },
    };
  };
}

export type HealthCheck = ReturnType<typeof createHealthCheck>;

/**
 * `/health` and `/api/v1/health`: no key needed; 503 when the store does not answer. `check` is the server's one health
 * check (shared with the dashboard's overview, so the coverage count it caches is made once).
 */
export const healthRoutes: FastifyPluginAsync<{ check: HealthCheck }> = async (app, { check }) => {
  const handler = async (_req: unknown, reply: { status: (n: number) => unknown }) => {
    const health = await check();
    if (!health.storage.ok) reply.status(503);
    return health;
  };
  app.get('/health', { schema: { tags: ['health'], summary: 'Liveness and readiness', security: [] } }, handler);
  app.get('/api/v1/health', { schema: { tags: ['health'], summary: 'Liveness and readiness', security: [] } }, handler);
};
