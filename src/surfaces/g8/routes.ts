import type { FastifyPluginAsync } from 'fastify';
// Placeholder: the real plugin declares its own deps interface (surfaces never import app/).
type Container = Record<string, unknown>;

/** G8 (placeholder until its work lands). */
export const g8Routes: FastifyPluginAsync<Container> = async () => {
  // Filled in by the G8 work.
};
