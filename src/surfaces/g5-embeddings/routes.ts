import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingResult, EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import { isDomainError } from '../../core/errors.ts';
import { markDeprecated } from '../http-kit/deprecation.ts';
import { authGuard, requirePrincipal, type AuthDeps } from '../http-kit/auth.ts';
import { createG5ErrorHandler, invalidRequest, problemsFromFields } from './errors.ts';
import { EmbeddingListWire, EmbeddingsBody, EmbeddingsHeaders, ErrorWire } from './schemas.ts';
import { requireJsonContentType, validateEmbeddingsRequest } from './requests.ts';

export interface G5Deps extends AuthDeps {
  embeddings: Pick<EmbeddingService, 'models' | 'resolveModel' | 'embed'>;
  clock: Clock;
}


const errors = { 400: ErrorWire, 401: ErrorWire, 404: ErrorWire, 413: ErrorWire, 415: ErrorWire, 429: ErrorWire, 500: ErrorWire, 503: ErrorWire };

export const toEmbeddingList = (r: EmbeddingResult) => {
  const tokens = r.tokens.reduce((a, b) => a + b, 0);
  return {
    object: 'list' as const,
    data: r.vectors.map((embedding, index) => ({ object: 'embedding' as const, embedding, index })),
    model: r.model.name,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
};

/** G5: `POST /api/v1/embeddings`, authenticated by `Authorization: Bearer`. Register with prefix `/api/v1/embeddings`. */
export const g5Routes: FastifyPluginAsync<G5Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG5ErrorHandler(deps.clock));
  // onRequest: the key (and the gateway's per-minute limit) is checked before the body is even parsed.
  r.addHook('onRequest', authGuard(deps, 'bearer'));

  r.post('/', {
    config: { operation: 'embedding.create' },
    // The handler checks the request itself so that every problem gets its reason (validation.ts);
    // the schema documents the request for /openapi.json.
    attachValidation: true,
    schema: {
      tags: ['G5 embeddings'],
      security: [{ bearer: [] }],
      summary: 'Create embeddings',
      description: 'One embedding per input text, in input order (`index` = position). Usage counts tokens with '
        + 'cl100k_base. Counts once per request against the hourly embeddings limit (free 1000, pro 10000) once the '
        + 'request passes the checks that need no tokenizing.',
      headers: EmbeddingsHeaders,
      body: EmbeddingsBody,
      response: { 200: EmbeddingListWire, ...errors },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    requireJsonContentType(req);
    const request = validateEmbeddingsRequest(req.body as unknown, req.headers, deps.embeddings);
    // A schema error the handler's own checks did not catch is still a 400, never a pass.
    if (req.validationError) throw req.validationError;
    req.log.debug({ clientVersion: request.clientVersion, model: request.model.name, inputs: request.texts.length }, 'g5 embeddings request');

    let result: EmbeddingResult;
    try {
      // Counts the caller's embedding limit, even when a text then proves too long (400 input_too_long) or the model fails.
      result = await deps.embeddings.embed(principal, request.texts, request.model, 'input');
    } catch (err) {
      // The core counts tokens: an over-long text is found here.
      if (isDomainError(err) && err.code === 'VALIDATION_FAILED' && err.details.fields?.length) {
        throw invalidRequest(problemsFromFields(err.details.fields, undefined, (f) => (request.single && f === 'input[0]' ? 'input' : f)));
      }
      throw err;
    }
    if (request.model.deprecated) markDeprecated(reply);
    return toEmbeddingList(result);
  });
};
