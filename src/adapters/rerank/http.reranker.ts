import { RerankError, type RerankFailure, type Reranker } from '../../core/search/reranker.port.ts';
import { endpointUrl, providerMessage } from '../http/provider-http.ts';

export interface HttpRerankerOptions {
  /**
   * The server's base URL (`http://tei:8080`, `https://api.cohere.com/v2`, `https://api.jina.ai/v1`,
   * `http://llama:8080/v1`): `/rerank` is appended unless the URL already ends in it.
   */
  url: string;
  /** Sent as `model` (Cohere and Jina need one; TEI and llama.cpp serve the model they loaded); empty: not sent. */
  model?: string | undefined;
  /** Sent as `Authorization: Bearer`; never appears in an error message. */
  apiKey?: string | undefined;
  /** A request (both bodies, when the first is refused) not answered within this fails as `timeout`. */
  timeoutMs: number;
  fetchImpl?: typeof fetch;
}

/**
 * Which body the server takes: Cohere's and Jina's names the texts `documents` (llama.cpp takes it too), TEI's
 * names them `texts`. Unknown until the server first accepts one.
 */
type BodyShape = 'documents' | 'texts';

/**
 * Documents per request: TEI refuses more than its `--max-client-batch-size` (32 by default), so a longer list goes
 * as several requests at once. A cross-encoder scores each (query, document) pair alone, so the split changes no score.
 */
const MAX_DOCUMENTS_PER_REQUEST = 32;

/**
 * A cross-encoder behind a `/rerank` endpoint: Cohere (`/v2/rerank`), Jina (`/v1/rerank`), llama.cpp's server
 * (`/v1/rerank`, `/rerank`) and Hugging Face's text-embeddings-inference (TEI, `/rerank`).
 *
 * The request is Cohere's and Jina's body `{model, query, documents, top_n}`, which llama.cpp takes too. Cohere refuses
 * any field it does not know (422), so no single body serves every server; TEI requires `texts` and refuses a body
 * without it (422). So a server that refuses the first body with 400 or 422 before it has ever accepted one gets TEI's
 * body `{query, texts, raw_scores: false, truncate: true}` at once, and whichever body it accepts is used from then on.
 *
 * Every answer shape is understood whatever was sent: `{results: [{index, relevance_score}]}` (Cohere, Jina,
 * llama.cpp), `[{index, score}]` (TEI, and llama.cpp given `texts`), and `{data: [...]}` alike. Scores outside
 * [0, 1] are raw logits (llama.cpp answers them): once an answer holds one, every score of this
 * server is mapped through the logistic, now and later, so that one scale holds across queries. More than
 * MAX_DOCUMENTS_PER_REQUEST documents are sent as several requests at once.
 */
export function createHttpReranker(options: HttpRerankerOptions): Reranker {
  const { apiKey, timeoutMs, fetchImpl = fetch } = options;
  const model = options.model?.trim() ?? '';
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`invalid timeoutMs: ${timeoutMs}`);
  const endpoint = endpointUrl(options.url, 'rerank');
  const parsed = new URL(endpoint);
  // Where, in messages: no credentials or query a URL might carry.
  const where = `${parsed.origin}${parsed.pathname}`;
  const redact = (text: string): string => (apiKey ? text.split(apiKey).join('***') : text);
  let shape: BodyShape | undefined;
  let logits = false;

  const bodyOf = (as: BodyShape, query: string, documents: readonly string[]): string => JSON.stringify(as === 'documents'
    ? { ...(model ? { model } : {}), query, documents, top_n: documents.length }
    // truncate: TEI refuses a text longer than the model's window unless told to cut it.
    : { query, texts: documents, raw_scores: false, truncate: true });

  function post(body: string, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    return fetchImpl(endpoint, { method: 'POST', headers, body, signal });
  }

  async function failure(res: Response): Promise<string> {
    return `HTTP ${res.status} from ${where}: ${await providerMessage(res, redact)}`;
  }

  /** 429 and 5xx are the server's trouble; any other refusal is the request's (key, model, URL). */
  const kindOf = (status: number): RerankFailure => (status === 429 || status >= 500 ? 'unavailable' : 'refused');

  /** The JSON of the answer to whichever body the server takes. */
  async function exchange(query: string, documents: readonly string[], signal: AbortSignal): Promise<unknown> {
    const first = shape ?? 'documents';
    const res = await post(bodyOf(first, query, documents), signal);
    if (res.ok) {
      shape = first;
      return res.json();
    }
    if (shape !== undefined || (res.status !== 400 && res.status !== 422)) {
      throw new RerankError(`rerank request failed: ${await failure(res)}`, { kind: kindOf(res.status) });
    }
    const refusal = await failure(res);
    const retry = await post(bodyOf('texts', query, documents), signal);
    if (retry.ok) {
      shape = 'texts';
      return retry.json();
    }
    throw new RerankError(`rerank request failed: ${refusal}; with TEI's body: ${await failure(retry)}`, { kind: kindOf(retry.status) });
  }

  /** The raw scores of one request's documents, in their order. */
  function scoresOf(json: unknown, count: number): number[] {
    const bad = (why: string) => new RerankError(`rerank answer from ${where} ${why}`, { kind: 'bad_answer' });
    const wrapper = json as { results?: unknown; data?: unknown } | null;
    const items: unknown = Array.isArray(json) ? json : wrapper?.results ?? wrapper?.data;
    if (!Array.isArray(items)) throw bad('has no results array');
    const scores = new Array<number | undefined>(count);
    for (const item of items as ({ index?: unknown; relevance_score?: unknown; score?: unknown } | null)[]) {
      const index = item?.index;
      const score = item?.relevance_score ?? item?.score;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || scores[index] !== undefined) {
        throw bad(`has a bad or duplicate index: ${String(index)}`);
      }
      if (typeof score !== 'number' || !Number.isFinite(score)) throw bad(`has no finite score for document ${index}`);
      scores[index] = score;
    }
    const given = scores.filter((s) => s !== undefined).length;
    if (given !== count) throw bad(`scored ${given} of ${count} documents`);
    return scores as number[];
  }

  async function scoreAll(query: string, documents: readonly string[], signal: AbortSignal): Promise<number[]> {
    const parts: (readonly string[])[] = [];
    for (let from = 0; from < documents.length; from += MAX_DOCUMENTS_PER_REQUEST) parts.push(documents.slice(from, from + MAX_DOCUMENTS_PER_REQUEST));
    // One part failing ends the others: the whole answer is lost anyway.
    const sibling = new AbortController();
    const either = AbortSignal.any([signal, sibling.signal]);
    try {
      const scored = await Promise.all(parts.map(async (part) => scoresOf(await exchange(query, part, either), part.length)));
      return scored.flat();
    } catch (err) {
      sibling.abort();
      throw err;
    }
  }

  return {
    model,
    async rerank(query, documents, signal) {
      if (documents.length === 0) return [];
      signal?.throwIfAborted();
      const timeout = AbortSignal.timeout(timeoutMs);
      const either = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let raw: number[];
      try {
        raw = await scoreAll(query, documents, either);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (timeout.aborted) throw new RerankError(`no rerank answer from ${where} within ${timeoutMs} ms`, { kind: 'timeout', cause: err });
        if (err instanceof RerankError) throw err;
        // A refused connection, a reset, a body that is not JSON: nothing the request can fix.
        const message = redact(err instanceof Error ? err.message : String(err));
        throw new RerankError(`rerank request to ${where} failed: ${message}`, { kind: err instanceof SyntaxError ? 'bad_answer' : 'unavailable', cause: err });
      }
      if (raw.some((s) => s < 0 || s > 1)) logits = true;
      return raw.map((s, index) => ({ index, score: logits ? 1 / (1 + Math.exp(-s)) : s }));
    },
  };
}
