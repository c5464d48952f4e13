import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import { isoTimestamp } from '../../core/clock.ts';
import { suppliedVectorProblems } from '../../core/embeddings/vectors.ts';
import { DEFAULT_G4_MODEL_DIMENSIONS, type ApiModel, type EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import type { FieldProblem } from '../../core/errors.ts';
import type { MemoryFilter } from '../../core/memories/memory.types.ts';
import type { Scope } from '../../core/scope.ts';
import { checkFilter, parseMetadataFilter } from '../../core/search/filters.ts';
import type { SearchService } from '../../core/search/search.service.ts';
import { markDeprecated } from '../http-kit/deprecation.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG4ErrorHandler } from './errors.ts';
import { getBodyOf, readGetBody } from './requests.ts';
import { dateBound, lifecycleOf, roundMs, scoreSuggestions, searchModel, splitList, toSemanticItem, toVectorItem } from './mappers.ts';
import { collectProblems, schemaProblems, throwIfAnyProblem } from '../http-kit/field-problems.ts';
import { readValidity } from '../http-kit/validity.ts';
import {
  DEFAULTS, EmbeddingBody, ErrorWire, MAX_FILTER_TAGS, Responses, SearchQuery, SuggestionsQuery, VECTOR_DIMENSIONS, VectorBody,
} from './schemas.ts';

export interface G4Deps extends AuthDeps {
  search: Pick<SearchService, 'semantic' | 'byVector' | 'suggest'>;
  /** `embed` counts the caller's embedding limit. */
  embeddings: Pick<EmbeddingService, 'resolveModel' | 'embed' | 'nativeModel'>;
  clock: Clock;
}


const errors = { 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 413: ErrorWire, 415: ErrorWire, 429: ErrorWire, 503: ErrorWire };
const searchErrors = { ...errors, 408: ErrorWire };



const has = (problems: readonly FieldProblem[], field: string) => problems.some((p) => p.field === field);


function checkText(value: unknown, field: string, problems: FieldProblem[]): void {
  if (typeof value === 'string' && !has(problems, field) && value.trim() === '') problems.push({ field, reason: 'empty', message: 'must not be blank' });
}

function checkTags(tags: string[] | undefined, problems: FieldProblem[]): void {
  if (tags && tags.length > MAX_FILTER_TAGS) problems.push({ field: 'tags', reason: 'too_many', message: `at most ${MAX_FILTER_TAGS} tags` });
}


/** `metadata_filter` from the GET body or the query string (not both). */
function getMetadataFilter(req: FastifyRequest, fromQuery: unknown, problems: FieldProblem[]): unknown {
  const body = getBodyOf(req);
  if (!body.ok) {
    problems.push(...body.problems);
    return undefined;
  }
  let fromBody: unknown;
  if (body.value) {
    for (const key of Object.keys(body.value)) {
      if (key !== 'metadata_filter') problems.push({ field: `body.${key}`, reason: 'not_allowed', message: 'is not allowed; a GET body may hold only metadata_filter' });
    }
    fromBody = body.value.metadata_filter;
  }
  let parsedQuery: unknown;
  if (typeof fromQuery === 'string') {
    try {
      parsedQuery = JSON.parse(fromQuery);
    } catch {
      problems.push({ field: 'metadata_filter', reason: 'invalid_format', message: 'must be a URL-encoded JSON object' });
      return undefined;
    }
  }
  if (fromBody !== undefined && parsedQuery !== undefined) {
    problems.push({ field: 'metadata_filter', reason: 'not_allowed', message: 'give it in the JSON body or in the query string, not both' });
    return undefined;
  }
  return fromBody ?? parsedQuery;
}

const meta = (clock: Clock, req: FastifyRequest) => ({ timestamp: isoTimestamp(clock.now()), request_id: req.id });

/** G4: `/v1/search`, `/v1/search/vector`, `/v1/search/suggestions`, `/v1/embeddings` (Bearer). Registered without a prefix: routes carry full paths. */
export const g4Routes: FastifyPluginAsync<G4Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG4ErrorHandler(deps.clock));
  // onRequest: the key is checked before any body is read.
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G4 search and discovery'];
  const security = [{ bearer: [] }];


  r.get('/v1/search', {
    config: { operation: 'memory.search' },
    schema: {
      tags, security, summary: 'Semantic search',
      description: 'A JSON body `{"metadata_filter": {...}}` may be sent with this GET (Content-Type: application/json, at most '
        + '64 KiB); clients that cannot send one give `metadata_filter` as a URL-encoded JSON query parameter instead.',
      querystring: SearchQuery,
      response: { 200: Responses.search, ...searchErrors },
    },
    attachValidation: true,
    preValidation: readGetBody,
  }, async (req) => {
    const started = performance.now();
    const principal = requirePrincipal(req);
    const q = req.query;
    const problems = schemaProblems(req);
    checkText(q.q, 'q', problems);
    const tagList = splitList(typeof q.tags === 'string' ? q.tags : undefined);
    checkTags(tagList, problems);
    const filter: MemoryFilter = {
      tagsAny: tagList,
      createdFrom: dateBound(q.created_after, 'created_after', problems),
      createdTo: dateBound(q.created_before, 'created_before', problems),
    };
    checkFilter(filter, problems, { from: 'created_after', to: 'created_before' });
    const rawFilter = getMetadataFilter(req, q.metadata_filter, problems);
    filter.metadata = parseMetadataFilter(rawFilter, problems, 'metadata_filter');
    const validity = readValidity(q, deps.clock, problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    throwIfAnyProblem(problems);

    const limit = q.limit ?? DEFAULTS.limit;
    const offset = q.offset ?? DEFAULTS.offset;
    const threshold = q.similarity_threshold ?? DEFAULTS.threshold;
    const outcome = await deps.search.semantic(
      { scope: scope as Scope, userId: principal.userId, surface: 'g4', arrivedAt: req.arrivedAt },
      {
        query: q.q, limit: limit + offset, threshold, filter, validity: validity.option,
        logFilters: {
          tags: tagList, created_after: q.created_after, created_before: q.created_before, metadata_filter: filter.metadata,
          limit, offset, as_of: q.as_of, include_expired: q.include_expired,
        },
      },
    );
    const page = outcome.hits.slice(offset, offset + limit);
    const options = { query: q.q, includeContent: q.include_content === true, highlight: q.highlight !== false };
    const lifecycle = lifecycleOf(q.as_of !== undefined || q.include_expired !== undefined, validity);
    const results = page.map((h) => ({ ...toSemanticItem(h, options), ...lifecycle(h.memory) }));
    return {
      success: true as const,
      data: {
        query: q.q,
        results,
        pagination: { total: outcome.total, limit, offset, has_more: offset + results.length < outcome.total },
        search_metadata: {
          query_time_ms: roundMs(performance.now() - started),
          ...searchModel(deps.embeddings),
          similarity_threshold: threshold,
        },
      },
      meta: meta(deps.clock, req),
    };
  });

  r.post('/v1/search/vector', {
    config: { operation: 'memory.search_vector' },
    schema: {
      tags, security, summary: 'Search by a 1536-dimension vector',
      body: VectorBody,
      response: { 200: Responses.vector, ...searchErrors },
    },
    attachValidation: true,
  }, async (req) => {
    const started = performance.now();
    const principal = requirePrincipal(req);
    const b = req.body;
    const vector: unknown = b?.vector;
    // The schema reports a vector that is no array; an array is judged by the one check of supplied vectors. Its
    // problem with the whole vector (the width) leads; the schema's words for an entry of the wrong type win.
    const supplied = Array.isArray(vector) ? suppliedVectorProblems(vector, 'vector', { width: VECTOR_DIMENSIONS, refuseZero: true }) : [];
    const problems = [
      ...supplied.filter((p) => p.field === 'vector'),
      ...schemaProblems(req).filter((p) => !(p.field === 'vector' && Array.isArray(vector))),
      ...supplied.filter((p) => p.field !== 'vector'),
    ];
    const metadata = b && typeof b.metadata_filter === 'object' ? parseMetadataFilter(b.metadata_filter, problems, 'metadata_filter') : undefined;
    // The schema reports a mistyped include_expired; only an as_of string is judged here.
    const validity = readValidity({ as_of: typeof b?.as_of === 'string' ? b.as_of : undefined, include_expired: b?.include_expired === true }, deps.clock, problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    throwIfAnyProblem(problems);

    const tagList = b.tags && b.tags.length > 0 ? [...new Set(b.tags)] : undefined;
    const limit = b.limit ?? DEFAULTS.limit;
    const offset = b.offset ?? DEFAULTS.offset;
    const threshold = b.similarity_threshold ?? DEFAULTS.threshold;
    const outcome = await deps.search.byVector(
      { scope: scope as Scope, userId: principal.userId, surface: 'g4', arrivedAt: req.arrivedAt },
      {
        vector: b.vector, limit: limit + offset, threshold,
        filter: { tagsAny: tagList, metadata }, validity: validity.option,
        logFilters: { tags: tagList, metadata_filter: metadata, limit, offset, as_of: b.as_of, include_expired: b.include_expired },
      },
    );
    const lifecycle = lifecycleOf(b.as_of !== undefined || b.include_expired !== undefined, validity);
    const results = outcome.hits.slice(offset, offset + limit).map((h) => ({ ...toVectorItem(h), ...lifecycle(h.memory) }));
    return {
      success: true as const,
      data: {
        results,
        pagination: { total: outcome.total, limit, offset, has_more: offset + results.length < outcome.total },
        search_metadata: {
          query_time_ms: roundMs(performance.now() - started),
          similarity_threshold: threshold,
          distance_metric: 'cosine' as const,
        },
      },
      meta: meta(deps.clock, req),
    };
  });

  r.get('/v1/search/suggestions', {
    config: { operation: 'memory.suggest' },
    schema: {
      tags, security, summary: 'Suggestions for a partial query: past queries, tags or titles',
      querystring: SuggestionsQuery,
      response: { 200: Responses.suggestions, ...errors },
    },
    attachValidation: true,
  }, async (req) => {
    const q = req.query;
    const problems = schemaProblems(req);
    checkText(q.q, 'q', problems);
    const validity = readValidity(q, deps.clock, problems);
    const scope = collectProblems(problems, () => scopeOf(req));
    throwIfAnyProblem(problems);

    const text = q.q.trim();
    const limit = q.limit ?? DEFAULTS.suggestionLimit;
    const type = q.type ?? 'query';
    const found = await deps.search.suggest(scope as Scope, type, text, limit, validity.option);
    return {
      success: true as const,
      data: { query: q.q, suggestions: scoreSuggestions(found, text, type) },
      meta: meta(deps.clock, req),
    };
  });

  r.post('/v1/embeddings', {
    config: { operation: 'embedding.create' },
    schema: {
      tags, security, summary: 'Embed a text (1536 dimensions by default)',
      body: EmbeddingBody,
      response: { 200: Responses.embedding, ...errors },
    },
    attachValidation: true,
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const b = req.body;
    const problems = schemaProblems(req);
    checkText(b?.text, 'text', problems);
    let model: ApiModel | undefined;
    const requested: unknown = b?.model;
    if (requested === undefined || typeof requested === 'string') {
      model = collectProblems(problems, () => deps.embeddings.resolveModel(requested as string | undefined, DEFAULT_G4_MODEL_DIMENSIONS));
    }
    throwIfAnyProblem(problems);
    const chosen = model as ApiModel;

    // Counts the caller's embedding limit (the same hourly bucket as G5).
    const result = await deps.embeddings.embed(principal, [b.text], chosen, 'text');
    if (chosen.deprecated) markDeprecated(reply);
    const embedding = result.vectors[0] ?? [];
    return {
      success: true as const,
      data: { text: b.text, embedding, model: chosen.name, token_count: result.tokens[0] ?? 0, dimensions: embedding.length },
      meta: meta(deps.clock, req),
    };
  });
};
