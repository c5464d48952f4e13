import { DEFAULT_BATCH_TIMEOUT_MS, MAX_BATCH_OPERATIONS, MAX_BATCH_TIMEOUT_MS, type BatchOptions } from '../../core/batch/batch.types.ts';
import { BatchRequestError } from './errors.ts';

export const MAX_RETRIES = 5;

const bad = (field: string, message: string) =>
  new BatchRequestError(400, 'INVALID_BATCH_REQUEST', message, { field, reason: 'invalid_value' });

/** `operations` must be a non-empty array of at most 100: the spec's two request-level errors. */
export function checkOperations(raw: unknown): unknown[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new BatchRequestError(400, 'INVALID_BATCH_REQUEST', 'operations must be a non-empty array', { field: 'operations', reason: 'operations_array_required' });
  }
  if (raw.length > MAX_BATCH_OPERATIONS) {
    throw new BatchRequestError(413, 'BATCH_TOO_LARGE', `A batch may hold at most ${MAX_BATCH_OPERATIONS} operations`, { max_operations: MAX_BATCH_OPERATIONS, provided_operations: raw.length });
  }
  return raw;
}

export function parseOptions(raw: unknown): BatchOptions {
  if (raw === undefined || raw === null) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('options', 'options must be an object');
  const o = raw as Record<string, unknown>;
  const bool = (key: string, fallback: boolean) => {
    const v = o[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw bad(`options.${key}`, `options.${key} must be a boolean`);
    return v;
  };
  const int = (key: string, fallback: number, min: number, max: number) => {
    const v = o[key];
    if (v === undefined) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw bad(`options.${key}`, `options.${key} must be an integer from ${min} to ${max}`);
    return v;
  };
  return {
    continueOnError: bool('continue_on_error', false),
    maxRetries: int('max_retries', 0, 0, MAX_RETRIES),
    timeoutMs: int('timeout', DEFAULT_BATCH_TIMEOUT_MS, 1, MAX_BATCH_TIMEOUT_MS),
    parallel: bool('parallel', true),
    validateOnly: bool('validate_only', false),
    atomic: bool('atomic', false),
  };
}
