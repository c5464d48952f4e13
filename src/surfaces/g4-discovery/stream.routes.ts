import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { ApiKeyService } from '../../core/api-keys/api-key.service.ts';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import { validationError } from '../../core/errors.ts';
import type { ActivityTracker } from '../../core/events/user-activity.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import { checkFilter, parseMetadataFilter } from '../../core/search/filters.ts';
import type { SearchService } from '../../core/search/search.service.ts';
import type { ConnectionRegistry } from '../../core/streams/connection-registry.ts';
import type { StreamSlots } from '../../core/streams/stream-slots.port.ts';
import type { EventHub } from '../../core/streams/event-hub.ts';
import type { LiveSearchService } from '../../core/streams/live-search.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { acceptsEventStream, openSse } from '../http-kit/sse.ts';
import { createG4ErrorHandler, G4HttpError } from './errors.ts';
import { runLiveSearch } from './live-search.ts';
import { dateBound, lifecycleOf, roundMs, searchModel, splitList, toSemanticItem } from './mappers.ts';
import { schemaProblems } from '../http-kit/field-problems.ts';
import { readValidity } from '../http-kit/validity.ts';
import { SSE_RESPONSE, WEBSOCKET_UPGRADE_RESPONSE } from '../http-kit/stream-docs.ts';
import { DEFAULTS, ErrorWire, MAX_FILTER_TAGS, SearchQuery } from './schemas.ts';
import { collectProblems } from '../http-kit/field-problems.ts';

export interface G4StreamDeps extends AuthDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  search: Pick<SearchService, 'semantic'>;
  embeddings: Pick<EmbeddingService, 'nativeModel'>;
  liveSearch: Pick<LiveSearchService, 'subscribe' | 'results'>;
  eventHub: Pick<EventHub, 'subscribe'>;
  streams: ConnectionRegistry;
  slots?: Pick<StreamSlots, 'take'> | undefined;
  realtime: RealtimeSettings;
  activity?: Pick<ActivityTracker, 'touch'> | undefined;
  clock: Clock;
}

const StreamQuery = Type.Omit(SearchQuery, ['offset']);



/**
 * G4's real-time routes: `GET /v1/search/stream` (a search answered as Server-Sent Events) and WebSocket
 * `/v1/search/live` (standing searches: new and updated memories that match). Registered without a prefix.
 */
export const g4StreamRoutes: FastifyPluginAsync<G4StreamDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG4ErrorHandler(deps.clock));
  const tags = ['G4 search and discovery'];
  const security = [{ bearer: [] }];


  r.get('/v1/search/stream', {
    config: { operation: 'memory.search' },
    schema: {
      tags, security, summary: 'Semantic search answered as Server-Sent Events',
      description: 'Requires `Accept: text/event-stream` (else 406). The same parameters as GET /v1/search (no offset, no GET body). '
        + 'Frames: one `event: result` per result (data: the search result item plus `rank`, best first), then `event: done` '
        + '{query, total, returned, query_time_ms, embedding_model, embedding_dimensions}; the server then closes the stream. Errors before the first '
        + 'frame are JSON in the G4 envelope.',
      querystring: StreamQuery,
      response: { 200: SSE_RESPONSE, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 406: ErrorWire, 408: ErrorWire, 429: ErrorWire, 503: ErrorWire },
    },
    attachValidation: true,
    onRequest: authGuard(deps, 'bearer'),
    exposeHeadRoute: false,
  }, async (req, reply) => {
    const started = performance.now();
    const principal = requirePrincipal(req);
    if (!acceptsEventStream(req)) {
      throw new G4HttpError(406, 'NOT_ACCEPTABLE', 'This endpoint answers text/event-stream only',
        [{ field: 'Accept', message: 'must include text/event-stream' }]);
    }
    const q = req.query;
    const problems = schemaProblems(req);
    if (typeof q.q === 'string' && !problems.some((p) => p.field === 'q') && q.q.trim() === '') problems.push({ field: 'q', reason: 'empty', message: 'must not be blank' });
    const tagList = splitList(typeof q.tags === 'string' ? q.tags : undefined);
    if (tagList && tagList.length > MAX_FILTER_TAGS) problems.push({ field: 'tags', reason: 'too_many', message: `at most ${MAX_FILTER_TAGS} tags` });
    const filter: MemoryFilter = {
      tagsAny: tagList,
      createdFrom: dateBound(q.created_after, 'created_after', problems),
      createdTo: dateBound(q.created_before, 'created_before', problems),
    };
    checkFilter(filter, problems, { from: 'created_after', to: 'created_before' });
    if (typeof q.metadata_filter === 'string') {
      let raw: unknown;
      try {
        raw = JSON.parse(q.metadata_filter);
        filter.metadata = parseMetadataFilter(raw, problems, 'metadata_filter');
      } catch {
        problems.push({ field: 'metadata_filter', reason: 'invalid_format', message: 'must be a URL-encoded JSON object' });
      }
    }
    const validity = readValidity(q, deps.clock, problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    if (problems.length > 0 || !scope) {
      const seen = new Set<string>();
      throw validationError(problems.filter((p) => (seen.has(p.field) ? false : (seen.add(p.field), true))));
    }

    const limit = q.limit ?? DEFAULTS.limit;
    const threshold = q.similarity_threshold ?? DEFAULTS.threshold;
    const outcome = await deps.search.semantic(
      { scope, userId: principal.userId, surface: 'g4', arrivedAt: req.arrivedAt },
      {
        query: q.q, limit, threshold, filter, validity: validity.option,
        logFilters: {
          tags: tagList, created_after: q.created_after, created_before: q.created_before, metadata_filter: filter.metadata, limit, stream: true,
          as_of: q.as_of, include_expired: q.include_expired,
        },
      },
    );
    const options = { query: q.q, includeContent: q.include_content === true, highlight: q.highlight !== false };
    const lifecycle = lifecycleOf(q.as_of !== undefined || q.include_expired !== undefined, validity);
    // A short answer, not a standing stream: no stream session. It takes no registry slot (the per-key cap is for
    // long-lived streams), needs no key re-check or timers (the answer is computed before the first frame), and its
    // user.activity is noted by the request observer like any request's (onResponse runs for a hijacked reply too).
    const sse = openSse(req, reply);
    let rank = 0;
    for (const hit of outcome.hits) {
      rank += 1;
      if (!(await sse.send({ event: 'result', data: { ...toSemanticItem(hit, options), ...lifecycle(hit.memory), rank } }))) return reply;
    }
    await sse.send({
      event: 'done',
      data: {
        query: q.q, total: outcome.total, returned: outcome.hits.length,
        query_time_ms: roundMs(performance.now() - started), ...searchModel(deps.embeddings),
      },
    });
    sse.end();
    return reply;
  });

  r.route({
    method: 'GET',
    url: '/v1/search/live',
    config: { operation: 'memory.search_live', socketAuth: true },
    schema: {
      tags, security,
      summary: 'WebSocket: live search',
      description: 'Open with a WebSocket client (`Authorization: Bearer`, `X-API-Key` or `?access_token=`; the workspace '
        + 'is `X-Workspace-ID` or `?workspace=`). Send '
        + '`{type: "subscribe", query, filters: {tags}?, threshold?}` to follow memories created or updated later that match; '
        + 'the server pushes `{type: "new_result", subscription_id, change, memory, similarity_score}`. Also `unsubscribe` and '
        + '`ping`. A plain HTTP GET answers 426. See docs/api.md, "G4 real-time".',
      response: { 101: WEBSOCKET_UPGRADE_RESPONSE, 426: ErrorWire },
    },
    handler: async () => {
      throw new G4HttpError(426, 'UPGRADE_REQUIRED', '/v1/search/live is a WebSocket endpoint; open it with a WebSocket client',
        [{ field: 'Upgrade', message: 'must be websocket' }]);
    },
    wsHandler: (socket, req) => runLiveSearch(socket, req, deps),
  });
};
