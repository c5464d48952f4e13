import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { AnalyticsSummaryService } from '../../core/analytics/summary.ts';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import type { ConnectionRegistry } from '../../core/streams/connection-registry.ts';
import type { StreamSlots } from '../../core/streams/stream-slots.port.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';
import { authenticateSocket, closeWith, readWsCredential, sendJson, WS_CLOSE, wsStreamEnd } from '../http-kit/ws.ts';
import { openStreamSession } from '../http-kit/stream-session.ts';
import { workspaceOrDefault } from '../http-kit/workspace.ts';
import { WEBSOCKET_UPGRADE_RESPONSE } from '../http-kit/stream-docs.ts';
import { createG7ErrorHandler, G7ErrorWire, G7HttpError } from './errors.ts';

export interface G7StreamDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  limits: Pick<LimitsService, 'gateway'>;
  analytics: Pick<AnalyticsSummaryService, 'summarize'>;
  streams: ConnectionRegistry;
  slots?: Pick<StreamSlots, 'take'> | undefined;
  realtime: RealtimeSettings;
  activity?: Pick<ActivityTracker, 'touch'> | undefined;
  clock: Clock;
}

export const ANALYTICS_DEFAULT_INTERVAL_S = 10;
export const ANALYTICS_MAX_INTERVAL_S = 3600;

/** `interval` seconds: default 10, at least 1, at most 3600; anything else is an error. */
function parseInterval(raw: unknown): number | null {
  if (raw === undefined) return ANALYTICS_DEFAULT_INTERVAL_S;
  if (typeof raw !== 'string' || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 1 && n <= ANALYTICS_MAX_INTERVAL_S ? n : null;
}

/**
 * G7: WebSocket `/api/v1/analytics/stream` (Bearer, or `access_token` for browsers). Sends
 * `{type: "analytics", data: <summary>, timestamp}` at once and then every `interval` seconds; the summary covers
 * the caller's tenant + mode (every workspace) over the last interval. Registered with prefix `/api/v1/analytics`.
 */
export const g7AnalyticsStreamRoutes: FastifyPluginAsync<G7StreamDeps> = async (app, deps) => {
  app.setErrorHandler(createG7ErrorHandler(deps.clock));
  app.route({
    method: 'GET',
    url: '/stream',
    config: { operation: 'analytics.stream', socketAuth: true },
    schema: {
      tags: ['G7 analytics'],
      security: [{ bearer: [] }],
      summary: 'WebSocket: analytics updates',
      description: 'Open with a WebSocket client (`Authorization: Bearer`, `X-API-Key` or `?access_token=`). The server sends '
        + '`{type: "analytics", data: <summary>, timestamp, interval, sequence}` at once and then every `interval` seconds '
        + '(`?interval=`: default 10, 1 to 3600). A plain HTTP GET answers 426. See docs/api.md, "G7".',
      response: { 101: WEBSOCKET_UPGRADE_RESPONSE, 426: G7ErrorWire },
    },
    handler: async () => {
      throw new G7HttpError(426, 'UPGRADE_REQUIRED', '/api/v1/analytics/stream is a WebSocket endpoint; open it with a WebSocket client');
    },
    wsHandler: (socket, req) => run(socket, req),
  });

  async function run(socket: WebSocket, req: FastifyRequest): Promise<void> {
    // Nothing is expected from the client; anything it sends is ignored.
    socket.on('message', () => undefined);

    const credential = readWsCredential(req);
    const principal = await authenticateSocket(deps, credential, socket, 'analytics.stream');
    if (!principal) return;
    const interval = parseInterval((req.query as Record<string, unknown>).interval);
    if (interval === null) {
      sendJson(socket, { type: 'error', code: 'VALIDATION_ERROR', message: `interval must be a number of seconds from 1 to ${ANALYTICS_MAX_INTERVAL_S}` });
      closeWith(socket, WS_CLOSE.policy, 'invalid interval');
      return;
    }
    // The summary covers every workspace of the tenant + mode; the workspace named (if valid) is only noted in user.activity.
    const scope = { tenantId: principal.tenantId, mode: principal.mode, workspace: workspaceOrDefault(req, { query: true }) };
    const session = await openStreamSession(deps, { principal, credential, scope, surface: 'g7', kind: 'analytics', log: req.log }, wsStreamEnd(socket));
    if (!session) return;

    let busy = false;
    let sequence = 0;
    const push = async (): Promise<void> => {
      if (busy || session.closed) return;
      busy = true;
      try {
        // A revoked or expired key closes the stream (1008) instead of getting the next update.
        if (!(await session.keyStillValid())) return;
        sequence += 1;
        const data = await deps.analytics.summarize(principal.tenantId, principal.mode, interval * 1000);
        sendJson(socket, { type: 'analytics', data, timestamp: isoTimestamp(deps.clock.now()), interval, sequence });
      } catch (err) {
        if (!session.closed) req.log.warn({ err }, 'analytics update failed');
      } finally {
        busy = false;
      }
    };
    session.every(interval, () => void push());
    await push();
  }
};
