import type { FastifyError } from 'fastify';
import type { FieldProblem } from '../../core/errors.ts';
import { fieldProblemsFromValidation } from './validation.ts';

/**
 * What was wrong with a request before any route code ran, in protocol-neutral terms; each surface renders
 * these in its own envelope. Null: not a request problem (a real failure).
 */
export type RequestProblem =
  | { kind: 'validation'; fields: FieldProblem[]; message: string }
  /** `empty`: no body at all, rather than a body that is not JSON. */
  | { kind: 'malformed_json'; message: string; empty: boolean }
  | { kind: 'unsupported_media_type'; message: string }
  | { kind: 'payload_too_large'; message: string }
  | { kind: 'not_found'; message: string }
  /** The path exists under other methods (the not-found handler sets `Allow`). */
  | { kind: 'method_not_allowed'; message: string };

/** The code of the error the not-found handler raises for a known path asked with another method. */
export const METHOD_NOT_ALLOWED = 'MNEMO_METHOD_NOT_ALLOWED';

export function classifyRequestError(error: FastifyError): RequestProblem | null {
  if (error.validation) {
    const fields = fieldProblemsFromValidation(error.validation, error.validationContext === 'body' ? '' : '');
    return { kind: 'validation', fields, message: 'Request validation failed' };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { kind: 'payload_too_large', message: 'Request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { kind: 'unsupported_media_type', message: 'Content-Type must be application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { kind: 'malformed_json', message: 'Request body is empty; a JSON object is required', empty: true };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { kind: 'malformed_json', message: 'Request body is not valid JSON', empty: false };
    case 'FST_ERR_BAD_URL':
      return { kind: 'validation', message: 'The URL is not valid', fields: [{ field: 'path', reason: 'invalid_format', message: 'is not a valid URL component' }] };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { kind: 'validation', message: 'A path parameter is too long', fields: [{ field: 'path', reason: 'too_long', message: 'parameter is too long' }] };
    default:
      break;
  }
  // JSON.parse failures surface as a SyntaxError with statusCode 400.
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return { kind: 'malformed_json', message: 'Request body is not valid JSON', empty: false };
  }
  if (error.code === 'FST_ERR_NOT_FOUND') return { kind: 'not_found', message: error.message };
  if (error.code === METHOD_NOT_ALLOWED) return { kind: 'method_not_allowed', message: error.message };
  if (error.statusCode === 415) return { kind: 'unsupported_media_type', message: error.message };
  if (error.statusCode === 413) return { kind: 'payload_too_large', message: 'Request body is too large' };
  return null;
}
