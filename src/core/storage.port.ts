import type { ApiKeyRepository } from './api-keys/api-key.repository.ts';
import type { MemoryRepository } from './memories/memory.repository.ts';
import type { SearchLogRepository } from './search/search-log.ts';
import type { TopicRepository } from './topics/topic.repository.ts';
import type { EventRepository } from './events/event.repository.ts';
import type { WebhookRepository } from './webhooks/webhook.repository.ts';
import type { UsageRepository } from './analytics/usage.repository.ts';
import type { RequestMetricsRepository } from './analytics/request-metrics.repository.ts';
import type { IdempotencyRepository } from './events/idempotency.repository.ts';
import type { SecretRepository } from './secrets/secret.repository.ts';
import type { AuditRepository } from './audit/audit.repository.ts';
import type { IdempotentRequestRepository } from './idempotency/idempotent-request.repository.ts';
import type { McpResourceRepository } from './mcp-access/mcp-resource.repository.ts';
import type { McpApprovalRepository } from './mcp-access/mcp-approval.repository.ts';
import type { StorageTransfer } from './storage-transfer.ts';
import type { ReindexProgressRepository } from './embeddings/reindex-progress.repository.ts';
import type { IngestionRepository } from './ingestion/ingestion.repository.ts';
import type { OAuthRepository } from './oauth/oauth.repository.ts';

/** The storage port: every repository of one store, opened and closed together. */
export interface Storage {
  /** `sqlite` or `postgres`; for health output and logs. */
  readonly kind: string;
  readonly memories: MemoryRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly searchLog: SearchLogRepository;
  readonly topics: TopicRepository;
  readonly events: EventRepository;
  readonly webhooks: WebhookRepository;
  /** Usage figures for the analytics summary (G7 stream, analytics.update events). */
  readonly usage: UsageRepository;
  /** Answered requests aggregated per minute (G7 analytics: latency, errors, throughput, users, bytes). */
  readonly requestMetrics: RequestMetricsRepository;
  /** Answered producer requests (`Idempotency-Key` on `POST /v1/events`). */
  readonly idempotency: IdempotencyRepository;
  /** G11 secrets (sealed values only), their versions, and the master-key checks. */
  readonly secrets: SecretRepository;
  /** The G11 audit log: append-only, one hash chain per tenant and mode. */
  readonly audit: AuditRepository;
  /** G11 requests with an `Idempotency-Key`: reservations, and the answers kept for replays (sealed). */
  readonly idempotentRequests: IdempotentRequestRepository;
  /** G11 MCP resource registrations (a custom resource's value sealed). */
  readonly mcpResources: McpResourceRepository;
  /** G11 MCP approvals (only access-token digests). */
  readonly mcpApprovals: McpApprovalRepository;
  /** The last `mnemo reindex` run's progress, one record per store (for `/health`). */
  readonly reindexProgress: ReindexProgressRepository;
  /** Ingestion jobs (conversations in, proposed memories out), leased by one worker at a time. */
  readonly ingestions: IngestionRepository;
  /** OAuth 2.1 for remote MCP clients: registered clients, codes, grants and tokens (digests only). */
  readonly oauth: OAuthRepository;
  /** Whole-table dump and load, for copying one store into another (`mnemo migrate`). */
  readonly transfer: StorageTransfer;
  /** Cheap liveness probe for /health. */
  ping(): Promise<boolean>;
  /**
   * How much room the store takes, in bytes, for operators (`mnemo_store_size_bytes` on `/metrics`): SQLite's file
   * with its WAL, PostgreSQL's whole database (`pg_database_size`). Read on each scrape, so it must be cheap.
   */
  sizeBytes(): Promise<number>;
  /**
   * Fills in-process caches at server start, in the background (SQLite: every workspace's vectors, so that the first
   * search does not load them); a store without such caches (PostgreSQL) returns at once.
   */
  warmUp(): Promise<void>;
  close(): Promise<void>;
}
