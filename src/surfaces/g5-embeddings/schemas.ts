import { Type } from 'typebox';
import { MAX_INPUT_TOKENS, MAX_INPUTS } from '../../core/embeddings/embedding.service.ts';

/**
 * Wire schemas of G5 (`POST /api/v1/embeddings`). They document the request and serialize the answers; the
 * request itself is checked by `validateEmbeddingsRequest` (validation.ts), which gives each problem its reason.
 */

export const MAX_CLIENT_VERSION_LENGTH = 100;

export const EmbeddingsHeaders = Type.Object({
  'x-client-version': Type.Optional(Type.String({
    maxLength: MAX_CLIENT_VERSION_LENGTH,
    description: `Optional client version (at most ${MAX_CLIENT_VERSION_LENGTH} characters). Logged with the request at debug level; it changes nothing in the answer.`,
  })),
});

const Text = Type.String({ minLength: 1, description: `Not blank; at most ${MAX_INPUT_TOKENS} tokens (cl100k_base)` });

export const EmbeddingsBody = Type.Object({
  input: Type.Union([
    Text,
    Type.Array(Text, { minItems: 1, maxItems: MAX_INPUTS }),
  ], {
    description: `A text, or an array of 1-${MAX_INPUTS} texts. A string behaves as an array of one. Each text: not blank, at most ${MAX_INPUT_TOKENS} tokens.`,
  }),
  model: Type.Optional(Type.String({
    description: 'Model name. Default: the 1024-dimension model `mnemo-embed-1024`. Also `mnemo-embed-1536`; '
      + '`mnemo-embed-768` is deprecated (removal in 2.0.0) and answers with `Deprecation` and `Sunset` headers.',
  })),
}, { description: 'Other fields are ignored.' });

export const EmbeddingListWire = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Object({
    object: Type.Literal('embedding'),
    embedding: Type.Array(Type.Number(), { description: 'The vector; its length is the model\'s dimensions' }),
    index: Type.Integer({ description: 'Position of the text in the input' }),
  }), { description: 'One entry per input text, in input order' }),
  model: Type.String({ description: 'The model that produced the vectors' }),
  usage: Type.Object({
    prompt_tokens: Type.Integer({ description: 'Sum of the tokens of every text (cl100k_base)' }),
    total_tokens: Type.Integer({ description: 'Equal to prompt_tokens' }),
  }),
});

const Problem = Type.Object({
  field: Type.String(),
  reason: Type.String(),
  message: Type.String(),
  available_models: Type.Optional(Type.Array(Type.String())),
});

export const ErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Object({
      reason: Type.String({
        description: 'missing_required_field, invalid_type, empty_input, too_many_inputs, input_too_long, unknown_model, '
          + 'invalid_json, invalid_value, missing_api_key, invalid_api_key, rate_limit_exceeded, unsupported_media_type, '
          + 'payload_too_large, not_found, embedding_unavailable, internal_error',
      }),
      field: Type.Optional(Type.String({ description: 'The request part at fault: `input`, `input[2]`, `model`, `body`, a header name' })),
      message: Type.Optional(Type.String()),
      available_models: Type.Optional(Type.Array(Type.String(), { description: 'With unknown_model' })),
      errors: Type.Optional(Type.Array(Problem, { description: 'Every problem, when a request has several' })),
      limit: Type.Optional(Type.Integer({ description: 'With RATE_LIMITED: requests allowed in the window' })),
      remaining: Type.Optional(Type.Integer()),
      reset_at: Type.Optional(Type.String({ description: 'With RATE_LIMITED: when the window ends (ISO 8601)' })),
    }, { additionalProperties: true }),
    request_id: Type.String(),
    timestamp: Type.String(),
  }),
});
