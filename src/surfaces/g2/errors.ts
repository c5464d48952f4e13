import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';

/** The G2 flat error envelope (placeholder until the G2 work lands). */
export function createG2ErrorHandler(_clock: Clock) {
  return (error: FastifyError, _req: FastifyRequest, reply: FastifyReply) =>
    reply.status(error.statusCode ?? 500).send({ error: error.code ?? 'INTERNAL_ERROR', message: error.message, details: {} });
}
