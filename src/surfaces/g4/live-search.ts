import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { isoTimestamp } from '../../core/clock.ts';
import { cosine, similarityFromCosine } from '../../core/embeddings/vectors.ts';
import { isDomainError } from '../../core/errors.ts';
import type { StoredEvent } from '../../core/events/event.types.ts';
import { prefixedId } from '../../core/ids.ts';
import { DEFAULT_WORKSPACE, WORKSPACE_PATTERN, type Scope } from '../../core/scope.ts';
import { newConnectionId } from '../../core/streams/connection-registry.ts';
import type { Tail } from '../../core/streams/event-hub.ts';
import { authenticateSocket, closeWith, readWsCredential, refuseSocket, sendJson, WS_CLOSE, wsKeyCheck } from '../http-kit/ws.ts';
import { streamRefusal } from '../http-kit/stream-refusal.ts';
import { contentPreview, roundScore } from './mappers.ts';
import { MAX_FILTER_TAGS, MAX_QUERY_CHARS } from './schemas.ts';
import type { G4StreamDeps } from './stream.routes.ts';

/** Standing searches per socket. */
export const MAX_SUBSCRIPTIONS = 10;
export const LIVE_DEFAULT_THRESHOLD = 0.7;
const LIVE_TYPES = ['memory.created', 'memory.updated'];

interface Subscription {
  id: string;
  query: string;
  vector: Float32Array;
  threshold: number;
  tags: string[] | undefined;
  /** Only events after this seq (the log's end when the subscription began) are matched. */
  fromSeq: number;
}

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

/**
 * One live-search socket. Authenticates the upgrade (Authorization: Bearer, or `access_token` for browsers), takes
 * a stream slot of the key, then answers subscribe / unsubscribe messages and pushes `new_result` for each memory
 * created or updated in the caller's scope whose stored vector is at or above a subscription's threshold.
 */
export async function runLiveSearch(socket: WebSocket, req: FastifyRequest, deps: G4StreamDeps): Promise<void> {
  const unit = deps.realtime.timeUnitMs;
  const credential = readWsCredential(req);
  // Listeners go on at once: messages sent right after the upgrade arrive while the key is still being checked.
  let dispatch: ((text: string) => Promise<void>) | null = null;
  let release: (() => void) | null = null;
  let closed = false;
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
  socket.on('close', () => {
    closed = true;
    release?.();
  });
  const principal = await authenticateSocket(deps, credential, socket, 'memories:read');
  if (!principal) return;
  const q = req.query as Record<string, unknown>;
  const header = req.headers['x-workspace-id'];
  const workspace = typeof header === 'string' && header !== '' ? header
    : typeof q.workspace === 'string' && q.workspace !== '' ? q.workspace : DEFAULT_WORKSPACE;
  if (!WORKSPACE_PATTERN.test(workspace)) {
    sendJson(socket, { type: 'error', code: 'VALIDATION_ERROR', message: 'Invalid workspace id (X-Workspace-ID or workspace)' });
    closeWith(socket, WS_CLOSE.policy, 'invalid workspace');
    return;
  }
  const scope: Scope = { tenantId: principal.tenantId, mode: principal.mode, workspace };

  const connectionId = newConnectionId();
  const slot = deps.streams.acquire({
    id: connectionId, keyId: principal.keyId, tenantId: principal.tenantId, kind: 'search-live',
    shutdown: () => closeWith(socket, WS_CLOSE.goingAway, 'server shutting down'),
  });
  if (!slot.ok) {
    refuseSocket(socket, streamRefusal(slot.cap, deps.realtime));
    return;
  }
  void deps.activity?.touch({ scope, userId: principal.userId, keyId: principal.keyId, surface: 'g4' })
    .catch((err: unknown) => req.log.warn({ err }, 'user.activity not recorded'));

  const subscriptions = new Map<string, Subscription>();
  let tail: Tail | null = null;
  const timers: NodeJS.Timeout[] = [];
  release = () => {
    for (const t of timers) clearInterval(t);
    tail?.stop();
    slot.release();
  };
  if (closed) {
    release();
    return;
  }

  const keyStillValid = wsKeyCheck(deps.apiKeys, credential, socket, () => closed);
  timers.push(setInterval(() => void keyStillValid(), deps.realtime.keyCheckSeconds * unit));
  timers[0]!.unref();

  const memoryOf = async (e: StoredEvent) => {
    const d = e.data;
    let createdAt = typeof d.created_at === 'string' ? d.created_at : undefined;
    if (createdAt === undefined) {
      const m = await deps.memories.findById(scope, String(d.id));
      if (!m) return null;
      createdAt = isoTimestamp(m.createdAt);
    }
    return {
      id: d.id, title: d.title, content_preview: contentPreview(typeof d.content === 'string' ? d.content : ''),
      tags: d.tags, metadata: d.metadata, created_at: createdAt,
    };
  };

  async function deliver(page: readonly StoredEvent[]): Promise<boolean> {
    if (closed || !(await keyStillValid())) return false;
    if (subscriptions.size === 0) return true;
    const ids = [...new Set(page.map((e) => String(e.data.id)))];
    const vectors = await deps.memories.vectorsOf(scope, ids);
    for (const e of page) {
      const v = vectors.get(String(e.data.id));
      if (!v) continue;
      const tagsOf = Array.isArray(e.data.tags) ? (e.data.tags as unknown[]) : [];
      let memory: Awaited<ReturnType<typeof memoryOf>> | undefined;
      for (const sub of subscriptions.values()) {
        if (e.seq <= sub.fromSeq) continue;
        if (sub.tags && !sub.tags.some((t) => tagsOf.includes(t))) continue;
        const similarity = similarityFromCosine(cosine(sub.vector, v));
        if (similarity < sub.threshold) continue;
        memory ??= await memoryOf(e);
        if (!memory) break;
        sendJson(socket, {
          type: 'new_result', subscription_id: sub.id, change: e.type === 'memory.created' ? 'created' : 'updated',
          memory, similarity_score: roundScore(similarity),
        });
      }
    }
    return !closed;
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
    let vector: Float32Array;
    try {
      vector = (await deps.search.embedQuery(parsed.query)).vector;
    } catch (err) {
      if (!isDomainError(err)) throw err;
      sendJson(socket, { type: 'error', code: err.code === 'EMBEDDING_FAILED' ? 'SERVICE_UNAVAILABLE' : 'INVALID_QUERY', message: err.message });
      return;
    }
    const fromSeq = await deps.eventHub.latestSeq();
    const sub: Subscription = { id: prefixedId('sub', 16), ...parsed, vector, fromSeq };
    subscriptions.set(sub.id, sub);
    if (tail === null && !closed) {
      tail = await deps.eventHub.subscribe({
        tenantId: scope.tenantId, mode: scope.mode, workspace: scope.workspace, types: LIVE_TYPES, afterSeq: fromSeq,
        deliver,
        onError: (err) => {
          req.log.error({ err }, 'live search failed');
          closeWith(socket, 1011, 'internal error');
        },
      });
      if (closed) tail.stop();
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

  // Messages are handled one at a time, in order (a subscribe embeds its query before the next message is read).
  dispatch = handle;
  for (const text of pending.splice(0)) enqueue(text);
}
