import { Type } from 'typebox';

/** G6 wire schemas. Operations are checked one by one in the handler, so one bad operation never sinks the rest. */

export const BatchBody = Type.Object({
  operations: Type.Optional(Type.Unknown({
    description: 'Array of 1-100 operations: {type: create, data: {content, title?, metadata?, tags?, memory_type?, valid_from?, valid_until?, supersedes?}} '
      + '| {type: read, id} | {type: update, id, data (valid_from, valid_until too)} | {type: delete, id} '
      + '| {type: search, query, options: {limit?, threshold?, filters?, as_of?, include_expired?}}. '
      + 'valid_from, valid_until, supersedes, as_of and include_expired are Mnemo extensions (docs/memory-lifecycle.md)',
  })),
  options: Type.Optional(Type.Unknown({
    description: 'continue_on_error (false), max_retries (0, at most 5), timeout (30000 ms, at most 60000), parallel (true), validate_only (false), atomic (false; beyond the spec: all writes in one transaction or none)',
  })),
});

export const BatchResponse = Type.Object({
  success: Type.Boolean(),
  data: Type.Object({
    batch_id: Type.String(),
    processed: Type.Integer({ description: 'operations that succeeded' }),
    failed: Type.Integer(),
    total: Type.Integer(),
    execution_time: Type.Number({ description: 'milliseconds' }),
    operations: Type.Array(Type.Object({}, { additionalProperties: true })),
    summary: Type.Object({ creates: Type.Integer(), reads: Type.Integer(), updates: Type.Integer(), deletes: Type.Integer(), searches: Type.Integer() }),
  }),
});

export const ErrorWire = Type.Object({
  success: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String(), details: Type.Object({}, { additionalProperties: true }), request_id: Type.String() }),
});
