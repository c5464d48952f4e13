/**
 * The one error the TypeScript client throws for an answer Mnemo refused (any surface, any envelope) and for an
 * `error` frame that ends an event stream.
 */
export class MnemoError extends Error {
  override readonly name = 'MnemoError';
  /** The surface's wire code (`VALIDATION_ERROR`, `MEMORY_NOT_FOUND`, `RATE_LIMIT_EXCEEDED`, …). */
  readonly code: string;
  /** The HTTP status; 0 for an error frame of an open stream. */
  readonly status: number;
  /** The answer's `X-Request-Id` (or the body's `request_id`), for the server's logs. */
  readonly requestId: string | undefined;
  /** The envelope's `details` as sent (a list of `{field, message}` on most surfaces, an object on G5, G6 and G11). */
  readonly details: unknown;
  /** How long the server asked to wait before trying again (`Retry-After`, or a stream frame's `retry_after`). */
  readonly retryAfterMs: number | undefined;

  constructor(init: { code: string; message: string; status: number; requestId?: string; details?: unknown; retryAfterMs?: number }) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
    this.retryAfterMs = init.retryAfterMs;
  }
}

type Envelope = { error?: unknown; code?: unknown; message?: unknown; details?: unknown; request_id?: unknown };

/**
 * Reads a refused answer's body, whichever surface's envelope it has: `{error: {code, message, details,
 * request_id}}` (G1, G3, G5, G6, G8, G9, G11, with or without `success`), G2's `{error: "CODE", message}`, or a
 * bare `{code, message}`.
 */
export function mnemoErrorOf(response: Response, body: unknown): MnemoError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as Envelope;
  const inner = (typeof envelope.error === 'object' && envelope.error !== null ? envelope.error : envelope) as Envelope;
  const code = typeof inner.code === 'string' ? inner.code : typeof envelope.error === 'string' ? envelope.error : `HTTP_${response.status}`;
  const message = typeof inner.message === 'string' ? inner.message
    : typeof envelope.message === 'string' ? envelope.message
      : typeof body === 'string' && body ? body : `${response.status} ${response.statusText}`.trim();
  const requestId = response.headers.get('x-request-id') ?? (typeof inner.request_id === 'string' ? inner.request_id : undefined);
  return new MnemoError({
    code, message, status: response.status, requestId, details: inner.details ?? envelope.details,
    retryAfterMs: retryDelayMs(response.headers, Date.now()),
  });
}

/**
 * The wait a 429 (or 503) asks for: `Retry-After` in seconds or as an HTTP date, else the end of the rate-limit
 * window (`X-RateLimit-Reset`, Unix seconds); undefined when neither is there.
 */
export function retryDelayMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const reset = headers.get('x-ratelimit-reset')?.trim();
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now);
  return undefined;
}
