import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import { MEMORY_EVENT_TYPES } from '../../core/events/event.types.ts';
import type { Scope } from '../../core/scope.ts';
import { newConnectionId, type ConnectionRegistry } from '../../core/streams/connection-registry.ts';
import type { StreamSlots } from '../../core/streams/stream-slots.port.ts';
import type { EventHub } from '../../core/streams/event-hub.ts';
import { eventPasses } from '../../core/streams/event-filter.ts';
import { createRateWindow } from '../../core/streams/rate-window.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';
import { authGuard, readCredential, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { acceptsEventStream, openSse, sseStreamEnd, type SseErrorData, type SseStream, type SseStreamEnd } from '../http-kit/sse.ts';
import { openStreamSession, type StreamSession } from '../http-kit/stream-session.ts';
import { SSE_RESPONSE } from '../http-kit/stream-docs.ts';
import { WebhookErrorWire as G8ErrorWire } from '../http-kit/webhook-errors.ts';
import { createG8ErrorHandler, G8HttpError } from './errors.ts';
import { parseStreamParams } from './requests.ts';
import { collectProblems } from '../http-kit/field-problems.ts';

export interface G8Deps extends AuthDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  eventHub: Pick<EventHub, 'subscribe' | 'resumePoint' | 'latestSeq'>;
  streams: ConnectionRegistry;
  slots?: Pick<StreamSlots, 'take'> | undefined;
  realtime: RealtimeSettings;
  activity?: Pick<ActivityTracker, 'touch'> | undefined;
  clock: Clock;
}


/** The `error` frames of the spec's table; "too many connections" comes from http-kit's streamRefusal. */
export const streamErrors = (s: Pick<RealtimeSettings, 'maxEventsPerMinute'>) => ({
  connection: { code: 'CONNECTION_ERROR', message: 'The server is shutting down; reconnect with Last-Event-ID', retry_after: 5000 },
  auth: { code: 'AUTH_ERROR', message: 'Invalid API key: it has been revoked or has expired', retry_after: 0 },
  tooManyEvents: {
    code: 'RATE_LIMITED', retry_after: 60000,
    message: `Too many events: at most ${s.maxEventsPerMinute} per minute on one connection; reconnect with Last-Event-ID after retry_after`,
  },
}) satisfies Record<string, SseErrorData>;

const RETRY_MS = 5000;
const MAX_EVENT_ID_LENGTH = 200;
const HEARTBEAT_ID = /^heartbeat_\d+_(evt_[A-Za-z0-9]+)$/;

const describe = (text: string) => Type.Optional(Type.Unknown({ description: text }));
const StreamQuery = Type.Object({
  events: describe(`Event types, comma-separated and/or repeated (\`events=a&events=b\`): ${MEMORY_EVENT_TYPES.join(', ')}. None: all of them`),
  'filters[tags]': describe('Memory events whose tags include any of these (comma-separated)'),
  'filters[memory_type]': describe('Memory events of this memory_type (comma-separated: any of them)'),
  'filters[<key>]': describe('Any other key: memory events whose metadata[key] equals the value (compared as text)'),
  heartbeat: describe('Seconds between heartbeat frames; default 30; values below 30 are raised to 30; at most 3600'),
  last_event_id: describe('Resume after this event id, for clients that cannot send the Last-Event-ID header'),
}, { additionalProperties: true });

/** A module constant, as every route schema is: the apps of a process share what is compiled from it (validation.ts). */
const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ description: 'Resume after this event (what EventSource sends on reconnect)' })),
}, { additionalProperties: true });

/** G8: `GET /api/v1/stream` — the Server-Sent Events stream of the caller's events (Bearer). */
export const g8Routes: FastifyPluginAsync<G8Deps> = async (app, deps) => {
  app.setErrorHandler(createG8ErrorHandler(deps.clock));
  const s = deps.realtime;
  const unit = s.timeUnitMs;
  const STREAM_ERRORS = streamErrors(s);

  /** The resume point named by Last-Event-ID: an event of the caller's tenant + mode (or system-wide), or null. */
  async function resumePoint(id: string, scope: Scope): Promise<{ seq: number; eventId: string } | null> {
    if (id.length > MAX_EVENT_ID_LENGTH) return null;
    const eventId = HEARTBEAT_ID.exec(id)?.[1] ?? id;
    if (!eventId.startsWith('evt_')) return null;
    return deps.eventHub.resumePoint(eventId, scope);
  }

  app.get('/', {
    config: { operation: 'event.stream' },
    schema: {
      tags: ['G8 event stream'],
      security: [{ bearer: [] }],
      summary: 'Server-Sent Events stream of memory, search, activity, health and analytics events',
      description: 'Requires `Accept: text/event-stream` (else 406). Frames: `event: <type>`, `id: <event id>`, `data: <JSON payload>`; '
        + '`heartbeat` frames at the heartbeat interval; `error` frames {code, message, retry_after} before the server closes the '
        + 'stream. Send `Last-Event-ID` (or `last_event_id`) to resume. See docs/events.md.',
      querystring: StreamQuery,
      headers: StreamHeaders,
      response: {
        200: SSE_RESPONSE,
        400: G8ErrorWire, 401: G8ErrorWire, 403: G8ErrorWire, 406: G8ErrorWire, 429: G8ErrorWire,
      },
    },
    onRequest: authGuard(deps, 'bearer'),
    // A HEAD request would open a stream nobody reads.
    exposeHeadRoute: false,
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    if (!acceptsEventStream(req)) {
      throw new G8HttpError(406, 'NOT_ACCEPTABLE', 'This endpoint answers text/event-stream only',
        [{ field: 'Accept', message: 'must include text/event-stream' }]);
    }
    const problems: FieldProblem[] = [];
    const params = parseStreamParams(req.url, s, problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    if (problems.length > 0 || !scope) throw validationError(problems);

    const header = req.headers['last-event-id'];
    const lastEventId = (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined) ?? params.lastEventId;
    const resume = lastEventId === undefined ? null : await resumePoint(lastEventId, scope);
    // "From now" is fixed before the client hears the stream is open: an event written after the first frame is
    // always delivered, however long the session's slot (in Redis, say) takes to acquire.
    const afterSeq = resume?.seq ?? await deps.eventHub.latestSeq();

    const connectionId = newConnectionId();
    const sse = openSse(req, reply, { retryMs: RETRY_MS, headers: { 'X-Connection-Id': connectionId } });
    const end = sseStreamEnd(sse, { goingAway: STREAM_ERRORS.connection, revoked: STREAM_ERRORS.auth });
    const session = await openStreamSession(deps, {
      principal, credential: readCredential(req, 'bearer'), scope, surface: 'g8', kind: 'sse', id: connectionId, log: req.log,
    }, end);
    if (session) {
      runStream(req, session, end, sse, { scope, params, resume, afterSeq, resumeMissed: lastEventId !== undefined && resume === null });
    }
    return reply;
  });

  /** The events of an open session: resumed or from now, filtered, capped per minute, with heartbeats. */
  function runStream(req: FastifyRequest, session: StreamSession, end: SseStreamEnd, sse: SseStream, c: {
    scope: Scope;
    params: ReturnType<typeof parseStreamParams>;
    resume: { seq: number; eventId: string } | null; afterSeq: number; resumeMissed: boolean;
  }): void {
    /** The id of the last event the client has: what a heartbeat id carries, so resuming from it works too. */
    let lastEventId: string | null = c.resume?.eventId ?? null;
    let heartbeats = 0;
    const limiter = createRateWindow({ max: s.maxEventsPerMinute, windowMs: 60 * unit });

    const heartbeat = async (): Promise<void> => {
      if (end.ending || !(await session.keyStillValid()) || end.ending) return;
      heartbeats += 1;
      await sse.send({
        event: 'heartbeat',
        id: lastEventId ? `heartbeat_${heartbeats}_${lastEventId}` : `heartbeat_${heartbeats}`,
        data: { timestamp: isoTimestamp(deps.clock.now()), status: 'ok', connection_id: session.id },
      });
    };

    const start = async (): Promise<void> => {
      if (c.resumeMissed) await sse.comment('last-event-id not found; resuming from now');
      const tail = await deps.eventHub.subscribe({
        tenantId: c.scope.tenantId, mode: c.scope.mode, workspace: c.scope.workspace, types: c.params.types,
        afterSeq: c.afterSeq,
        deliver: async (page) => {
          // The key is checked before events go out, not only every few seconds.
          if (end.ending || !(await session.keyStillValid())) return false;
          for (const e of page) {
            if (!eventPasses(c.params.filter, e)) continue;
            if (!limiter.take()) {
              end.fail(STREAM_ERRORS.tooManyEvents);
              return false;
            }
            if (!(await sse.send({ event: e.type, id: e.id, data: e.data }))) return false;
            lastEventId = e.id;
          }
          return !end.ending;
        },
        onError: (err) => {
          if (!end.ending) req.log.error({ err }, 'event stream failed');
          end.fail(STREAM_ERRORS.connection);
        },
      });
      session.onEnd(() => tail.stop());
    };

    session.every(c.params.heartbeatSeconds, () => void heartbeat());
    start().catch((err: unknown) => {
      if (!end.ending) req.log.error({ err }, 'event stream could not start');
      end.fail(STREAM_ERRORS.connection);
    });
  }
};
