import type { CallToolResult } from '@modelcontextprotocol/server';
import { isDomainError, type DomainErrorCode } from '../core/errors.ts';
import { AUDIT_STATUS_OF } from '../core/operations/runner.ts';

/**
 * The code an MCP tool error carries for each domain error: G1's wire codes (the memory tools are G1's operations),
 * so a client that knows the REST API reads the same names. A code without a row does not compile.
 */
export const MCP_ERROR_CODES: Record<DomainErrorCode, string> = {
  VALIDATION_FAILED: 'VALIDATION_ERROR',
  NOT_FOUND: 'NOT_FOUND',
  AMBIGUOUS_ID: 'AMBIGUOUS_ID',
  CONTENT_TOO_LARGE: 'CONTENT_TOO_LARGE',
  UNAUTHENTICATED: 'UNAUTHORIZED',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  RATE_LIMITED: 'RATE_LIMITED',
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  EMBEDDING_FAILED: 'SERVICE_UNAVAILABLE',
  TIMEOUT: 'SEARCH_TIMEOUT',
  CONFLICT: 'CONFLICT',
  OVERLOADED: 'SERVICE_UNAVAILABLE',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
};

/** The HTTP status the same refusal has on the REST surfaces: what `/mcp` answers with, and what audit rows record. */
export const MCP_ERROR_STATUS: Record<DomainErrorCode, number> = AUDIT_STATUS_OF;

export interface McpErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** A domain error as a client reads it: code, message and the details worth acting on (fields, limits, reasons). */
export function errorBody(err: unknown): McpErrorBody {
  if (!isDomainError(err)) return { code: 'INTERNAL_ERROR', message: 'Internal error' };
  const { fields, limit, retryAfterMs, ...rest } = err.details;
  const details: Record<string, unknown> = { ...rest };
  if (fields) details.fields = fields.map((f) => ({ field: f.field, reason: f.reason, message: f.message }));
  if (limit) {
    details.limit = limit.limit;
    details.remaining = limit.remaining;
    details.resetAt = limit.resetAt.toISOString();
    details.retryAfterSeconds = Math.max(1, Math.ceil(limit.retryAfterMs / 1000));
  }
  if (retryAfterMs !== undefined) details.retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return { code: MCP_ERROR_CODES[err.code], message: err.message, ...(Object.keys(details).length > 0 ? { details } : {}) };
}

/** A tool's failure as an MCP tool error (`isError: true`): the session goes on, the model reads the reason. */
export function toolError(err: unknown): CallToolResult {
  const error = errorBody(err);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }], structuredContent: { error } };
}

/** A tool's answer: JSON text (what every client shows) and the same object as structured content. */
export function toolResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}
