import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { g1Routes } from '../surfaces/g1/routes.ts';
import { requestIdFor } from '../surfaces/http-kit/request-id.ts';
import { createValidatorCompiler } from '../surfaces/http-kit/validation.ts';
import { classifyRequestError } from '../surfaces/http-kit/request-problems.ts';
import type { Container } from './container.ts';
import { healthRoutes } from './health.routes.ts';
import { VERSION } from './version.ts';

export interface ServerOptions {
  /** false silences request logs (tests); otherwise pino JSON lines at this level. */
  logLevel: string | false;
}

/** The HTTP server: every surface, docs and health, over one container. */
export async function buildServer(c: Container, options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logLevel === false ? false : { level: options.logLevel },
    bodyLimit: c.config.bodyLimitBytes,
    genReqId: requestIdFor,
    // Shutdown: stop accepting, let in-flight requests finish, close idle keep-alive sockets.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON bodies are accepted: anything else is a 415 in the surface's envelope, never parsed as text.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('principal', null);
  app.addHook('onSend', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
  });

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Mnemo',
        version: VERSION,
        description: 'Memory, search and secrets service for AI applications and tools. See docs/api.md for the choices made where the specification is silent.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes, { container: c });
  await app.register(g1Routes, { prefix: '/api/v1/memories', ...c });

  // Outside any surface: a plain JSON error, never an HTML page or a 500 for bad input.
  app.setNotFoundHandler((req, reply) => reply.status(404).send({
    success: false,
    error: { code: 'NOT_FOUND', message: `No route for ${req.method} ${req.url.split('?')[0]}`, request_id: req.id },
  }));
  app.setErrorHandler((error: FastifyError, req, reply) => {
    const problem = classifyRequestError(error);
    if (!problem) req.log.error({ err: error }, 'unhandled error');
    const status = problem ? ({ validation: 400, malformed_json: 400, unsupported_media_type: 415, payload_too_large: 413, not_found: 404 } as const)[problem.kind] : 500;
    return reply.status(status).send({
      success: false,
      error: { code: problem ? problem.kind.toUpperCase() : 'INTERNAL_ERROR', message: problem?.message ?? 'An internal error occurred', request_id: req.id },
    });
  });
  return app;
}
