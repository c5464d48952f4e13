import type { FastifyPluginAsync } from 'fastify';
// Placeholder: the real plugin declares its own deps interface (surfaces never import app/).
type Container = Record<string, unknown>;

/** G10 (placeholder until its work lands). */
export const g10Routes: FastifyPluginAsync<Container> = async () => {
  // Filled in by the G10 work.
};
