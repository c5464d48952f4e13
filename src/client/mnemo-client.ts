import createClient from 'openapi-fetch';
import { openEventStream, type EventStreamOptions } from './event-stream.ts';
import { mnemoErrorOf } from './mnemo-error.ts';
import type { paths } from './openapi-types.ts';
import { retryingFetch, type FetchFunction, type RetryOptions } from './retrying-fetch.ts';

export interface MnemoClientOptions {
  /** Where Mnemo listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A Mnemo API key (`mnemo_live_…` / `mnemo_test_…`), sent as `X-API-Key`. */
  apiKey: string;
  /** The workspace every call acts in (`X-Workspace-ID`; default: the server's `default`). */
  workspace?: string;
  /** The fetch to send requests with (default: the global one). */
  fetch?: FetchFunction;
  /** Retries of 429 answers; `false` turns them off. */
  retry?: RetryOptions | false;
}

/** The JSON body an operation takes. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The query parameters an operation takes. */
export type QueryOf<P extends keyof paths, M extends keyof paths[P]> =
  paths[P][M] extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type Outcome<T> = { data?: T; error?: unknown; response: Response };

/** The answer's body, or the MnemoError of the surface's refusal. */
async function answer<T>(call: Promise<Outcome<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw mnemoErrorOf(response, error);
  return data as T;
}

/**
 * Mnemo's first-party TypeScript client, typed from the OpenAPI document (src/client/openapi-types.ts). Each group
 * calls one surface: memories and their lifecycle on G1 (hybrid search on G3), batches on G6, embeddings on G5,
 * secrets, API keys and MCP approvals on G11, webhooks on G9, the event stream on G8. A refusal throws MnemoError;
 * 429 answers are retried after the wait they name (bounded).
 */
export function createMnemoClient(options: MnemoClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const fetch = options.retry === false ? send : retryingFetch(send, options.retry);
  const headers: Record<string, string> = { 'x-api-key': options.apiKey };
  if (options.workspace !== undefined) headers['x-workspace-id'] = options.workspace;
  const api = createClient<paths>({ baseUrl, fetch, headers });

  const memories = {
    create: (body: RequestBody<'/api/v1/memories', 'post'>) => answer(api.POST('/api/v1/memories', { body })),
    get: (id: string) => answer(api.GET('/api/v1/memories/{id}', { params: { path: { id } } })),
    update: (id: string, body: RequestBody<'/api/v1/memories/{id}', 'put'>) =>
      answer(api.PUT('/api/v1/memories/{id}', { params: { path: { id } }, body })),
    delete: (id: string) => answer(api.DELETE('/api/v1/memories/{id}', { params: { path: { id } } })),
    list: (query: QueryOf<'/api/v1/memories', 'get'> = {}) => answer(api.GET('/api/v1/memories', { params: { query } })),
    /** Semantic search (G1). */
    search: (body: RequestBody<'/api/v1/memories/search', 'post'>) => answer(api.POST('/api/v1/memories/search', { body })),
    /** Semantic and keyword search fused (G3 `/hybrid`). */
    hybrid: (body: RequestBody<'/api/v1/search/hybrid', 'post'>) => answer(api.POST('/api/v1/search/hybrid', { body })),
    similar: (id: string, query: QueryOf<'/api/v1/memories/{id}/similar', 'get'> = {}) =>
      answer(api.GET('/api/v1/memories/{id}/similar', { params: { path: { id }, query } })),
    /** Earlier versions, the tombstone of a deleted memory and the supersession chain (docs/memory-lifecycle.md). */
    history: (id: string, query: QueryOf<'/api/v1/memories/{id}/history', 'get'> = {}) =>
      answer(api.GET('/api/v1/memories/{id}/history', { params: { path: { id }, query } })),
    /** Marks `id` replaced by `by`: it stops holding where `by` starts. */
    supersede: (id: string, by: string) =>
      answer(api.POST('/api/v1/memories/{id}/supersede', { params: { path: { id } }, body: { by } })),
    /** Forgets every memory a filter matches (needs `memories:forget`). */
    forget: (body: RequestBody<'/api/v1/memories/forget', 'post'>) => answer(api.POST('/api/v1/memories/forget', { body })),
  };

  const secrets = {
    create: (body: RequestBody<'/v1/security/secrets', 'post'>) => answer(api.POST('/v1/security/secrets', { body })),
    list: (query: QueryOf<'/v1/security/secrets', 'get'> = {}) => answer(api.GET('/v1/security/secrets', { params: { query } })),
    get: (name: string, query: QueryOf<'/v1/security/secrets/{name}', 'get'> = {}) =>
      answer(api.GET('/v1/security/secrets/{name}', { params: { path: { name }, query } })),
    update: (name: string, body: RequestBody<'/v1/security/secrets/{name}', 'put'>) =>
      answer(api.PUT('/v1/security/secrets/{name}', { params: { path: { name } }, body })),
    delete: (name: string) => answer(api.DELETE('/v1/security/secrets/{name}', { params: { path: { name } } })),
  };

  const apiKeys = {
    create: (body: RequestBody<'/v1/security/api-keys', 'post'>) => answer(api.POST('/v1/security/api-keys', { body })),
    list: (query: QueryOf<'/v1/security/api-keys', 'get'> = {}) => answer(api.GET('/v1/security/api-keys', { params: { query } })),
    get: (id: string) => answer(api.GET('/v1/security/api-keys/{id}', { params: { path: { id } } })),
    update: (id: string, body: RequestBody<'/v1/security/api-keys/{id}', 'put'>) =>
      answer(api.PUT('/v1/security/api-keys/{id}', { params: { path: { id } }, body })),
    revoke: (id: string) => answer(api.DELETE('/v1/security/api-keys/{id}', { params: { path: { id } } })),
    rotate: (id: string, body: RequestBody<'/v1/security/api-keys/{id}/rotate', 'post'> = {}) =>
      answer(api.POST('/v1/security/api-keys/{id}/rotate', { params: { path: { id } }, body })),
  };

  const mcp = {
    registerResource: (body: RequestBody<'/v1/security/mcp/resources', 'post'>) =>
      answer(api.POST('/v1/security/mcp/resources', { body })),
    listResources: (query: QueryOf<'/v1/security/mcp/resources', 'get'> = {}) =>
      answer(api.GET('/v1/security/mcp/resources', { params: { query } })),
    /** Reads a value through its access path; `accessToken` is an approval's token where approval is required. */
    readResource: (uri: string, accessToken?: string) => answer(api.GET('/v1/security/mcp/resources/{uri}', {
      params: { path: { uri } }, ...(accessToken === undefined ? {} : { headers: { 'x-mcp-access-token': accessToken } }),
    })),
    requestApproval: (body: RequestBody<'/v1/security/mcp/approve', 'post'>) => answer(api.POST('/v1/security/mcp/approve', { body })),
    listApprovals: (query: QueryOf<'/v1/security/mcp/approvals', 'get'> = {}) =>
      answer(api.GET('/v1/security/mcp/approvals', { params: { query } })),
    getApproval: (id: string) => answer(api.GET('/v1/security/mcp/approvals/{id}', { params: { path: { id } } })),
    respond: (id: string, body: RequestBody<'/v1/security/mcp/approvals/{id}/respond', 'post'>) =>
      answer(api.POST('/v1/security/mcp/approvals/{id}/respond', { params: { path: { id } }, body })),
  };

  /** Webhooks for memory events in this workspace (G9); verify deliveries with verifyMemoryEventSignature. */
  const webhooks = {
    create: (body: RequestBody<'/api/v1/webhooks', 'post'>) => answer(api.POST('/api/v1/webhooks', { body })),
    list: (query: QueryOf<'/api/v1/webhooks', 'get'> = {}) => answer(api.GET('/api/v1/webhooks', { params: { query } })),
    get: (id: string) => answer(api.GET('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } })),
    update: (id: string, body: RequestBody<'/api/v1/webhooks/{webhook_id}', 'put'>) =>
      answer(api.PUT('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body })),
    delete: (id: string) => answer(api.DELETE('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } })),
  };

  return {
    memories,
    /** Up to 100 operations in one request (G6); the answer has one result per operation, in order. */
    batch: (body: RequestBody<'/api/v1/batch', 'post'>) => answer(api.POST('/api/v1/batch', { body })),
    embeddings: {
      create: (body: RequestBody<'/api/v1/embeddings', 'post'>) => answer(api.POST('/api/v1/embeddings', { body })),
    },
    secrets,
    apiKeys,
    mcp,
    webhooks,
    events: {
      /** The G8 event stream, open once awaited, resumed with Last-Event-ID whenever the connection drops. */
      stream: (streamOptions: EventStreamOptions = {}) =>
        openEventStream(fetch, new URL(`${baseUrl}/api/v1/stream`), new Headers(headers), streamOptions),
    },
    /** The same client acting in another workspace. */
    withWorkspace: (workspace: string) => createMnemoClient({ ...options, workspace }),
  };
}

export type MnemoClient = ReturnType<typeof createMnemoClient>;
