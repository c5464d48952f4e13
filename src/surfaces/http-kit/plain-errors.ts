import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError } from '../../core/errors.ts';
import { setRetryHeaders } from './error-handler.ts';
import { classifyRequestError } from './request-problems.ts';
import { wireFields } from './wire-fields.ts';

export type ErrorHandler = (error: FastifyError, req: FastifyRequest, reply: FastifyReply) => FastifyReply | Promise<FastifyReply>;

const STATUS = { validation: 400, malformed_json: 400, unsupported_media_type: 415, payload_too_large: 413, not_found: 404, method_not_allowed: 405 } as const;

/** Errors outside every surface (unknown paths, docs, health): a plain JSON error, never HTML and never a 500 for bad input. */
export const plainErrorHandler: ErrorHandler = (error, req, reply) => {
  if (isDomainError(error) && error.code === 'OVERLOADED') {
    setRetryHeaders(reply, error);
    return reply.status(503).send({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: error.message, details: [], request_id: req.id, timestamp: new Date().toISOString() },
    });
  }
  const problem = classifyRequestError(error);
  if (!problem) req.log.error({ err: error }, 'unhandled error');
  return reply.status(problem ? STATUS[problem.kind] : 500).send({
    success: false,
    error: {
      code: problem ? problem.kind.toUpperCase() : 'INTERNAL_ERROR',
      message: problem?.message ?? 'An internal error occurred',
      details: problem?.kind === 'validation' ? wireFields(problem.fields) : [],
      request_id: req.id,
      timestamp: new Date().toISOString(),
    },
  });
};
