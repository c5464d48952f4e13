import { retryDelayMs } from './mnemo-error.ts';

export interface RetryOptions {
  /** How many times a request refused with 429 is sent again (default 2; 0 never). */
  maxRetries?: number;
  /** The longest wait the client accepts before a retry (default 30 s): a longer one answers the 429 at once. */
  maxDelayMs?: number;
}

export type FetchFunction = (input: Request) => Promise<Response>;

const DEFAULT_WAIT_MS = 1000;

/**
 * A fetch that sends a request again when Mnemo answers 429, after the wait the answer names (Retry-After or
 * X-RateLimit-Reset), at most `maxRetries` times and never waiting longer than `maxDelayMs`: a refused request did
 * nothing, so sending it again is safe for every method. Any other answer is returned as it is.
 */
export function retryingFetch(send: FetchFunction, options: RetryOptions = {}): FetchFunction {
  const maxRetries = options.maxRetries ?? 2;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      // Each attempt gets its own copy: a body stream can be read once.
      const response = await send(attempt < maxRetries ? request.clone() : request);
      if (response.status !== 429 || attempt >= maxRetries) return response;
      const wait = retryDelayMs(response.headers, Date.now()) ?? DEFAULT_WAIT_MS;
      if (wait > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
