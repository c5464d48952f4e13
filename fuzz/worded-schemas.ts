import type { JsonSchema, Operation } from './openapi.ts';

const id = { type: 'string' } satisfies JsonSchema;
const memoryData: JsonSchema = {
  type: 'object', required: ['content'],
  properties: {
    content: { type: 'string' }, title: { type: 'string', maxLength: 255 }, metadata: { type: 'object' },
    tags: { type: 'array', items: { type: 'string' } }, memory_type: { type: 'string' },
  },
};

/**
 * Body shapes the OpenAPI document gives in words only (G6's operations and options are described, not typed):
 * stated here so that the fuzzer's valid-looking bodies get past the first check and its mutations reach further.
 */
const WORDED: Record<string, JsonSchema> = {
  'POST /api/v1/batch/': {
    type: 'object', required: ['operations'],
    properties: {
      operations: {
        type: 'array', minItems: 1, maxItems: 4,
        items: {
          anyOf: [
            { type: 'object', required: ['type', 'data'], properties: { type: { const: 'create' }, data: memoryData } },
            { type: 'object', required: ['type', 'id'], properties: { type: { const: 'read' }, id } },
            { type: 'object', required: ['type', 'id', 'data'], properties: { type: { const: 'update' }, id, data: memoryData } },
            { type: 'object', required: ['type', 'id'], properties: { type: { const: 'delete' }, id } },
            {
              type: 'object', required: ['type', 'query'],
              properties: {
                type: { const: 'search' }, query: { type: 'string' },
                options: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, threshold: { type: 'number', minimum: 0, maximum: 1 }, filters: { type: 'object' } } },
              },
            },
          ],
        },
      },
      options: {
        type: 'object',
        properties: {
          continue_on_error: { type: 'boolean' }, max_retries: { type: 'integer', minimum: 0, maximum: 5 },
          timeout: { type: 'integer', minimum: 1000, maximum: 60000 }, parallel: { type: 'boolean' },
          validate_only: { type: 'boolean' }, atomic: { type: 'boolean' },
        },
      },
    },
  },
};

/** The operation with its worded body shape stated, where there is one. */
export function withWordedSchemas(op: Operation): Operation {
  const body = WORDED[`${op.method} ${op.path}`];
  return body ? { ...op, body } : op;
}
