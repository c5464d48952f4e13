import { createApiKeyManagement } from '../core/api-keys/api-key-management.service.ts';
import { createApiKeyService } from '../core/api-keys/api-key.service.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import type { Embedder } from '../core/embeddings/embedder.port.ts';
import { createMemoryService } from '../core/memories/memory.service.ts';
import { createMemoryForget } from '../core/memories/memory-forget.ts';
import { createIngestionService } from '../core/ingestion/ingestion.service.ts';
import { createIngestionWorker } from '../core/ingestion/ingestion-worker.ts';
import { createOpenAiChatModel } from '../adapters/llm/openai-chat.model.ts';
import type { RateLimiter } from '../core/rate-limit/rate-limiter.port.ts';
import { createOAuthService } from '../core/oauth/oauth.service.ts';
import { createLimitsService, defaultTierLimits } from '../core/rate-limit/tier-limits.ts';
import { createSearchService } from '../core/search/search.service.ts';
import { afterFlush } from '../core/search/search-recorder.ts';
import { createSearchAnalytics } from '../core/search/search-analytics.ts';
import { createSearchAdmission } from '../core/search/search-admission.ts';
import { createBatchService } from '../core/batch/batch.service.ts';
import { createTopicService } from '../core/topics/topic.service.ts';
import { createEmbeddingService } from '../core/embeddings/embedding.service.ts';
import { createTiktokenCounter } from '../adapters/tokenizer/tiktoken.counter.ts';
import type { Storage } from '../core/storage.port.ts';
import { createWarningRelay } from '../core/warning-log.ts';
import { createWebhookService } from '../core/webhooks/webhook.service.ts';
import { createEventPublisher } from '../core/webhooks/event-publisher.ts';
import { createAnalyticsSummary } from '../core/analytics/summary.ts';
import { createAnalyticsReport } from '../core/analytics/analytics-report.ts';
import { createRequestRecorder, REQUEST_METRICS_RETENTION_MS } from '../core/analytics/request-recorder.ts';
import { createPeriodicEvents } from '../core/events/periodic-events.ts';
import { createActivityTracker } from '../core/events/user-activity.ts';
import { createConnectionRegistry } from '../core/streams/connection-registry.ts';
import { createEventHub } from '../core/streams/event-hub.ts';
import { createLiveSearchService } from '../core/streams/live-search.ts';
import { DEFAULT_REALTIME_SETTINGS, type RealtimeSettings } from '../core/streams/settings.ts';
import { createHttpWebhookSender } from '../adapters/webhooks/http.sender.ts';
import { createDeliveryWorker, webhookLeaseMs } from '../core/webhooks/delivery-worker.ts';
import type { WebhookSender } from '../core/webhooks/webhook-sender.port.ts';
import type { Config } from './config.ts';
import { createCoordination, type Coordination } from './coordination.factory.ts';
import { createEmbedder } from './embedder.factory.ts';
import { createStorage } from './storage.factory.ts';
import { loadKeyring } from './keyring.factory.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import { verifyKeyring } from '../core/secrets/keyring-check.ts';
import { createSecretService } from '../core/secrets/secret.service.ts';
import { sealPlaintextWebhookSecrets } from '../core/webhooks/webhook-secret.ts';
import { createAuditService } from '../core/audit/audit.service.ts';
import { createOperationRunner } from '../core/operations/runner.ts';
import { createAuditHeadSigner, signUnsignedAuditHeads } from '../core/audit/audit.head.ts';
import { createIdempotentRequestService } from '../core/idempotency/idempotent-request.service.ts';
import { createMcpResourceService } from '../core/mcp-access/mcp-resource.service.ts';
import { createMcpApprovalService } from '../core/mcp-access/mcp-approval.service.ts';
import { createMcpRequesterAccess } from '../core/mcp-access/requester-access.ts';
import { createMetrics } from '../adapters/metrics/metrics.registry.ts';
import { measuredEmbedder, queuedTexts } from './measured-embedder.ts';
import { measuredReranker } from './measured-reranker.ts';
import { createHttpReranker } from '../adapters/rerank/http.reranker.ts';

/** Ports an embedding program (tests, benchmarks) may replace. */
export interface ContainerOverrides {
  clock?: Clock;
  storage?: Storage;
  embedder?: Embedder;
  limiter?: RateLimiter;
  /** Where webhook deliveries go (tests may capture them instead of using HTTP). */
  webhookSender?: WebhookSender;
  /** Stream timing and limits (tests shrink the time unit and the caps). */
  realtime?: Partial<RealtimeSettings>;
  /** The master keyring (instead of MNEMO_MASTER_KEY or the data directory's key file). */
  keyring?: Keyring;
}

export type Container = ReturnType<typeof wire>;

/** A search refused because too many are waiting is told to try again after this long (Retry-After). */
const SEARCH_RETRY_AFTER_MS = 1000;

/**
 * Opens the configured store (unless the caller gives one) and wires adapters into services: the composition root's
 * one place for it. A failure after the store opened closes it again.
 */
export async function createContainer(config: Config, overrides: ContainerOverrides = {}): Promise<Container> {
  // Adapters' warnings go to the server's logger once buildServer attaches it.
  const warnings = createWarningRelay();
  // A missing, malformed or wrong master key stops here, before anything is served (MasterKeyError, KeyringMismatchError).
  const keyring = overrides.keyring ?? loadKeyring(config);
  const clock = overrides.clock ?? systemClock;
  if (overrides.storage) {
    await prepareSealedValues(overrides.storage, keyring, clock, warnings);
    return wire(config, overrides, overrides.storage, keyring, warnings, await createCoordination(config.redisUrl, clock, warnings, () => keyring));
  }
  const storage = await createStorage(config, warnings);
  try {
    await prepareSealedValues(storage, keyring, clock, warnings);
    return wire(config, overrides, storage, keyring, warnings, await createCoordination(config.redisUrl, clock, warnings, () => keyring));
  } catch (err) {
    await storage.close();
    throw err;
  }
}

/**
 * Before anything is served: the keyring must open what the store holds (else the start stops, saying which key is
 * missing), and then the data migrations that schema migrations cannot do, lacking the key: webhook signing secrets
 * still stored in plaintext are sealed, and audit chain heads the upgrade left unsigned are signed (each once;
 * afterwards one indexed query finds none).
 */
async function prepareSealedValues(storage: Storage, keyring: Keyring, clock: Clock, warnings: ReturnType<typeof createWarningRelay>): Promise<void> {
  await verifyKeyring(storage.secrets, keyring);
  await sealPlaintextWebhookSecrets(storage.webhooks, keyring);
  const signed = await signUnsignedAuditHeads(storage.audit, createAuditHeadSigner(keyring), clock.now());
  if (signed.length > 0) {
    // A trail outside the database of the point from which each chain is anchored (trusted on first use).
    warnings.warn({ chains: signed.slice(0, 20).map((o) => `${o.tenantId}/${o.mode}`) },
      `signed the heads of ${signed.length} audit chain(s) for the first time: their rows so far are trusted as they stand`);
  }
}

/** `coordination`: limits, stream caps, activity windows and periodic turns: this process's, or every node's (MNEMO_REDIS_URL). */
function wire(
  config: Config, overrides: ContainerOverrides, storage: Storage, keyring: Keyring, warnings: ReturnType<typeof createWarningRelay>,
  coordination: Coordination,
) {
  const clock = overrides.clock ?? systemClock;
  const adapterEmbedder = overrides.embedder ?? createEmbedder(config.embeddings);
  // This container's metrics (`GET /metrics`); every service gets the timed embedder.
  const metrics = createMetrics({ embeddingModel: adapterEmbedder.modelId });
  const embedder = measuredEmbedder(adapterEmbedder, metrics.embedding);
  const limiter = overrides.limiter ?? coordination.limiter;

  const apiKeys = createApiKeyService({ keys: storage.apiKeys, clock });
  const apiKeyManagement = createApiKeyManagement({ keys: storage.apiKeys, clock });
  const limits = createLimitsService({
    limiter,
    policy: defaultTierLimits({ gatewayPerMinute: config.enterpriseRequestsPerMinute }),
  });
  const memories = createMemoryService({
    memories: storage.memories,
    topics: storage.topics,
    embedder,
    clock,
    limits: { maxContentBytes: config.maxContentBytes, maxEmbedChars: config.maxEmbedChars },
    quota: limits,
  });

  // Forgetting by filter (POST /api/v1/memories/forget, MCP memory_forget): one transaction of deletes.
  const memoryForget = createMemoryForget({ store: storage.memories, limits, clock });
  const topics = createTopicService({ topics: storage.topics, memories: storage.memories, clock });
  const searchAdmission = createSearchAdmission({
    maxActive: config.maxConcurrentSearches, maxQueued: config.maxQueuedSearches, retryAfterMs: SEARCH_RETRY_AFTER_MS,
  });
  const search = createSearchService({
    memories: storage.memories,
    searchLog: storage.searchLog,
    events: storage.events,
    embedder,
    clock,
    timeoutMs: config.searchTimeoutMs,
    maxEmbedChars: config.maxEmbedChars,
    admission: searchAdmission,
    warnings,
    // Off unless MNEMO_RERANK_URL is set: hybrid search then answers in its own order.
    rerank: config.rerank ? {
      reranker: measuredReranker(createHttpReranker({
        url: config.rerank.url, model: config.rerank.model, apiKey: config.rerank.apiKey, timeoutMs: config.rerank.timeoutMs,
      }), metrics),
      topN: config.rerank.topN,
    } : undefined,
  });

  // Analytics counts the searches answered a moment ago too: their log rows are written in batches.
  const searchAnalytics = createSearchAnalytics({
    searchLog: afterFlush(storage.searchLog, search.flushLog),
  });
  // Usage figures count searches (search log, search.performed events): they too wait for the batch under way.
  const usage = afterFlush(storage.usage, search.flushLog);

  const batch = createBatchService({ memories, search, store: storage.memories, limits, clock });
  // Conversations in (docs/ingestion.md): jobs in the store, run by this node's worker (started by start.ts only).
  const chat = config.llm
    ? createOpenAiChatModel({ url: config.llm.url, model: config.llm.model, apiKey: config.llm.apiKey, timeoutMs: config.llm.timeoutMs })
    : null;
  const ingestion = createIngestionService({
    ingestions: storage.ingestions, memories, store: storage.memories, search, chat, clock, limits: config.ingestion, quota: limits,
    onQueued: () => ingestionWorker.wake(),
    leaseMs: config.ingestionLeaseMs,
  });
  const ingestionWorker = createIngestionWorker({
    ingestions: storage.ingestions, service: ingestion, clock, tenantConcurrency: config.ingestion.tenantConcurrency,
    options: { leaseMs: config.ingestionLeaseMs },
  });
  const embeddings = createEmbeddingService({
    embedder, tokens: createTiktokenCounter(), maxEmbedChars: config.maxEmbedChars, quota: limits,
  });
  const webhooks = createWebhookService({
    webhooks: storage.webhooks, limits, clock, keyring: () => keyring, allowCidrs: config.webhookAllowCidrs,
  });
  const producerEvents = createEventPublisher({ events: storage.events, idempotency: storage.idempotency, clock });
  const secrets = createSecretService({ secrets: storage.secrets, events: storage.events, keyring: () => keyring, clock });
  const audit = createAuditService({ audit: storage.audit, clock, heads: createAuditHeadSigner(keyring) });
  // Every surface runs operations under one policy (core/operations): permissions and audit rows.
  const operations = createOperationRunner({ audit });
  const idempotentRequests = createIdempotentRequestService({ requests: storage.idempotentRequests, keyring: () => keyring, clock });
  const mcpResources = createMcpResourceService({
    resources: storage.mcpResources, approvals: storage.mcpApprovals, secrets, apiKeys: storage.apiKeys, keyring: () => keyring, clock,
  });
  const mcpApprovals = createMcpApprovalService({
    resources: storage.mcpResources, approvals: storage.mcpApprovals, clock, dashboardUrl: config.dashboardUrl,
  });
  // Mnemo as the OAuth authorization server of its own /mcp (docs/oauth.md).
  const oauth = createOAuthService({
    oauth: storage.oauth, keys: storage.apiKeys, audit, limiter, clock,
    settings: { issuer: config.publicUrl, resource: `${config.publicUrl}/mcp`, accessTtlSeconds: config.oauthAccessTtlSeconds },
  });
  // The MCP server's reads: the requester's own approvals open them, without the token (requester-access.ts).
  const mcpRequesterAccess = createMcpRequesterAccess({
    resources: storage.mcpResources, approvals: storage.mcpApprovals, resourceService: mcpResources, approvalService: mcpApprovals, clock,
  });

  // Real-time: the event tail shared by every stream, the per-key connection pool, and the periodic events.
  const realtime: RealtimeSettings = {
    ...DEFAULT_REALTIME_SETTINGS,
    eventRetentionMs: config.eventRetentionHours * 3_600_000,
    maxConnectionsPerTenant: config.maxStreamsPerTenant,
    maxConnections: config.maxStreams,
    ...overrides.realtime,
  };
  const eventHub = createEventHub({ events: storage.events, pollMs: realtime.pollMs });
  coordination.announceEvents(storage.events, eventHub);
  const streams = createConnectionRegistry({
    maxPerKey: realtime.maxConnectionsPerKey, maxPerTenant: realtime.maxConnectionsPerTenant, maxTotal: realtime.maxConnections,
  });
  const liveSearch = createLiveSearchService({ search, embedder, memories: storage.memories, events: storage.events, clock });
  const analytics = createAnalyticsSummary({ usage, clock });
  const analyticsReport = createAnalyticsReport({ usage, metrics: storage.requestMetrics, prices: config.costPrices, clock });
  const activity = createActivityTracker({
    events: storage.events, claims: coordination.claims, clock, windowMs: realtime.activityWindowMs,
  });
  const periodic = createPeriodicEvents({
    events: storage.events, usage, summary: analytics, ping: () => storage.ping(), clock,
    sampleProcess: () => {
      const cpu = process.cpuUsage();
      return { cpuMicros: cpu.user + cpu.system, rssBytes: process.memoryUsage.rss() };
    },
    claims: coordination.periodicClaims,
    healthIntervalMs: realtime.healthIntervalMs, analyticsIntervalMs: realtime.analyticsIntervalMs,
    retentionMs: realtime.eventRetentionMs, pruneIntervalMs: realtime.pruneIntervalMs,
    requestMetrics: { prune: (before) => storage.requestMetrics.prune(before), retentionMs: REQUEST_METRICS_RETENTION_MS },
    ingestions: { pruneFinished: (before) => storage.ingestions.pruneFinished(before), retentionMs: config.ingestionRetentionHours * 3_600_000 },
    oauth: storage.oauth,
  });
  // Every answered request, aggregated per minute in memory and written every few seconds (started here: the CLI's
  // container records nothing, so its timer only flushes an empty map); close() writes what is left.
  const requestMetrics = createRequestRecorder({
    metrics: storage.requestMetrics, clock, onError: (err) => warnings.warn({ err }, 'request metrics not stored'),
  });
  requestMetrics.start();

  // Webhook deliveries: started by start.ts (the server process only), stopped in close() before storage closes.
  const webhookSender = overrides.webhookSender
    ?? createHttpWebhookSender({ allowCidrs: config.webhookAllowCidrs, timeoutMs: config.webhookTimeoutMs });
  const deliveries = createDeliveryWorker({
    webhooks: storage.webhooks, events: storage.events, sender: webhookSender, limiter, clock, keyring: () => keyring,
    observer: metrics.deliveries,
    options: { leaseMs: webhookLeaseMs(config.webhookTimeoutMs), stopGraceMs: config.webhookTimeoutMs },
  });

  metrics.collectFrom({
    pendingDeliveries: () => storage.webhooks.pendingCount(),
    streamConnections: () => streams.size,
    storeSizeBytes: () => storage.sizeBytes(),
    embeddingQueuedTexts: () => queuedTexts(adapterEmbedder),
  });

  let closed = false;
  return {
    config,
    clock,
    warnings,
    storage,
    embedder,
    apiKeys,
    apiKeyManagement,
    limits,
    memories,
    memoryForget,
    search,
    searchAdmission,
    searchAnalytics,
    embeddings,
    topics,
    batch,
    ingestion,
    ingestionWorker,
    deliveries,
    webhooks,
    producerEvents,
    secrets,
    audit,
    operations,
    idempotentRequests,
    mcpResources,
    mcpApprovals,
    mcpRequesterAccess,
    oauth,
    realtime,
    eventHub,
    streams,
    /** Stream caps shared by every node (MNEMO_REDIS_URL); undefined on one node. */
    slots: coordination.slots,
    /** Dashboard sessions: in this process, or in Redis for every node. */
    dashboardSessions: coordination.dashboardSessions,
    liveSearch,
    analytics,
    analyticsReport,
    activity,
    periodic,
    metrics,
    requestMetrics,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await search.flushLog();
      await requestMetrics.stop();
      await ingestionWorker.stop();
      await deliveries.stop();
      await periodic.stop();
      eventHub.close();
      await coordination.close();
      await embedder.close();
      await storage.close();
    },
  };
}
