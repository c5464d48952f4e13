import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A reranking server on loopback speaking one real provider's `/rerank` protocol, as far as Mnemo's adapter meets it:
 *
 * - `cohere` (`POST /v2/rerank`): `{model, query, documents, top_n?}`, `model` required, any other field refused with
 *   422 as Cohere's API does; answers `{id, results: [{index, relevance_score}], meta}`, best first.
 * - `jina` (`POST /v1/rerank`): the same body (other fields ignored); answers `{model, usage, results: [{index,
 *   document: {text}, relevance_score}]}`, best first.
 * - `tei` (text-embeddings-inference, `POST /rerank`): `{query, texts, raw_scores?, truncate?}`, other fields ignored, a
 *   body without `texts` refused with 422 as axum's JSON extractor does; answers `[{index, score}]`, best first, the
 *   logits with `raw_scores: true`.
 * - `llamacpp` (`POST /rerank`, `/v1/rerank`, `/v1/reranking`): `documents` or `texts`; answers raw logits (its
 *   ranking pooling's output), as `{model, object, usage, results: [{index, relevance_score}]}`, or in TEI's shape when
 *   the body has `texts`.
 *
 * Tests steer it: the relevance (0..1) of each document for a query, a delay, failures, a required key.
 */
export type RerankFlavour = 'cohere' | 'jina' | 'tei' | 'llamacpp';

export interface RerankRequestSeen {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface MockRerankServer {
  /** Base URL to give MNEMO_RERANK_URL (`/rerank` is appended by the adapter): `/v2`, `/v1` or the root. */
  url: string;
  /** Every request received, answered or not. */
  readonly requests: RerankRequestSeen[];
  /** The probability each document is relevant to the query (default: the share of the query's words it holds). */
  setRelevance(relevance: (query: string, document: string) => number): void;
  /** Answers after this many milliseconds (0: at once). */
  setDelay(ms: number): void;
  /** Answers the next `n` requests with `status` and an error body. */
  failNext(n: number, status?: number): void;
  /** Requests without `Authorization: Bearer <key>` get 401 (undefined: no key needed). */
  requireKey(key: string | undefined): void;
  close(): Promise<void>;
}

const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** The share of the query's words the document holds: a crude relevance, steady enough to test an order. */
export const wordOverlap = (query: string, document: string): number => {
  const q = new Set(words(query));
  if (q.size === 0) return 0;
  const d = new Set(words(document));
  return [...q].filter((w) => d.has(w)).length / q.size;
};

const logit = (p: number): number => {
  const c = Math.min(1 - 1e-6, Math.max(1e-6, p));
  return Math.log(c / (1 - c));
};

const PATHS: Record<RerankFlavour, readonly string[]> = {
  cohere: ['/v2/rerank'], jina: ['/v1/rerank'], tei: ['/rerank'], llamacpp: ['/rerank', '/v1/rerank', '/v1/reranking'],
};
const BASES: Record<RerankFlavour, string> = { cohere: '/v2', jina: '/v1', tei: '', llamacpp: '/v1' };
const COHERE_FIELDS = new Set(['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc']);

export async function startMockRerankServer(flavour: RerankFlavour): Promise<MockRerankServer> {
  const requests: RerankRequestSeen[] = [];
  let relevance = wordOverlap;
  let delay = 0;
  let failures = 0;
  let failStatus = 500;
  let key: string | undefined;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  /** Each provider's error envelope. */
  const refuse = (res: ServerResponse, status: number, message: string) => send(res, status,
    flavour === 'tei' ? { error: message, error_type: 'Validation' }
      : flavour === 'llamacpp' ? { error: { code: status, message, type: 'invalid_request_error' } }
        : flavour === 'cohere' ? { id: 'req-1', message } : { detail: message });

  /** Ranked best first, cut to top_n when asked: every provider answers so. */
  const ranked = (query: string, documents: readonly string[], topN: unknown) => {
    const all = documents.map((text, index) => ({ index, p: relevance(query, text) })).sort((a, b) => b.p - a.p || a.index - b.index);
    return typeof topN === 'number' && topN > 0 ? all.slice(0, topN) : all;
  };

  function answer(body: Record<string, unknown>, res: ServerResponse): void {
    const query = body.query;
    if (typeof query !== 'string') return refuse(res, 422, 'missing field `query`');
    const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
    switch (flavour) {
      case 'cohere': {
        const unknown = Object.keys(body).find((k) => !COHERE_FIELDS.has(k));
        if (unknown) return refuse(res, 422, `unknown field: parameter '${unknown}' is not a valid field. For proper usage, please refer to https://docs.cohere.com/reference/rerank`);
        if (typeof body.model !== 'string') return refuse(res, 400, 'invalid request: model must be specified');
        if (!stringList(body.documents)) return refuse(res, 400, 'invalid request: documents must be a list of strings');
        return send(res, 200, {
          id: 'rerank-1', results: ranked(query, body.documents, body.top_n).map((r) => ({ index: r.index, relevance_score: r.p })),
          meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
        });
      }
      case 'jina': {
        if (typeof body.model !== 'string') return refuse(res, 422, 'model: field required');
        if (!stringList(body.documents)) return refuse(res, 422, 'documents: field required');
        const documents = body.documents;
        return send(res, 200, {
          model: body.model, usage: { total_tokens: 10 },
          results: ranked(query, documents, body.top_n).map((r) => ({ index: r.index, document: { text: documents[r.index] }, relevance_score: r.p })),
        });
      }
      case 'tei': {
        if (!stringList(body.texts)) {
          return refuse(res, 422, 'Failed to deserialize the JSON body into the target type: missing field `texts` at line 1 column 80');
        }
        return send(res, 200, ranked(query, body.texts, undefined).map((r) => ({ index: r.index, score: body.raw_scores === true ? logit(r.p) : r.p })));
      }
      case 'llamacpp': {
        const tei = 'texts' in body;
        const documents = stringList(body.documents) ? body.documents : stringList(body.texts) ? body.texts : null;
        if (!documents || documents.length === 0) return refuse(res, 400, '"documents" must be a non-empty string array');
        const ranks = ranked(query, documents, body.top_n);
        if (tei) return send(res, 200, ranks.map((r) => ({ index: r.index, score: logit(r.p) })));
        return send(res, 200, {
          model: 'jina-reranker-v1-tiny-en', object: 'list', usage: { prompt_tokens: 10, total_tokens: 10 },
          results: ranks.map((r) => ({ index: r.index, relevance_score: logit(r.p) })),
        });
      }
    }
  }

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => { raw += c.toString('utf8'); });
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        body = {};
      }
      requests.push({ url: req.url ?? '', headers: req.headers, body });
      const respond = () => {
        if (req.method !== 'POST' || !PATHS[flavour].includes(req.url ?? '')) return refuse(res, 404, `no route ${req.method} ${req.url}`);
        if (key !== undefined && req.headers.authorization !== `Bearer ${key}`) return refuse(res, 401, 'invalid api token');
        if (failures > 0) {
          failures--;
          return refuse(res, failStatus, 'the model is overloaded');
        }
        answer(body, res);
      };
      if (delay > 0) setTimeout(respond, delay);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${BASES[flavour]}`,
    requests,
    setRelevance: (r) => { relevance = r; },
    setDelay: (ms) => { delay = ms; },
    failNext: (n, status = 500) => { failures = n; failStatus = status; },
    requireKey: (k) => { key = k; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
