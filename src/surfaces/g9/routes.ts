import type { FastifyPluginAsync } from 'fastify';
// Placeholder: the real plugin declares its own deps interface (surfaces never import app/).
type Container = Record<string, unknown>;

/** G9 (placeholder until its work lands). */
export const g9Routes: FastifyPluginAsync<Container> = async () => {
  // Filled in by the G9 work.
};
