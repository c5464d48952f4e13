import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { toWebRequest as ToWebRequest } from '@modelcontextprotocol/node';
import { createMcpHandler, getOAuthProtectedResourceMetadataUrl, localhostAllowedOrigins, validateOriginHeader, type AuthInfo } from '@modelcontextprotocol/server';
import type { Principal } from '../core/api-keys/api-key.types.ts';
import { DomainError, isDomainError } from '../core/errors.ts';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../core/json-limits.ts';
import type { OAuthService } from '../core/oauth/oauth.service.ts';
import { ACCESS_TOKEN_PREFIX } from '../core/oauth/oauth.rules.ts';
import type { createMnemoMcpServer as CreateMnemoMcpServer, McpServerDeps } from '../mcp/mcp-server.ts';
import type { McpSession } from '../mcp/session.ts';
import { errorBody, MCP_ERROR_STATUS } from '../mcp/tool-errors.ts';
import { MISSING_CREDENTIAL_MESSAGE, readCredential, retryAfterSeconds, setRateLimitHeaders, type AuthDeps } from '../surfaces/http-kit/auth.ts';
import { workspaceOf } from '../surfaces/http-kit/workspace.ts';
import { classifyRequestError } from '../surfaces/http-kit/request-problems.ts';

/** Where the MCP server answers over Streamable HTTP. */
export const MCP_PATH = '/mcp';

/** The MCP session rides to the per-request server factory in AuthInfo.extra (the SDK passes it through untouched). */
const SESSION_KEY = 'mnemoSession';

/**
 * How deep a JSON-RPC body may nest: the deepest legitimate one, a batch of tools/call whose arguments carry metadata
 * of MAX_JSON_DEPTH levels, nests 20, and the SDK's request conversion re-serializes bodies recursively (8,000 levels
 * overflowed the stack).
 */
export const MAX_MCP_MESSAGE_DEPTH = MAX_JSON_DEPTH + 16;

/**
 * What serving an MCP request needs beyond the routes: the tools and resources (src/mcp) and the SDK's Node request
 * conversion, imported on the first request to /mcp rather than at start (a twentieth of a server's start-up CPU).
 */
let serving: Promise<{ toWebRequest: typeof ToWebRequest; createMnemoMcpServer: typeof CreateMnemoMcpServer }> | undefined;
const mcpServing = () => (serving ??= Promise.all([import('@modelcontextprotocol/node'), import('../mcp/mcp-server.ts')])
  .then(([{ toWebRequest }, { createMnemoMcpServer }]) => ({ toWebRequest, createMnemoMcpServer })));

/** What the SDK reports while it answers one request, held until the answer's status says whose mistake it was. */
interface Reports { errors: Error[]; answered: boolean }

/** JSON-RPC's codes for a body that is not JSON, and for one that is not a request the server will read. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * The MCP server over Streamable HTTP at `/mcp`, stateless: every HTTP request is served by a fresh MCP server
 * instance bound to that request's key (the SDK's per-request serving of the 2026-07-28 revision, and its stateless
 * fallback for 2025-era clients). The key (`Authorization: Bearer`, or `X-API-Key`) is authenticated and counted
 * against the gateway limit before any MCP processing: a missing or invalid key is a 401 with
 * `WWW-Authenticate: Bearer`, an exhausted limit a 429 with Retry-After, a bad `X-Workspace-ID` a 400, all as a
 * JSON-RPC error body (`id: null`) whose `error.data` holds Mnemo's code. An OAuth access token (docs/oauth.md) is
 * accepted in place of a key: it acts as its granting key with the granted scopes, in the granted workspace only; the
 * 401's challenge names the protected-resource metadata (RFC 9728) so that MCP clients can start the OAuth flow.
 */
export const mcpHttpRoutes: FastifyPluginAsync<{
  auth: AuthDeps; mcp: McpServerDeps; version: string;
  /** Access tokens of Mnemo's OAuth server, and the resource they are for (`<public base>/mcp`). */
  oauth: Pick<OAuthService, 'authenticate' | 'settings'>;
  /** Origin hostnames allowed besides loopback names (MNEMO_MCP_ALLOWED_ORIGINS and the dashboard's host); `*`: any. */
  allowedOrigins: readonly string[] | '*';
}> = async (app, deps) => {
  const allowedOrigins = deps.allowedOrigins === '*' ? '*' : [...new Set([...localhostAllowedOrigins(), ...deps.allowedOrigins])];
  const reporting = new AsyncLocalStorage<Reports>();
  let loaded: Awaited<ReturnType<typeof mcpServing>> | undefined;
  const handler = createMcpHandler((ctx) => {
    const session = ctx.authInfo?.extra?.[SESSION_KEY] as McpSession | undefined;
    // The route always passes one; without it nothing may be served.
    if (!session) throw new Error('MCP request without a session');
    // Loaded before the route calls handler.fetch (below).
    return loaded!.createMnemoMcpServer(deps.mcp, session, { version: deps.version });
  }, {
    onerror: (err) => {
      const reports = reporting.getStore();
      if (reports && !reports.answered) reports.errors.push(err);
      else app.log.warn({ err }, 'MCP request failed');
    },
  });
  app.addHook('onClose', async () => { await handler.close(); });

  const challenge = `Bearer realm="mnemo", resource_metadata="${getOAuthProtectedResourceMetadataUrl(new URL(deps.oauth.settings.resource))}"`;
  app.setErrorHandler((error: FastifyError, req, reply) => mcpErrorHandler(error, req, reply, challenge));

  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    schema: { hide: true },
    handler: async (req, reply) => {
      // DNS rebinding: a page on another site that resolves its own name to this server must not drive it from a
      // browser (the MCP transport's rule). Checked before the key: the refusal says nothing about the key.
      if (allowedOrigins !== '*') {
        const origin = validateOriginHeader(req.headers.origin, allowedOrigins);
        if (!origin.ok) throw new DomainError('PERMISSION_DENIED', `Origin not allowed: ${origin.message}`, { reason: 'origin_not_allowed' });
      }
      const { principal, workspaceOnly } = await authenticate(deps.auth, deps.oauth, req, reply);
      const named = workspaceOf(req);
      if (!named.ok) throw new DomainError('VALIDATION_FAILED', 'Invalid workspace id', { fields: [named.problem] });
      if (workspaceOnly !== undefined && req.headers['x-workspace-id'] !== undefined && named.workspace !== workspaceOnly) {
        throw new DomainError('PERMISSION_DENIED', `This access token is for workspace ${workspaceOnly} only`);
      }
      if (exceedsJsonDepth(req.body, MAX_MCP_MESSAGE_DEPTH)) {
        throw new DomainError('VALIDATION_FAILED', `The JSON-RPC message nests deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`, {
          reason: 'too_deep', fields: [{ field: 'body', reason: 'too_deep', message: `must nest at most ${MAX_MCP_MESSAGE_DEPTH} levels of objects and arrays` }],
        });
      }
      const session: McpSession = {
        caller: async () => principal, defaultWorkspace: workspaceOnly ?? named.workspace, transport: 'mcp-http',
        ...(workspaceOnly === undefined ? {} : { workspaceOnly }),
        ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id,
      };
      const authInfo: AuthInfo = { token: workspaceOnly === undefined ? 'api-key' : 'oauth', clientId: principal.keyId, scopes: [...principal.scopes], extra: { [SESSION_KEY]: session } };
      // A client that goes away ends the exchange (and its SSE stream) at once.
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      loaded ??= await mcpServing();
      const request = await loaded.toWebRequest(req.raw, req.body, { signal: gone.signal });
      const reports: Reports = { errors: [], answered: false };
      const response = await reporting.run(reports, () => handler.fetch(request, { authInfo, ...(req.body === undefined ? {} : { parsedBody: req.body }) }));
      reports.answered = true;
      // The SDK reports a client's mistakes (a 4xx answer) through the same callback as its own failures.
      for (const err of reports.errors) {
        if (response.status >= 500) req.log.error({ err }, 'MCP request failed');
        else req.log.info({ status: response.status, reason: err.message }, 'MCP request refused');
      }
      reply.status(response.status);
      response.headers.forEach((value, name) => { if (name !== 'content-length') reply.header(name, value); });
      if (response.body === null) return reply.send();
      return reply.send(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>));
    },
  });
};

/**
 * The key or OAuth access token of the request, authenticated and counted (the key's gateway limit), with its
 * X-RateLimit-* headers; a token also names the one workspace it may act in.
 */
async function authenticate(auth: AuthDeps, oauth: Pick<OAuthService, 'authenticate'>, req: FastifyRequest, reply: FastifyReply):
  Promise<{ principal: Principal; workspaceOnly?: string }> {
  const credential = readCredential(req, 'bearer');
  if (credential === undefined) throw new DomainError('UNAUTHENTICATED', MISSING_CREDENTIAL_MESSAGE);
  const token = credential.startsWith(ACCESS_TOKEN_PREFIX) ? await oauth.authenticate(credential) : undefined;
  const principal = token?.principal ?? await auth.apiKeys.authenticate(credential);
  req.principal = principal;
  const decision = await auth.limits.gateway(principal);
  if (decision) setRateLimitHeaders(reply, decision);
  return token ? { principal, workspaceOnly: token.workspace } : { principal };
}

/** A refusal before MCP processing, as a JSON-RPC error (the request's id is not known yet: null). */
export function mcpErrorHandler(error: FastifyError | DomainError, req: FastifyRequest, reply: FastifyReply, challenge = 'Bearer realm="mnemo"'): FastifyReply {
  let status: number;
  let body: ReturnType<typeof errorBody>;
  let rpcCode: number | undefined;
  if (isDomainError(error)) {
    if (error.details.reason === 'too_deep') rpcCode = INVALID_REQUEST;
    status = MCP_ERROR_STATUS[error.code];
    body = errorBody(error);
    const retry = error.details.limit?.retryAfterMs ?? error.details.retryAfterMs;
    if (retry !== undefined) reply.header('Retry-After', retryAfterSeconds(retry));
    if (error.code === 'UNAUTHENTICATED') reply.header('WWW-Authenticate', challenge);
  } else {
    const problem = classifyRequestError(error);
    if (!problem) req.log.error({ err: error }, 'unhandled error');
    if (problem?.kind === 'malformed_json') rpcCode = PARSE_ERROR;
    status = problem ? { validation: 400, malformed_json: 400, unsupported_media_type: 415, payload_too_large: 413, not_found: 404, method_not_allowed: 405 }[problem.kind] : 500;
    body = problem ? { code: problem.kind.toUpperCase(), message: problem.message } : { code: 'INTERNAL_ERROR', message: 'Internal error' };
  }
  rpcCode ??= status === 500 ? -32603 : status === 400 ? -32602 : INVALID_REQUEST;
  return reply.status(status).type('application/json').send({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message: body.message, data: { ...body, request_id: req.id } } });
}
