import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { AnalyticsSummaryService } from '../../core/analytics/summary.ts';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { DEFAULT_WORKSPACE, WORKSPACE_PATTERN } from '../../core/scope.ts';
import { newConnectionId, type ConnectionRegistry } from '../../core/streams/connection-registry.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';
import { authenticateSocket, closeWith, readWsCredential, refuseSocket, sendJson, WS_CLOSE, wsKeyCheck } from '../http-kit/ws.ts';
import { streamRefusal } from '../http-kit/stream-refusal.ts';
import { WEBSOCKET_UPGRADE_RESPONSE } from '../http-kit/stream-docs.ts';
import { createG7ErrorHandler, G7ErrorWire, G7HttpError } from './errors.ts';

export interface G7StreamDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  limits: Pick<LimitsService, 'gateway'>;
  analytics: Pick<AnalyticsSummaryService, 'summarize'>;
  streams: ConnectionRegistry;
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
    let closed = false;
    let release: (() => void) | null = null;
    socket.on('close', () => {
      closed = true;
      release?.();
    });
    // Nothing is expected from the client; anything it sends is ignored.
    socket.on('message', () => undefined);

    const credential = readWsCredential(req);
    const principal = await authenticateSocket(deps, credential, socket, 'memories:read');
    if (!principal) return;
    const interval = parseInterval((req.query as Record<string, unknown>).interval);
    if (interval === null) {
      sendJson(socket, { type: 'error', code: 'VALIDATION_ERROR', message: `interval must be a number of seconds from 1 to ${ANALYTICS_MAX_INTERVAL_S}` });
      closeWith(socket, WS_CLOSE.policy, 'invalid interval');
      return;
    }

    const slot = deps.streams.acquire({
      id: newConnectionId(), keyId: principal.keyId, tenantId: principal.tenantId, kind: 'analytics',
      shutdown: () => closeWith(socket, WS_CLOSE.goingAway, 'server shutting down'),
    });
    if (!slot.ok) {
      refuseSocket(socket, streamRefusal(slot.cap, deps.realtime));
      return;
    }
    const header = req.headers['x-workspace-id'];
    void deps.activity?.touch({
      scope: { tenantId: principal.tenantId, mode: principal.mode, workspace: typeof header === 'string' && WORKSPACE_PATTERN.test(header) ? header : DEFAULT_WORKSPACE },
      userId: principal.userId, keyId: principal.keyId, surface: 'g7',
    }).catch((err: unknown) => req.log.warn({ err }, 'user.activity not recorded'));

    const timers: NodeJS.Timeout[] = [];
    release = () => {
      for (const t of timers) clearInterval(t);
      slot.release();
    };
    if (closed) {
      release();
      return;
    }

    /** A revoked or expired key closes the stream (1008): checked every few seconds and before every message. */
    const keyStillValid = wsKeyCheck(deps.apiKeys, credential, socket, () => closed);

    let busy = false;
    let sequence = 0;
    const push = async (): Promise<void> => {
      if (busy || closed) return;
      busy = true;
      try {
        if (!(await keyStillValid())) return;
        sequence += 1;
        const data = await deps.analytics.summarize(principal.tenantId, principal.mode, interval * 1000);
        sendJson(socket, { type: 'analytics', data, timestamp: isoTimestamp(deps.clock.now()), interval, sequence });
      } catch (err) {
        if (!closed) req.log.warn({ err }, 'analytics update failed');
      } finally {
        busy = false;
      }
    };
    timers.push(setInterval(() => void push(), interval * deps.realtime.timeUnitMs));
    timers.push(setInterval(() => void keyStillValid(), deps.realtime.keyCheckSeconds * deps.realtime.timeUnitMs));
    for (const t of timers) t.unref();
    await push();
  }
};
