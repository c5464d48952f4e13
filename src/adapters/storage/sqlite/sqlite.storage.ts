import { statSync } from 'node:fs';
import type { Storage } from '../../../core/storage.port.ts';
import { createSqliteApiKeyRepository } from './sqlite-api-key.repository.ts';
import { createSqliteMemoryRepository, type SqliteMemoryRepository } from './sqlite-memory.repository.ts';
import { SqliteVectorCache } from './sqlite-vector-cache.ts';
import { createSqliteSearchLogRepository } from './sqlite-search-log.repository.ts';
import { createSqliteTopicRepository } from './sqlite-topic.repository.ts';
import { createSqliteEventRepository } from './sqlite-event.repository.ts';
import { SqliteOutbox } from './sqlite-outbox.ts';
import { createSqliteWebhookRepository } from './sqlite-webhook.repository.ts';
import { createSqliteUsageRepository } from './sqlite-usage.repository.ts';
import { createSqliteRequestMetricsRepository } from './sqlite-request-metrics.repository.ts';
import { createSqliteIdempotencyRepository } from './sqlite-idempotency.repository.ts';
import { createSqliteSecretRepository } from './sqlite-secret.repository.ts';
import { createSqliteAuditRepository } from './sqlite-audit.repository.ts';
import { createSqliteIdempotentRequestRepository } from './sqlite-idempotent-request.repository.ts';
import { createSqliteMcpResourceRepository } from './sqlite-mcp-resource.repository.ts';
import { createSqliteMcpApprovalRepository } from './sqlite-mcp-approval.repository.ts';
import { createSqliteTransfer } from './sqlite-transfer.ts';
import { createSqliteReindexProgressRepository } from './sqlite-reindex-progress.repository.ts';
import { createSqliteIngestionRepository } from './sqlite-ingestion.repository.ts';
import { createSqliteOAuthRepository } from './sqlite-oauth.repository.ts';
import { openSqlite, synchronousOf, type SqliteOptions, type SqliteSynchronous } from './sqlite.database.ts';
import type { WarningLog } from '../../../core/warning-log.ts';

export interface SqliteStorage extends Storage {
  /** The memory repository with its SQLite extras (group-commit counters for metrics and tests). */
  readonly memories: SqliteMemoryRepository;
  /** PRAGMA synchronous as the connection reports it (see SqliteOptions). */
  readonly synchronous: SqliteSynchronous | 'off' | 'extra';
}

/**
 * The embedded store: one SQLite file (or `:memory:`), schema migrated on open. `searchThreads`: worker threads for
 * the exact vector scan (default 0: on the event loop; the server passes MNEMO_SEARCH_THREADS). `log` receives what an operator
 * should fix (rows a search had to skip). `prefetchFiltersFrom`: workspace rows from which broad filter conditions are
 * read ahead of searches (default 20,000; tests lower it).
 */
export function createSqliteStorage(options: { file: string; log?: WarningLog; searchThreads?: number; prefetchFiltersFrom?: number }
  & SqliteOptions): SqliteStorage {
  const db = openSqlite(options.file, options);
  const ping = db.prepare('SELECT 1').pluck();
  const pageCount = db.prepare('PRAGMA page_count').pluck();
  const pageSize = db.prepare('PRAGMA page_size').pluck();
  const outbox = new SqliteOutbox(db);
  let closed = false;
  const memories = createSqliteMemoryRepository(db, outbox, options.log, new SqliteVectorCache(db, { threads: options.searchThreads ?? 0 }),
    undefined, { prefetchFiltersFrom: options.prefetchFiltersFrom });
  return {
    kind: 'sqlite',
    memories,
    apiKeys: createSqliteApiKeyRepository(db, outbox),
    searchLog: createSqliteSearchLogRepository(db),
    topics: createSqliteTopicRepository(db),
    events: createSqliteEventRepository(db, outbox),
    webhooks: createSqliteWebhookRepository(db),
    usage: createSqliteUsageRepository(db),
    requestMetrics: createSqliteRequestMetricsRepository(db),
    idempotency: createSqliteIdempotencyRepository(db, outbox),
    secrets: createSqliteSecretRepository(db, outbox),
    audit: createSqliteAuditRepository(db),
    idempotentRequests: createSqliteIdempotentRequestRepository(db),
    mcpResources: createSqliteMcpResourceRepository(db),
    mcpApprovals: createSqliteMcpApprovalRepository(db),
    reindexProgress: createSqliteReindexProgressRepository(db),
    ingestions: createSqliteIngestionRepository(db, outbox),
    oauth: createSqliteOAuthRepository(db),
    transfer: createSqliteTransfer(db),
    get synchronous() {
      return synchronousOf(db);
    },
    async ping() {
      return !closed && ping.get() === 1;
    },
    async sizeBytes() {
      // The file and its WAL (committed pages not yet checkpointed live there); an in-memory store counts its pages.
      if (db.memory) return Number(pageCount.get()) * Number(pageSize.get());
      return [db.name, `${db.name}-wal`].reduce((sum, file) => sum + fileSize(file), 0);
    },
    warmUp() {
      return memories.warmUp();
    },
    async close() {
      if (closed) return;
      closed = true;
      await memories.close();
      db.close();
    },
  };
}

/** A file's size, or 0 when it is absent (the WAL exists only while the database is open in WAL mode). */
function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
