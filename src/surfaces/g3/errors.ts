import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';

/** The G3 error envelope (placeholder until the G3 work lands). */
export function createG3ErrorHandler(_clock: Clock) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply) =>
    reply.status(error.statusCode ?? 500).send({ error: { code: error.code ?? 'INTERNAL_ERROR', message: error.message, request_id: req.id } });
}
