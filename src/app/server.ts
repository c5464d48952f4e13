import underPressure from '@fastify/under-pressure';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { registerJsonBodyParser } from '../surfaces/http-kit/json-body.ts';
import { requestIdFor } from '../surfaces/http-kit/request-id.ts';
import { cachedSerializerCompiler } from '../surfaces/http-kit/serialization.ts';
import { createValidatorCompiler } from '../surfaces/http-kit/validation.ts';
import { plainErrorHandler, type ErrorHandler } from '../surfaces/http-kit/plain-errors.ts';
import { mount, type MountedSurface } from '../surfaces/http-kit/surface.ts';
import { g1Surface } from '../surfaces/g1-memories/index.ts';
import { g2Surface } from '../surfaces/g2-legacy-memory/index.ts';
import { g3Surface } from '../surfaces/g3-search/index.ts';
import { g4Surface } from '../surfaces/g4-discovery/index.ts';
import { g5Surface } from '../surfaces/g5-embeddings/index.ts';
import { g6Surface } from '../surfaces/g6-batch/index.ts';
import { g7Surface } from '../surfaces/g7-analytics/index.ts';
import { g8Surface } from '../surfaces/g8-events/index.ts';
import { g9Surface } from '../surfaces/g9-memory-webhooks/index.ts';
import { g11Surface } from '../surfaces/g11-security/index.ts';
import { g10Surface } from '../surfaces/g10-webhooks/index.ts';
import { requestObserver } from '../surfaces/http-kit/activity.ts';
import { redactUrlCredentials } from '../surfaces/http-kit/log-redaction.ts';
import { drainUnreadBody } from '../surfaces/http-kit/body-drain.ts';
import { wsErrorHandler } from '../surfaces/http-kit/ws.ts';
import { recordArrival } from '../surfaces/http-kit/arrival.ts';
import { DomainError } from '../core/errors.ts';
import type { Container } from './container.ts';
import { createHealthCheck, healthRoutes } from './health.routes.ts';
import { registerOpenApi } from './openapi.ts';
import { METRICS_PATH, metricsRoutes } from './metrics.routes.ts';
import { requestMetricsHook } from './request-metrics.ts';
import { surfaceResolver } from '../surfaces/http-kit/surface-of.ts';
import { allowedMethodsOf } from '../surfaces/http-kit/allowed-methods.ts';
import { recordRouteOperations } from '../surfaces/http-kit/operations.ts';
import { METHOD_NOT_ALLOWED } from '../surfaces/http-kit/request-problems.ts';
import { mcpDeps } from './mcp-deps.ts';
import { MCP_PATH, mcpErrorHandler, mcpHttpRoutes } from './mcp-http.routes.ts';
import { VERSION } from './version.ts';
import { DASHBOARD_PREFIX, dashboardErrorHandler, registerDashboard } from '../dashboard/index.ts';
import { OAUTH_CONSENT_PATH } from '../dashboard/pages/oauth-consent.ts';
import { oauthRoutes } from '../surfaces/oauth/index.ts';

/** How long a client may take to finish sending a body the server will not read (see body-drain.ts). */
const BODY_DRAIN_TIMEOUT_MS = 10_000;

/** Event-loop pressure is answered with this Retry-After: at least the next measurement. */
const PRESSURE_RETRY_AFTER_MS = 2000;
/** Paths that answer even under pressure: health must say the process is alive, and metrics say why it is not. */
const HEALTH_PATHS = new Set(['/health', '/api/v1/health', METRICS_PATH]);

export interface ServerOptions {
  /** false silences request logs (tests); otherwise pino JSON lines at this level. */
  logLevel: string | false;
  /** Where the log lines go instead of stdout: tests read them. */
  logStream?: { write(line: string): void } | undefined;
  /** How often the event-loop delay is measured for load shedding (ms); default 1000. */
  pressureSampleMs?: number | undefined;
}

const DEFAULT_PRESSURE_SAMPLE_MS = 1000;

/** The HTTP server: every surface, docs and health, over one container. */
export async function buildServer(c: Container, options: ServerOptions): Promise<FastifyInstance> {
  // Every API generation, each given just the services its deps name (never storage).
  const auth = { apiKeys: c.apiKeys, limits: c.limits, clock: c.clock };
  const streaming = { streams: c.streams, slots: c.slots, realtime: c.realtime, activity: c.activity };
  const { memories, search, topics, embeddings, batch, webhooks, producerEvents, eventHub, analytics, liveSearch } = c;
  const surfaces: MountedSurface[] = [
    mount(g1Surface, { ...auth, memories, search, topics, memoryForget: c.memoryForget, ingestion: c.ingestion, operations: c.operations }),
    mount(g2Surface, { ...auth, memories, search, topics, embeddings, embedder: c.embedder, config: { maxContentBytes: c.config.maxContentBytes } }),
    mount(g3Surface, { ...auth, search }),
    mount(g4Surface, { ...auth, ...streaming, search, embeddings, liveSearch, eventHub, searchAnalytics: c.searchAnalytics }),
    mount(g5Surface, { ...auth, embeddings }),
    mount(g6Surface, { ...auth, batch }),
    mount(g7Surface, { ...auth, ...streaming, analytics, analyticsReport: c.analyticsReport, memories, searchAnalytics: c.searchAnalytics }),
    mount(g8Surface, { ...auth, ...streaming, eventHub }),
    mount(g9Surface, { ...auth, webhooks }),
    mount(g10Surface, { ...auth, webhooks, producerEvents }),
    mount(g11Surface, {
      ...auth, secrets: c.secrets, apiKeyManagement: c.apiKeyManagement, audit: c.audit, operations: c.operations, webhooks: c.webhooks,
      idempotentRequests: c.idempotentRequests, mcpResources: c.mcpResources, mcpApprovals: c.mcpApprovals,
    }),
  ];
  /** Errors raised outside a surface's routes (bad URL, unknown path) still answer in that surface's envelope. */
  const surfaceErrorHandlers: [prefix: string, handler: ErrorHandler][] = [
    ...surfaces.flatMap(({ surface }) => {
      const handler = surface.errorHandler(c.clock);
      return surface.prefixes.map((prefix): [string, ErrorHandler] => [prefix, handler]);
    }),
    // The dashboard is for people: its errors (an unknown page too) are HTML pages, never an API envelope.
    [DASHBOARD_PREFIX, dashboardErrorHandler],
    // An unknown method on /mcp answers in JSON-RPC's form, as every refusal there does.
    [MCP_PATH, mcpErrorHandler],
  ];
  const errorHandlerFor = (url: string): ErrorHandler =>
    surfaceErrorHandlers.find(([prefix]) => url === prefix || url.startsWith(`${prefix}/`) || url.startsWith(`${prefix}?`))?.[1]
      ?? plainErrorHandler;

  const app = Fastify({
    // Errors raised before routing (bad URL encoding) skip onSend: set the request id here too.
    frameworkErrors: (error, req, reply) => errorHandlerFor(req.url)(error, req, reply.header('X-Request-Id', req.id)),
    logger: options.logLevel === false ? false : {
      level: options.logLevel,
      ...(options.logStream ? { stream: options.logStream } : {}),
      // Only these request fields are logged (no headers, so no Authorization / X-API-Key / Cookie), and the URL
      // without credentials: WebSocket clients in browsers send their key as `?access_token=`.
      serializers: {
        req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
          method: req.method, url: redactUrlCredentials(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort,
        }),
      },
    },
    bodyLimit: c.config.bodyLimitBytes,
    trustProxy: c.config.trustProxy,
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
  app.setSerializerCompiler(cachedSerializerCompiler);
  // Only JSON bodies are accepted: anything else is a 415 in the surface's envelope, never parsed as text.
  app.removeContentTypeParser('text/plain');
  registerJsonBodyParser(app);
  app.decorateRequest('principal', null);
  const routeOperations = recordRouteOperations(app);
  app.decorate('routeOperations', routeOperations);
  const allowedMethods = allowedMethodsOf(routeOperations);
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
  // Which generation a URL belongs to, from the mounted surfaces' prefixes: for the two hooks below.
  const surfaceOf = surfaceResolver(surfaces.map(({ surface }) => surface));
  // After each answer: user.activity for authenticated callers, the error rate of system.health, and the G7
  // request measurement (every surface) unless MNEMO_ANALYTICS=off.
  app.addHook('onResponse', requestObserver({
    activity: c.activity, recordResponse: (status) => c.periodic.recordResponse(status),
    recordRequest: c.config.analytics ? (r) => c.requestMetrics.record(r) : undefined, surfaceOf,
  }));
  // Request counts and latencies for GET /metrics, per surface and route pattern.
  app.addHook('onResponse', requestMetricsHook({
    record: (sample) => c.metrics.recordRequest(sample),
    surfaceOf,
  }));

  // Load shedding: while the event loop lags past the limit, every request but health is refused at once with a
  // 503 in its surface's envelope (the error handlers render OVERLOADED) rather than queuing behind the backlog.
  if (c.config.maxEventLoopDelayMs > 0) {
    // The samples taken while the process starts (modules compiled, routes built, vectors warming) hold its start-up
    // stall, which says nothing about the load: nothing is refused until two samples after `listening on`.
    const sampleMs = options.pressureSampleMs ?? DEFAULT_PRESSURE_SAMPLE_MS;
    let sheddingFrom = Number.POSITIVE_INFINITY;
    app.addHook('onListen', async () => {
      sheddingFrom = performance.now() + 2 * sampleMs;
    });
    await app.register(underPressure, {
      maxEventLoopDelay: c.config.maxEventLoopDelayMs,
      sampleInterval: sampleMs,
      pressureHandler: async (req) => {
        if (HEALTH_PATHS.has(req.routeOptions.url ?? '')) return;
        if (performance.now() < sheddingFrom) return;
        throw new DomainError('OVERLOADED', 'The server is overloaded; try again shortly', { retryAfterMs: PRESSURE_RETRY_AFTER_MS });
      },
    });
  }
  await app.register(websocket, { options: { maxPayload: 64 * 1024 }, errorHandler: wsErrorHandler });
  await registerOpenApi(app);

  const health = createHealthCheck(c);
  await app.register(healthRoutes, { check: health });
  await app.register(metricsRoutes, { metrics: c.metrics, access: c.config.metrics });
  for (const surface of surfaces) await surface.register(app);
  // The MCP server over Streamable HTTP, on the same services (src/mcp; stdio: `mnemo mcp`).
  await app.register(mcpHttpRoutes, {
    auth, mcp: mcpDeps(c), version: VERSION, oauth: c.oauth,
    // The dashboard's own host is this server's public name: its pages may call /mcp.
    allowedOrigins: c.config.mcpAllowedOrigins === '*' ? '*' : [...c.config.mcpAllowedOrigins, new URL(c.config.dashboardUrl).hostname],
  });
  // Mnemo as the OAuth authorization server of /mcp (docs/oauth.md); its consent page is the dashboard's.
  await app.register(oauthRoutes, { oauth: c.oauth, consentPath: OAUTH_CONSENT_PATH });
  await registerDashboard(app, {
    apiKeys: c.apiKeys, limits: c.limits, clock: c.clock, memories, search, analyticsReport: c.analyticsReport, webhooks: c.webhooks,
    secrets: c.secrets, audit: c.audit, operations: c.operations, mcpApprovals: c.mcpApprovals, mcpResources: c.mcpResources, sessions: c.dashboardSessions,
    ingestion: c.ingestion, health, searchAnalytics: c.searchAnalytics, oauth: c.oauth,
    apiKeyManagement: c.apiKeyManagement, embeddingModel: c.embedder.modelId,
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allow = allowedMethods(path);
    // A route of this method that chose not-found itself (an unknown asset) is a 404, not a 405.
    if (allow.length > 0 && !allow.includes(req.method)) {
      reply.header('Allow', allow.join(', '));
      const error = Object.assign(new Error(`${req.method} is not allowed on ${path}; allowed: ${allow.join(', ')}`), { statusCode: 405, code: METHOD_NOT_ALLOWED });
      return errorHandlerFor(req.url)(error as FastifyError, req, reply);
    }
    const error = Object.assign(new Error(`No route for ${req.method} ${path}`), { statusCode: 404, code: 'FST_ERR_NOT_FOUND' });
    return errorHandlerFor(req.url)(error as FastifyError, req, reply);
  });
  app.setErrorHandler((error: FastifyError, req, reply) => errorHandlerFor(req.url)(error, req, reply));
  return app;
}
