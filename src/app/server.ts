import underPressure from '@fastify/under-pressure';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { g1Routes, g1StoreAliasRoutes } from '../surfaces/g1/routes.ts';
import { registerJsonBodyParser } from '../surfaces/http-kit/json-body.ts';
import { requestIdFor } from '../surfaces/http-kit/request-id.ts';
import { createValidatorCompiler } from '../surfaces/http-kit/validation.ts';
import { createG1ErrorHandler } from '../surfaces/g1/errors.ts';
import { topicRoutes } from '../surfaces/g1/topics.routes.ts';
import { createG2ErrorHandler } from '../surfaces/g2/errors.ts';
import { g2Routes } from '../surfaces/g2/routes.ts';
import { createG6ErrorHandler } from '../surfaces/g6/errors.ts';
import { g6Routes } from '../surfaces/g6/routes.ts';
import { createG8ErrorHandler } from '../surfaces/g8/errors.ts';
import { g8Routes } from '../surfaces/g8/routes.ts';
import { createG9ErrorHandler } from '../surfaces/g9/errors.ts';
import { g9Routes } from '../surfaces/g9/routes.ts';
import { createG10ErrorHandler } from '../surfaces/g10/errors.ts';
import { g10Routes } from '../surfaces/g10/routes.ts';
import { createG3ErrorHandler } from '../surfaces/g3/errors.ts';
import { g3Routes } from '../surfaces/g3/routes.ts';
import { createG4ErrorHandler } from '../surfaces/g4/errors.ts';
import { g4Routes } from '../surfaces/g4/routes.ts';
import { createG5ErrorHandler } from '../surfaces/g5/errors.ts';
import { g5Routes } from '../surfaces/g5/routes.ts';
import { plainErrorHandler, type ErrorHandler } from '../surfaces/http-kit/plain-errors.ts';
import { g4StreamRoutes } from '../surfaces/g4/stream.routes.ts';
import { createG7ErrorHandler } from '../surfaces/g7/errors.ts';
import { g7AnalyticsStreamRoutes } from '../surfaces/g7/analytics-stream.routes.ts';
import { requestObserver } from '../surfaces/http-kit/activity.ts';
import { redactUrlCredentials } from '../surfaces/http-kit/log-redaction.ts';
import { drainUnreadBody } from '../surfaces/http-kit/body-drain.ts';
import { recordArrival } from '../surfaces/http-kit/arrival.ts';
import { DomainError } from '../core/errors.ts';
import type { Container } from './container.ts';
import { healthRoutes } from './health.routes.ts';
import { registerOpenApi } from './openapi.ts';

/** How long a client may take to finish sending a body the server will not read (see body-drain.ts). */
const BODY_DRAIN_TIMEOUT_MS = 10_000;

/** Event-loop pressure is answered with this Retry-After: at least the next measurement. */
const PRESSURE_RETRY_AFTER_MS = 2000;
/** Paths that answer even under pressure: health must say the process is alive. */
const HEALTH_PATHS = new Set(['/health', '/api/v1/health']);

export interface ServerOptions {
  /** false silences request logs (tests); otherwise pino JSON lines at this level. */
  logLevel: string | false;
  /** How often the event-loop delay is measured for load shedding (ms); default 1000. */
  pressureSampleMs?: number | undefined;
}

/** The HTTP server: every surface, docs and health, over one container. */
export async function buildServer(c: Container, options: ServerOptions): Promise<FastifyInstance> {
  /** Errors raised outside a surface's routes (bad URL, unknown path) still answer in that surface's envelope. */
  const surfaceErrorHandlers: [prefix: string, handler: ErrorHandler][] = [
    ['/api/v1/memories', createG1ErrorHandler(c.clock)],
    ['/api/v1/store', createG1ErrorHandler(c.clock)],
    ['/api/v1/topics', createG1ErrorHandler(c.clock)],
    ['/api/v1/memory', createG2ErrorHandler(c.clock)],
    ['/api/v1/batch', createG6ErrorHandler(c.clock)],
    ['/api/v1/stream', createG8ErrorHandler(c.clock)],
    ['/api/v1/webhooks', createG9ErrorHandler(c.clock)],
    ['/v1/webhooks', createG10ErrorHandler(c.clock)],
    ['/v1/events', createG10ErrorHandler(c.clock)],
    ['/api/v1/search', createG3ErrorHandler(c.clock)],
    ['/v1/search', createG4ErrorHandler(c.clock)],
    ['/v1/embeddings', createG4ErrorHandler(c.clock)],
    ['/api/v1/embeddings', createG5ErrorHandler(c.clock)],
    ['/api/v1/analytics', createG7ErrorHandler(c.clock)],
  ];
  const errorHandlerFor = (url: string): ErrorHandler =>
    surfaceErrorHandlers.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`))?.[1]
      ?? plainErrorHandler;

  const app = Fastify({
    // Errors raised before routing (bad URL encoding) skip onSend: set the request id here too.
    frameworkErrors: (error, req, reply) => errorHandlerFor(req.url)(error, req, reply.header('X-Request-Id', req.id)),
    logger: options.logLevel === false ? false : {
      level: options.logLevel,
      // Only these request fields are logged (no headers, so no Authorization / X-API-Key / Cookie), and the URL
      // without credentials: WebSocket clients in browsers send their key as `?access_token=`.
      serializers: {
        req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
          method: req.method, url: redactUrlCredentials(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
        }),
      },
    },
    bodyLimit: c.config.bodyLimitBytes,
    // G2 client ids may be 128 characters, and a path parameter carries them.
    routerOptions: { maxParamLength: 256 },
    genReqId: requestIdFor,
    // Shutdown: stop accepting, let in-flight requests finish, close idle keep-alive sockets.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  c.warnings.attach(app.log);
  recordArrival(app);
  app.setValidatorCompiler(createValidatorCompiler());
  // Only JSON bodies are accepted: anything else is a 415 in the surface's envelope, never parsed as text.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  app.decorateRequest('principal', null);
  app.addHook('onSend', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
  });
  // An answer given before the body was read (413, 401, 415) waits, within bounds, until the client has sent it all.
  app.addHook('onSend', drainUnreadBody({ maxBytes: c.config.bodyDrainBytes, timeoutMs: BODY_DRAIN_TIMEOUT_MS }));

  // Shutdown tells every open stream first (G8: a CONNECTION_ERROR frame; WebSockets: close 1001), before the
  // WebSocket plugin closes its sockets and the server waits for connections to end.
  app.addHook('preClose', async () => {
    await c.streams.shutdown();
  });
  // After each answer: user.activity for authenticated callers, and the error rate of system.health.
  app.addHook('onResponse', requestObserver({ activity: c.activity, recordResponse: (status) => c.periodic.recordResponse(status) }));

  // Load shedding: while the event loop lags past the limit, every request but health is refused at once with a
  // 503 in its surface's envelope (the error handlers render OVERLOADED) rather than queuing behind the backlog.
  if (c.config.maxEventLoopDelayMs > 0) {
    await app.register(underPressure, {
      maxEventLoopDelay: c.config.maxEventLoopDelayMs,
      sampleInterval: options.pressureSampleMs,
      pressureHandler: async (req) => {
        if (HEALTH_PATHS.has(req.routeOptions.url ?? '')) return;
        throw new DomainError('OVERLOADED', 'The server is overloaded; try again shortly', { retryAfterMs: PRESSURE_RETRY_AFTER_MS });
      },
    });
  }
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  await registerOpenApi(app);

  await app.register(healthRoutes, { container: c });
  // Each surface gets just the services its Deps interface names, never storage (one line per surface).
  const auth = { apiKeys: c.apiKeys, limits: c.limits, clock: c.clock };
  const streaming = { streams: c.streams, realtime: c.realtime, activity: c.activity };
  const { memories, search, topics, embeddings, batch, webhooks, producerEvents, eventHub, analytics, liveSearch } = c;
  await app.register(g1Routes, { prefix: '/api/v1/memories', ...auth, memories, search });
  await app.register(g1StoreAliasRoutes, { prefix: '/api/v1/store', ...auth, memories, search });
  await app.register(topicRoutes, { prefix: '/api/v1/topics', ...auth, topics });
  await app.register(g2Routes, {
    prefix: '/api/v1/memory', ...auth, memories, embeddings, embedder: c.embedder,
    config: { maxContentBytes: c.config.maxContentBytes },
  });
  await app.register(g6Routes, { prefix: '/api/v1/batch', ...auth, batch });
  await app.register(g8Routes, { prefix: '/api/v1/stream', ...auth, ...streaming, eventHub });
  await app.register(g9Routes, { prefix: '/api/v1/webhooks', ...auth, webhooks });
  await app.register(g10Routes, { ...auth, webhooks, producerEvents });
  await app.register(g3Routes, { prefix: '/api/v1/search', ...auth, search });
  await app.register(g4Routes, { ...auth, search, embeddings });
  await app.register(g4StreamRoutes, { ...auth, ...streaming, search, embeddings, liveSearch, eventHub });
  await app.register(g7AnalyticsStreamRoutes, { prefix: '/api/v1/analytics', ...auth, ...streaming, analytics });
  await app.register(g5Routes, { prefix: '/api/v1/embeddings', ...auth, embeddings });

  app.setNotFoundHandler((req, reply) => {
    const error = Object.assign(new Error(`No route for ${req.method} ${req.url.split('?')[0]}`), { statusCode: 404, code: 'FST_ERR_NOT_FOUND' });
    return errorHandlerFor(req.url)(error as FastifyError, req, reply);
  });
  app.setErrorHandler((error: FastifyError, req, reply) => errorHandlerFor(req.url)(error, req, reply));
  return app;
}
