import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';

/** The G8 error envelope (placeholder until the G8 work lands). */
export function createG8ErrorHandler(_clock: Clock) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply) =>
    reply.status(error.statusCode ?? 500).send({ success: false, error: { code: error.code ?? 'INTERNAL_ERROR', message: error.message, request_id: req.id } });
}
