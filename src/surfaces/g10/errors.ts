import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.ts';

/** The G10 error envelope (placeholder until the G10 work lands). */
export function createG10ErrorHandler(_clock: Clock) {
  return (error: FastifyError, req: FastifyRequest, reply: FastifyReply) =>
    reply.status(error.statusCode ?? 500).send({ success: false, error: { code: error.code ?? 'INTERNAL_ERROR', message: error.message, request_id: req.id } });
}
