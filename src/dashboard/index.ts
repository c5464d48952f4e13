import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { ApiKeyService } from '../core/api-keys/api-key.service.ts';
import type { ApiKeyManagement } from '../core/api-keys/api-key-management.service.ts';
import type { AnalyticsReportService } from '../core/analytics/analytics-report.ts';
import type { AuditService } from '../core/audit/audit.service.ts';
import type { OperationRunner } from '../core/operations/runner.ts';
import { requireDeclaredOperation } from '../core/operations/catalog.ts';
import type { Clock } from '../core/clock.ts';
import type { DashboardSession, DashboardSessionStore } from '../core/dashboard-sessions/dashboard-session.port.ts';
import { DomainError, isDomainError } from '../core/errors.ts';
import type { IngestionService } from '../core/ingestion/ingestion.service.ts';
import type { McpApprovalService } from '../core/mcp-access/mcp-approval.service.ts';
import type { McpResourceService } from '../core/mcp-access/mcp-resource.service.ts';
import type { MemoryService } from '../core/memories/memory.service.ts';
import { LIMITER_RETRY_AFTER_MS, type LimitsService } from '../core/rate-limit/tier-limits.ts';
import type { SearchService } from '../core/search/search.service.ts';
import type { SearchAnalytics } from '../core/search/search-analytics.ts';
import type { SecretService } from '../core/secrets/secret.service.ts';
import type { WebhookService } from '../core/webhooks/webhook.service.ts';
import type { OAuthService } from '../core/oauth/oauth.service.ts';
import { assetRoutes } from './assets.ts';
import type { KitDeps } from './context.ts';
import { dashboardErrorHandler } from './errors.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import { DASHBOARD_PREFIX } from './layout.ts';
import { analyticsRoutes } from './pages/analytics.ts';
import { approvalRoutes } from './pages/approvals.ts';
import { auditRoutes } from './pages/audit.ts';
import { memoryRoutes } from './pages/memories.ts';
import { memoryLifecycleRoutes } from './pages/memory-history.ts';
import { overviewRoutes } from './pages/overview.ts';
import { reviewRoutes } from './pages/reviews.ts';
import { secretRoutes } from './pages/secrets.ts';
import { signInRoutes } from './pages/sign-in.ts';
import { webhookRoutes } from './pages/webhooks.ts';
import { oauthConnectedAppsRoutes } from './pages/oauth-connected-apps.ts';
import { oauthConsentRoutes } from './pages/oauth-consent.ts';
import { manageMemoryRoutes } from './pages/manage-memories.ts';
import { manageApiKeyRoutes } from './pages/manage-api-keys.ts';
import { manageSecretRoutes } from './pages/manage-secrets.ts';
import { manageMcpResourceRoutes } from './pages/manage-mcp-resources.ts';

export { dashboardErrorHandler, DASHBOARD_PREFIX };

/** The services the dashboard calls (never storage: `dashboard -> core`, like a surface). */
export interface DashboardDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  limits: Pick<LimitsService, 'gateway'>;
  clock: Clock;
  memories: MemoryService;
  search: SearchService;
  analyticsReport: AnalyticsReportService;
  /** The search log's figures of one workspace (zero-result searches, top queries with their scores). */
  searchAnalytics: SearchAnalytics;
  webhooks: WebhookService;
  secrets: SecretService;
  audit: AuditService;
  /** Runs the audited actions (core/operations): the same rows the API writes. */
  operations: Pick<OperationRunner, 'run'>;
  mcpApprovals: McpApprovalService;
  mcpResources: McpResourceService;
  /** Ingestions waiting for a person's review (the Reviews page). */
  ingestion: Pick<IngestionService, 'list' | 'find' | 'review'>;
  /** Sign-in sessions: in this process, or shared by every node (Redis). */
  sessions: DashboardSessionStore;
  /** OAuth consent and the Connected apps page (core/oauth). */
  oauth: Pick<OAuthService, 'checkAuthorization' | 'approve' | 'deny' | 'listGrants' | 'revokeGrant'>;
  /** What `GET /health` reports (the store and the embeddings model), for the overview. */
  health: () => Promise<SystemHealth>;
  /** The API keys page: G11's key management (create within the caller's own grant, rotate, revoke). */
  apiKeyManagement: Pick<ApiKeyManagement, 'create' | 'list' | 'rotate' | 'revoke'>;
  /** The configured embedding model's id: the model an export names for the vectors it carries. */
  embeddingModel: string;
}

/** The part of `GET /health`'s answer the overview shows (src/app/health.routes.ts computes it). */
export interface SystemHealth {
  storage: { kind: string; ok: boolean };
  embeddings: {
    model: string;
    dimensions: number;
    reindex: { state: 'complete' | 'needed'; done: number; total: number } | null;
    other_models: readonly { model: string; dimensions: number; vectors: number }[];
  };
}

export type PageDeps = DashboardDeps & KitDeps;

/**
 * Sessions whose store fails (Redis out of reach) answer a busy page with Retry-After, as the API answers 503 then,
 * rather than a 500 that names the outage.
 */
function answeringSessions(store: DashboardSessionStore): DashboardSessionStore {
  const guard = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    try {
      return await call(...args);
    } catch (err) {
      if (isDomainError(err)) throw err;
      throw new DomainError('OVERLOADED', 'Sessions cannot be read right now; try again shortly', { retryAfterMs: LIMITER_RETRY_AFTER_MS });
    }
  };
  return {
    create: guard((apiKey: string) => store.create(apiKey)),
    find: guard((cookieValue: string | undefined) => store.find(cookieValue)),
    setWorkspace: guard((session: DashboardSession, workspace: string) => store.setWorkspace(session, workspace)),
    end: guard((session: DashboardSession) => store.end(session)),
  };
}

const plugin: FastifyPluginAsync<DashboardDeps> = async (app, deps) => {
  await app.register(cookie);
  // Forms post application/x-www-form-urlencoded; only under /dashboard (this plugin's scope).
  await app.register(formbody, { bodyLimit: 256 * 1024 });
  app.setErrorHandler(dashboardErrorHandler);
  app.addHook('onSend', async (_req, reply) => {
    // A page may widen its own policy (the OAuth consent page's form-action names the client it redirects to).
    const own = reply.getHeader('Content-Security-Policy');
    reply.headers(SECURITY_HEADERS);
    if (own !== undefined) reply.header('Content-Security-Policy', own);
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
  });
  // Pages for people, not API operations: kept out of the OpenAPI document at /docs (as /metrics and /mcp are).
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  // Each page names the core operation it runs, as every API route does (signedIn declares it).
  app.addHook('onRoute', requireDeclaredOperation('dashboard'));
  const routeDeps: DashboardDeps = { ...deps, sessions: answeringSessions(deps.sessions) };
  for (const routes of [assetRoutes, signInRoutes, overviewRoutes, approvalRoutes, reviewRoutes, memoryRoutes, memoryLifecycleRoutes, analyticsRoutes, webhookRoutes, secretRoutes, auditRoutes, oauthConsentRoutes, oauthConnectedAppsRoutes, manageMemoryRoutes, manageApiKeyRoutes, manageSecretRoutes, manageMcpResourceRoutes]) {
    routes(app, routeDeps);
  }
};

/**
 * The dashboard under /dashboard: server-rendered pages over the core's services, for people (docs/api.md,
 * "Dashboard"). Encapsulated: its cookie, form parser, error page and headers apply to its routes only.
 */
export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  await app.register(plugin, deps);
}

export type RouteRegistrar = (app: FastifyInstance, deps: PageDeps) => void;
