import { EmbeddingError, isBlank, type Embedder } from '../../core/embeddings/embedder.port.ts';
import { endpointUrl, parseRetryAfter, providerMessage, retryDelayMs, sleepMs } from '../http/provider-http.ts';

export interface OpenAiEmbedderOptions {
  /** Base URL such as `https://api.openai.com/v1`; a URL already ending in `/embeddings` is used as is. */
  url: string;
  model: string;
  apiKey?: string;
  /** Requested output width (for models that can shorten their vectors); also the width every answer must have. */
  dimensions?: number;
  /** Retries after the first attempt, for 429, 5xx, timeouts and network errors. */
  maxRetries?: number;
  timeoutMs?: number;
  batchSize?: number;
  fetchImpl?: typeof fetch;
  /** Injected by tests so that backoff does not really wait. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Before the first answer an unconfigured width is unknown; 1536 is the width of OpenAI's text-embedding-3-small and
 * ada-002, the usual models behind this adapter. The first successful answer replaces it with the real width.
 */
const DEFAULT_OPENAI_DIMENSIONS = 1536;

type Attempt =
  | { ok: true; json: unknown }
  | { ok: false; failure: string; retryAfterMs?: number | undefined; cause?: unknown };

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const {
    model, apiKey, maxRetries = 3, timeoutMs = 30_000, batchSize = 96, fetchImpl = fetch, sleep = sleepMs,
  } = options;
  const configured = options.dimensions;
  if (configured !== undefined && (!Number.isInteger(configured) || configured < 1)) {
    throw new RangeError(`invalid dimensions: ${configured}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`invalid batchSize: ${batchSize}`);
  const endpoint = endpointUrl(options.url, 'embeddings');
  // Voyage AI speaks the same wire format except for two fields: it names the width `output_dimension` and rejects
  // `encoding_format: "float"` (its encoding_format only accepts "base64"/null; floats are its default anyway).
  const voyage = new URL(endpoint).hostname.includes('voyageai');
  let learned: number | undefined;
  const width = (): number => configured ?? learned ?? DEFAULT_OPENAI_DIMENSIONS;

  function requestBody(input: string[]): string {
    const body: Record<string, unknown> = { model, input };
    if (voyage) {
      if (configured !== undefined) body.output_dimension = configured;
    } else {
      body.encoding_format = 'float';
      if (configured !== undefined) body.dimensions = configured;
    }
    return JSON.stringify(body);
  }

  /** POSTs one batch, retrying transient failures; returns the parsed JSON of a 2xx answer. */
  async function post(input: string[]): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const init = { method: 'POST', headers, body: requestBody(input) };
    for (let attempt = 0; ; attempt++) {
      const outcome = await attemptOnce(init);
      if (outcome.ok) return outcome.json;
      if (attempt >= maxRetries) {
        throw new EmbeddingError(`embedding request failed after ${attempt + 1} attempts: ${outcome.failure}`, {
          cause: outcome.cause,
        });
      }
      await sleep(retryDelayMs(attempt, outcome.retryAfterMs));
    }
  }

  /** One round trip. Throws for answers a retry cannot fix; reports transient failures instead of throwing. */
  async function attemptOnce(init: RequestInit): Promise<Attempt> {
    try {
      const res = await fetchImpl(endpoint, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      if (res.ok) return { ok: true, json: await res.json() };
      const failure = `HTTP ${res.status} from ${endpoint}: ${await providerMessage(res)}`;
      if (res.status !== 429 && res.status < 500) throw new EmbeddingError(`embedding request failed: ${failure}`);
      return { ok: false, failure, retryAfterMs: parseRetryAfter(res.headers.get('retry-after')) };
    } catch (err) {
      if (err instanceof EmbeddingError) throw err;
      // Network errors, timeouts and cut-off bodies are transient as far as we can tell.
      return { ok: false, failure: `${endpoint}: ${err instanceof Error ? err.message : String(err)}`, cause: err };
    }
  }

  async function embedBatch(input: string[]): Promise<Float32Array[]> {
    const vectors = parseEmbeddings(await post(input), input.length);
    const expected = configured ?? learned ?? vectors[0]!.length;
    for (const v of vectors) {
      if (v.length !== expected) {
        throw new EmbeddingError(`${model} answered with the wrong width: expected ${expected} dimensions, got ${v.length}`);
      }
    }
    learned ??= expected;
    return vectors;
  }

  return {
    modelId: configured === undefined ? `openai:${model}` : `openai:${model}@${configured}`,
    get dimensions() {
      return width();
    },
    async embed(texts) {
      const slots = texts.flatMap((text, i) => (isBlank(text) ? [] : [i]));
      const out = new Array<Float32Array | undefined>(texts.length);
      // Batches go one after another: parallel requests would mostly buy 429s from rate-limited providers.
      for (let start = 0; start < slots.length; start += batchSize) {
        const batch = slots.slice(start, start + batchSize);
        const vectors = await embedBatch(batch.map((i) => texts[i]!));
        batch.forEach((slot, k) => (out[slot] = vectors[k]));
      }
      return Array.from(out, (v) => v ?? new Float32Array(width()));
    },
    close: async () => {},
  };
}

/** Validates `{ data: [{ index, embedding }] }` and returns the vectors in input order. */
function parseEmbeddings(json: unknown, count: number): Float32Array[] {
  const data = (json as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new EmbeddingError('embedding answer has no data array');
  if (data.length !== count) throw new EmbeddingError(`embedding answer has the wrong item count: expected ${count}, got ${data.length}`);
  const out = new Array<Float32Array | undefined>(count);
  data.forEach((item: { index?: unknown; embedding?: unknown } | null, position) => {
    // `index` is optional in some compatible servers; without it the array order is the input order.
    const index = item?.index ?? position;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || out[index]) {
      throw new EmbeddingError(`embedding answer has a bad or duplicate index: ${String(index)}`);
    }
    const embedding: unknown = item?.embedding;
    if (!Array.isArray(embedding)) throw new EmbeddingError(`embedding answer item ${index} has no float array`);
    // Checked after the float32 conversion too: a finite double beyond float32 range becomes Infinity.
    const v = embedding.every((x) => typeof x === 'number') ? Float32Array.from(embedding as number[]) : undefined;
    if (!v?.every(Number.isFinite)) throw new EmbeddingError(`embedding answer item ${index} contains non-finite numbers`);
    out[index] = v;
  });
  return out as Float32Array[];
}
