import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import type { SearchContext, SearchService } from '../../core/search/search.service.ts';
import { markDeprecated } from '../http-kit/deprecation.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { workspaceOf } from '../http-kit/workspace.ts';
import { wireFields } from '../http-kit/wire-fields.ts';
import { createG3ErrorHandler } from './errors.ts';
import { roundMs, toMatch } from './mappers.ts';
import { parseBatch, parseHybrid, parseSearch, type RawRequest } from './requests.ts';
import { BatchBody, BatchResponse, ErrorWire, HybridBody, HybridResponse, SearchBody, SearchResponse } from './schemas.ts';

export interface G3Deps extends AuthDeps {
  search: Pick<SearchService, 'semantic' | 'hybrid'>;
  clock: Clock;
}

const errors = {
  400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 408: ErrorWire, 413: ErrorWire, 415: ErrorWire, 429: ErrorWire,
  503: ErrorWire,
};

const rawOf = (req: FastifyRequest, clock: Clock): RawRequest => ({
  body: req.body, workspace: workspaceOf(req), validationError: req.validationError, clock,
});


/**
 * G3: `/api/v1/search`, `/hybrid`, `/batch`, authenticated by `Authorization: Bearer`. Register with prefix
 * `/api/v1/search`. Schema problems are attached rather than thrown so that the route reports them together with
 * the rules of requests.ts (and, for /batch, per item).
 */
export const g3Routes: FastifyPluginAsync<G3Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG3ErrorHandler(deps.clock));
  // onRequest: the key is checked before the body is even parsed.
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G3 search'];
  const security = [{ bearer: [] }];

  /** The principal (with `memories:read`) and the search context for a workspace. */
  const contextOf = (req: FastifyRequest, workspace: string): SearchContext => {
    const principal = requirePrincipal(req);
    return { scope: scopeOf(req, workspace), userId: principal.userId, surface: 'g3', arrivedAt: req.arrivedAt };
  };

  r.post('/', {
    config: { operation: 'memory.search' },
    attachValidation: true,
    schema: {
      tags, security, summary: 'Semantic search',
      description: 'Memories most similar to the query, best first, at or above the threshold.',
      body: SearchBody, response: { 200: SearchResponse, ...errors },
    },
  }, async (req, reply) => {
    const p = parseSearch(rawOf(req, deps.clock));
    const out = await deps.search.semantic(contextOf(req, p.workspace), {
      query: p.query, limit: p.topK, threshold: p.threshold, filter: p.filter, withVectors: p.includeEmbedding,
      validity: p.validity.option, logFilters: p.logFilters,
    });
    if (p.usedDeprecatedAlias) markDeprecated(reply, { sunset: false });
    return {
      matches: out.hits.map((h) => toMatch(h, p.query, p)),
      total: out.total,
      query_embedding_time: roundMs(out.embeddingMs),
      search_time: roundMs(out.searchMs),
    };
  });

  r.post('/hybrid', {
    config: { operation: 'memory.search_hybrid' },
    attachValidation: true,
    schema: {
      tags, security, summary: 'Hybrid (semantic + keyword) search',
      description: 'Semantic and keyword (BM25) candidates, ordered by the weighted sum of the calibrated similarity and a keyword part: the memory\'s coverage of the query (rerank true) or its BM25 score relative to the best keyword hit (rerank false).',
      body: HybridBody, response: { 200: HybridResponse, ...errors },
    },
  }, async (req, reply) => {
    const p = parseHybrid(rawOf(req, deps.clock));
    const out = await deps.search.hybrid(contextOf(req, p.workspace), {
      query: p.query, limit: p.topK, threshold: p.threshold, filter: p.filter, withVectors: p.includeEmbedding,
      semanticWeight: p.semanticWeight, keywordWeight: p.keywordWeight, rerank: p.rerank, validity: p.validity.option,
      logFilters: p.logFilters,
    });
    if (p.usedDeprecatedAlias) markDeprecated(reply, { sunset: false });
    return {
      matches: out.hits.map((h) => toMatch(h, p.query, p)),
      semantic_results: out.semanticResults,
      keyword_results: out.keywordResults,
      combined_score_method: out.method,
      total: out.total,
      query_embedding_time: roundMs(out.embeddingMs),
      search_time: roundMs(out.searchMs),
    };
  });

  r.post('/batch', {
    config: { operation: 'memory.search_batch' },
    attachValidation: true,
    schema: {
      tags, security, summary: 'Several semantic searches at once',
      description: 'Runs 1-20 searches concurrently; results keep the input order. A bad item gets an error in its slot.',
      body: BatchBody, response: { 200: BatchResponse, ...errors },
    },
  }, async (req) => {
    const started = performance.now();
    const batch = parseBatch(rawOf(req, deps.clock));
    const ctx = contextOf(req, batch.workspace);
    const results = await Promise.all(batch.slots.map(async (slot) => {
      if (!slot.ok) {
        return {
          query: slot.query, matches: [],
          error: { code: 'VALIDATION_ERROR', message: 'This search is invalid and was not run', details: wireFields(slot.problems) },
        };
      }
      const out = await deps.search.semantic(ctx, {
        query: slot.query, limit: slot.topK, threshold: slot.threshold, filter: slot.filter, validity: slot.validity.option,
        logFilters: slot.logFilters,
      });
      const options = { includeMetadata: true, includeEmbedding: false, validity: slot.validity };
      return { query: slot.query, matches: out.hits.map((h) => toMatch(h, slot.query, options)) };
    }));
    return { results, total_time: roundMs(performance.now() - started) };
  });
};
