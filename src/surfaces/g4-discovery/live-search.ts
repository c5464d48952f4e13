import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { isDomainError } from '../../core/errors.ts';
import type { StoredEvent } from '../../core/events/event.types.ts';
import type { Scope } from '../../core/scope.ts';
import type { Tail } from '../../core/streams/event-hub.ts';
import { LIVE_SEARCH_EVENT_TYPES, type LiveResult, type LiveSubscription } from '../../core/streams/live-search.ts';
import { openStreamSession, type StreamSession } from '../http-kit/stream-session.ts';
import { authenticateSocket, closeWith, readWsCredential, sendJson, WS_CLOSE, wsStreamEnd } from '../http-kit/ws.ts';
import { INVALID_WORKSPACE, workspaceOf } from '../http-kit/workspace.ts';
import { contentPreview, roundScore } from './mappers.ts';
import { MAX_FILTER_TAGS, MAX_QUERY_CHARS } from './schemas.ts';
import type { G4StreamDeps } from './stream.routes.ts';

/** Standing searches per socket. */
export const MAX_SUBSCRIPTIONS = 10;
export const LIVE_DEFAULT_THRESHOLD = 0.7;

type ClientError = { code: string; message: string };
const bad = (code: string, message: string): ClientError => ({ code, message });

function parseSubscribe(msg: Record<string, unknown>): { query: string; threshold: number; tags: string[] | undefined } | ClientError {
  const query = msg.query;
  if (typeof query !== 'string' || query.trim() === '') return bad('INVALID_QUERY', 'query must be a non-blank string');
  if (query.length > MAX_QUERY_CHARS) return bad('INVALID_QUERY', `query must be at most ${MAX_QUERY_CHARS} characters`);
  const threshold = msg.threshold ?? LIVE_DEFAULT_THRESHOLD;
  if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0 || threshold > 1) {
    return bad('SIMILARITY_THRESHOLD_INVALID', 'threshold must be a number from 0.0 to 1.0');
  }
  let tags: string[] | undefined;
  const filters = msg.filters;
  if (filters !== undefined && filters !== null) {
    if (typeof filters !== 'object' || Array.isArray(filters)) return bad('INVALID_FILTER', 'filters must be an object such as {"tags": ["a"]}');
    // Any other key (`__proto__` included) would be ignored, and the subscription would match more than asked.
    const other = Object.keys(filters).find((k) => k !== 'tags');
    if (other !== undefined) return bad('INVALID_FILTER', `filters may hold only tags, not ${JSON.stringify(other.slice(0, 64))}`);
    const raw = (filters as Record<string, unknown>).tags;
    const list = typeof raw === 'string' ? raw.split(',') : raw;
    if (list !== undefined && list !== null) {
      if (!Array.isArray(list) || !list.every((t) => typeof t === 'string')) return bad('INVALID_FILTER', 'filters.tags must be an array of strings');
      const clean = [...new Set((list as string[]).map((t) => t.trim()).filter(Boolean))];
      if (clean.length > MAX_FILTER_TAGS) return bad('INVALID_FILTER', `filters.tags may hold at most ${MAX_FILTER_TAGS} tags`);
      tags = clean.length > 0 ? clean : undefined;
    }
  }
  return { query, threshold, tags };
}

/** A `new_result` message (docs/api.md, "G4 real-time"). */
const newResultMessage = (r: LiveResult) => ({
  type: 'new_result', subscription_id: r.subscriptionId, change: r.change,
  memory: {
    id: r.memory.id, title: r.memory.title, content_preview: contentPreview(r.memory.content), tags: r.memory.tags,
    metadata: r.memory.metadata, created_at: r.memory.createdAt,
  },
  similarity_score: roundScore(r.similarity),
});

/**
 * One live-search socket. Authenticates the upgrade (Authorization: Bearer, or `access_token` for browsers), opens
 * a stream session (slot, key re-check, activity), then answers subscribe / unsubscribe messages and pushes
 * `new_result` for what core/streams/live-search.ts matches. This file parses and renders; it matches nothing.
 */
export async function runLiveSearch(socket: WebSocket, req: FastifyRequest, deps: G4StreamDeps): Promise<void> {
  const credential = readWsCredential(req);
  // Listeners go on at once: messages sent right after the upgrade arrive while the key is still being checked.
  let dispatch: ((text: string) => Promise<void>) | null = null;
  const pending: string[] = [];
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (text: string) => {
    queue = queue.then(() => dispatch?.(text)).catch((err: unknown) => {
      req.log.error({ err }, 'live search message failed');
      sendJson(socket, { type: 'error', code: 'INTERNAL_ERROR', message: 'An internal error occurred' });
    });
  };
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      sendJson(socket, { type: 'error', code: 'INVALID_MESSAGE', message: 'Send text frames of JSON' });
      return;
    }
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
    if (dispatch) enqueue(text);
    else pending.push(text);
  });
  const principal = await authenticateSocket(deps, credential, socket, 'memory.search_live');
  if (!principal) return;
  const named = workspaceOf(req, { query: true });
  if (!named.ok) {
    sendJson(socket, { type: 'error', code: 'VALIDATION_ERROR', message: `${INVALID_WORKSPACE}: ${named.problem.field} ${named.problem.message}` });
    closeWith(socket, WS_CLOSE.policy, 'invalid workspace');
    return;
  }
  const scope: Scope = { tenantId: principal.tenantId, mode: principal.mode, workspace: named.workspace };
  const session = await openStreamSession(deps, { principal, credential, scope, surface: 'g4', kind: 'search-live', log: req.log }, wsStreamEnd(socket));
  if (!session) return;

  // Messages are handled one at a time, in order (a subscribe embeds its query before the next message is read).
  dispatch = subscriptionsOf(socket, req, deps, scope, session);
  for (const text of pending.splice(0)) enqueue(text);
}

/** The standing searches of one open session: a handler of its messages. */
function subscriptionsOf(
  socket: WebSocket, req: FastifyRequest, deps: G4StreamDeps, scope: Scope, session: StreamSession,
): (raw: string) => Promise<void> {
  const subscriptions = new Map<string, LiveSubscription>();
  let tail: Tail | null = null;

  async function deliver(page: readonly StoredEvent[]): Promise<boolean> {
    // The key is checked before results go out, not only every few seconds.
    if (!(await session.keyStillValid())) return false;
    for (const result of await deps.liveSearch.results(scope, subscriptions.values(), page)) {
      sendJson(socket, newResultMessage(result));
    }
    return !session.closed;
  }

  async function subscribe(msg: Record<string, unknown>): Promise<void> {
    const parsed = parseSubscribe(msg);
    if ('code' in parsed) {
      sendJson(socket, { type: 'error', ...parsed });
      return;
    }
    if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
      sendJson(socket, { type: 'error', code: 'TOO_MANY_SUBSCRIPTIONS', message: `At most ${MAX_SUBSCRIPTIONS} subscriptions per connection` });
      return;
    }
    let sub: LiveSubscription;
    try {
      sub = await deps.liveSearch.subscribe(parsed);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      sendJson(socket, { type: 'error', code: err.code === 'EMBEDDING_FAILED' ? 'SERVICE_UNAVAILABLE' : 'INVALID_QUERY', message: err.message });
      return;
    }
    subscriptions.set(sub.id, sub);
    if (tail === null && !session.closed) {
      const started = await deps.eventHub.subscribe({
        tenantId: scope.tenantId, mode: scope.mode, workspace: scope.workspace, types: [...LIVE_SEARCH_EVENT_TYPES],
        afterSeq: sub.fromSeq,
        deliver,
        onError: (err) => {
          req.log.error({ err }, 'live search failed');
          closeWith(socket, 1011, 'internal error');
        },
      });
      tail = started;
      session.onEnd(() => started.stop());
    }
    sendJson(socket, {
      type: 'subscribed', subscription_id: sub.id, query: sub.query, threshold: sub.threshold,
      filters: { tags: sub.tags ?? [] },
    });
  }

  function unsubscribe(msg: Record<string, unknown>): void {
    const id = msg.subscription_id;
    if (id === undefined || id === null) {
      const ids = [...subscriptions.keys()];
      subscriptions.clear();
      sendJson(socket, { type: 'unsubscribed', subscription_ids: ids });
      return;
    }
    if (typeof id !== 'string' || !subscriptions.delete(id)) {
      sendJson(socket, { type: 'error', code: 'SUBSCRIPTION_NOT_FOUND', message: 'No such subscription on this connection' });
      return;
    }
    sendJson(socket, { type: 'unsubscribed', subscription_id: id, subscription_ids: [id] });
  }

  async function handle(raw: string): Promise<void> {
    let msg: unknown;
    try {
      msg = JSON.parse(raw);
    } catch {
      sendJson(socket, { type: 'error', code: 'INVALID_MESSAGE', message: 'Messages must be JSON objects' });
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      sendJson(socket, { type: 'error', code: 'INVALID_MESSAGE', message: 'Messages must be JSON objects with a type' });
      return;
    }
    const m = msg as Record<string, unknown>;
    switch (m.type) {
      case 'subscribe': return subscribe(m);
      case 'unsubscribe': return unsubscribe(m);
      case 'ping': sendJson(socket, { type: 'pong' }); return;
      default:
        sendJson(socket, { type: 'error', code: 'UNKNOWN_TYPE', message: 'type must be subscribe, unsubscribe or ping' });
    }
  }

  return handle;
}
