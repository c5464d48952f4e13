import { setTimeout as delay } from 'node:timers/promises';

/**
 * What the adapters that call an OpenAI-compatible provider over HTTP (embeddings, chat completions) share: where
 * the endpoint is, how long to wait before a retry, and the provider's own words when it refuses.
 */

/** First backoff delay; each further retry doubles it. */
export const RETRY_BASE_MS = 500;
/** No wait is longer, whatever a provider's `Retry-After` asks: a job would rather fail and be retried later. */
export const RETRY_CAP_MS = 20_000;
const MAX_ERROR_TEXT = 500;

/** `base` joined with `path`, unless the configured URL already names that endpoint (then used as is). */
export function endpointUrl(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith(`/${path}`) ? trimmed : `${trimmed}/${path}`;
}

/** The wait before retry number `attempt + 1`: the provider's `Retry-After` when given, else exponential; capped. */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined): number {
  return Math.min(RETRY_CAP_MS, retryAfterMs ?? RETRY_BASE_MS * 2 ** attempt);
}

/** The default backoff wait; a signal ends it early (rejecting), so an aborted caller leaves no timer behind. */
export const sleepMs = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : undefined);

/**
 * The provider's own words: OpenAI's `{ error: { message } }`, `{ error: "..." }`, Voyage's `{ detail }`, or text.
 * `redact` runs on the whole body before it is cut short, so a secret the provider echoes cannot survive half-cut.
 */
export async function providerMessage(res: Response, redact: (text: string) => string = (text) => text): Promise<string> {
  const text = redact(await res.text().catch(() => ''));
  try {
    const json = JSON.parse(text) as { error?: { message?: unknown } | string; detail?: unknown; message?: unknown };
    const message = typeof json.error === 'string' ? json.error : json.error?.message ?? json.detail ?? json.message;
    if (typeof message === 'string' && message) return message.slice(0, MAX_ERROR_TEXT);
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, MAX_ERROR_TEXT) || res.statusText || 'no error message';
}

/** `Retry-After` in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
