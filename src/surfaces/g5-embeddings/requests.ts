import type { FastifyRequest } from 'fastify';
import { isBlank } from '../../core/embeddings/embedder.port.ts';
import {
  DEFAULT_G5_MODEL_DIMENSIONS, MAX_INPUTS, type ApiModel, type EmbeddingService,
} from '../../core/embeddings/embedding.service.ts';
import { isDomainError } from '../../core/errors.ts';
import { G5RequestError, invalidRequest, type G5Problem } from './errors.ts';
import { MAX_CLIENT_VERSION_LENGTH } from './schemas.ts';

/** A G5 request that passed every check the surface can make before the core counts tokens. */
export interface EmbeddingsRequest {
  texts: string[];
  /** The input was a single string (its problems are named `input`, not `input[0]`). */
  single: boolean;
  model: ApiModel;
  clientVersion: string | undefined;
}

/** `application/json`, parameters (charset) allowed; anything else or nothing is a 415. */
export function requireJsonContentType(req: FastifyRequest): void {
  const header = req.headers['content-type'];
  const mediaType = typeof header === 'string' ? header.split(';')[0]!.trim().toLowerCase() : '';
  if (mediaType !== 'application/json') {
    throw new G5RequestError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', {
      field: 'Content-Type', reason: 'unsupported_media_type',
    });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the body and headers, collecting every problem with its reason (input first, then model, then headers).
 * Token lengths are left to the core, which counts them with the documented tokenizer.
 */
export function validateEmbeddingsRequest(
  body: unknown, headers: FastifyRequest['headers'], embeddings: Pick<EmbeddingService, 'models' | 'resolveModel'>,
): EmbeddingsRequest {
  if (!isObject(body)) throw invalidRequest([{ field: 'body', reason: 'invalid_type', message: 'must be a JSON object' }]);
  const problems: G5Problem[] = [];

  const input = body.input;
  let texts: string[] = [];
  const single = typeof input === 'string';
  if (input === undefined) {
    problems.push({ field: 'input', reason: 'missing_required_field', message: 'is required' });
  } else if (typeof input === 'string') {
    if (isBlank(input)) problems.push({ field: 'input', reason: 'empty_input', message: 'must not be empty or blank' });
    texts = [input];
  } else if (Array.isArray(input)) {
    if (input.length === 0) {
      problems.push({ field: 'input', reason: 'empty_input', message: 'must contain at least one text' });
    } else if (input.length > MAX_INPUTS) {
      // The texts themselves are not looked at: the request is refused as a whole.
      problems.push({ field: 'input', reason: 'too_many_inputs', message: `has ${input.length} texts; at most ${MAX_INPUTS}` });
    } else {
      input.forEach((text: unknown, i) => {
        if (typeof text !== 'string') problems.push({ field: `input[${i}]`, reason: 'invalid_type', message: 'must be a string' });
        else if (isBlank(text)) problems.push({ field: `input[${i}]`, reason: 'empty_input', message: 'must not be empty or blank' });
      });
      texts = input as string[];
    }
  } else {
    problems.push({ field: 'input', reason: 'invalid_type', message: 'must be a string or an array of strings' });
  }

  let model: ApiModel | undefined;
  if (body.model !== undefined && typeof body.model !== 'string') {
    problems.push({ field: 'model', reason: 'invalid_type', message: 'must be a string' });
  } else {
    try {
      model = embeddings.resolveModel(body.model as string | undefined, DEFAULT_G5_MODEL_DIMENSIONS);
    } catch (err) {
      if (!isDomainError(err)) throw err;
      const available = embeddings.models().map((m) => m.name);
      problems.push(body.model === undefined
        // An embedder wider than 1024 dimensions cannot serve the default model: the caller must pick one.
        ? {
          field: 'model', reason: 'missing_required_field', available_models: available,
          message: `is required here: the default ${DEFAULT_G5_MODEL_DIMENSIONS}-dimension model is not served; available: ${available.join(', ')}`,
        }
        : { field: 'model', reason: 'unknown_model', message: `is not a known model; available: ${available.join(', ')}`, available_models: available });
    }
  }

  const clientVersion = headers['x-client-version'];
  if (typeof clientVersion === 'string' && clientVersion.length > MAX_CLIENT_VERSION_LENGTH) {
    problems.push({ field: 'X-Client-Version', reason: 'invalid_value', message: `must be at most ${MAX_CLIENT_VERSION_LENGTH} characters` });
  }

  if (problems.length > 0) throw invalidRequest(problems);
  return { texts, single, model: model!, clientVersion: typeof clientVersion === 'string' ? clientVersion : undefined };
}
