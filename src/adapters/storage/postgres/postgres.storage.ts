import type { Storage } from '../../../core/storage.port.ts';
import { createPgApiKeyRepository } from './pg-api-key.repository.ts';
import { ApiKeyCache } from './pg-api-key-cache.ts';
import { listenForApiKeyChanges } from './pg-api-key-listener.ts';
import { createPgEventRepository } from './pg-event.repository.ts';
import type { PgExecutor } from './pg-executor.ts';
import { createPgIdempotencyRepository } from './pg-idempotency.repository.ts';
import { backfillPgContentHashes, createPgMemoryRepository } from './pg-memory.repository.ts';
import { migratePostgres } from './pg-migrations.ts';
import { PgOutbox } from './pg-outbox.ts';
import { createPgSearchLogRepository } from './pg-search-log.repository.ts';
import { createPgSecretRepository } from './pg-secret.repository.ts';
import { createPgAuditRepository } from './pg-audit.repository.ts';
import { createPgIdempotentRequestRepository } from './pg-idempotent-request.repository.ts';
import { createPgMcpResourceRepository } from './pg-mcp-resource.repository.ts';
import { createPgMcpApprovalRepository } from './pg-mcp-approval.repository.ts';
import { createPgTransfer } from './pg-transfer.ts';
import { createPgReindexProgressRepository } from './pg-reindex-progress.repository.ts';
import { createPgIngestionRepository } from './pg-ingestion.repository.ts';
import { createPgOAuthRepository } from './pg-oauth.repository.ts';
import { createPgTopicRepository } from './pg-topic.repository.ts';
import { createPgUsageRepository } from './pg-usage.repository.ts';
import { createPgRequestMetricsRepository } from './pg-request-metrics.repository.ts';
import { DEFAULT_EXACT_SCAN_BELOW, DEFAULT_HNSW_EF_SEARCH } from './pg-vector-search.ts';
import { PgVectorIndex } from './pg-vector-index.ts';
import { PgKeywordIndex } from './pg-keyword-index.ts';
import { createPgWebhookRepository } from './pg-webhook.repository.ts';

export interface PostgresStorageOptions {
  /**
   * Where searches score: `memory` (the default), each node's in-memory exact vector index and keyword index kept
   * current from the change log (pg-vector-index.ts, pg-keyword-index.ts); `database`, in SQL: pgvector (exact scan,
   * then HNSW above `exactScanBelow`) and BM25 over the keywords read per search (pg-keyword-ranking.ts).
   */
  vectorScan?: 'memory' | 'database';
  /** Scan worker threads of the in-memory index (0, the default: on the event loop; the server passes MNEMO_SEARCH_THREADS). */
  searchThreads?: number;
  /** `database` scan: vectors of a model in a scope up to which similarity search scans exactly instead of using HNSW. */
  exactScanBelow?: number;
  /** `database` scan: `hnsw.ef_search` for HNSW scans (recall against speed). */
  hnswEfSearch?: number;
  /**
   * false: no LISTEN session, so every key lookup reads the database (pg-api-key-cache.ts). Default true; a database
   * that delivers no notifications (a pooler in transaction mode) leaves the cache bypassed by itself.
   */
  keyCache?: boolean;
}

/**
 * The PostgreSQL store over any executor (a `pg` Pool, or PGlite in process): migrates on open, under an advisory
 * lock. Closing the storage closes the executor.
 */
export async function createPostgresStorage(db: PgExecutor, options: PostgresStorageOptions = {}): Promise<Storage> {
  await migratePostgres(db);
  await backfillPgContentHashes(db);
  const outbox = new PgOutbox(db.sessions === 'many');
  const inMemory = (options.vectorScan ?? 'memory') === 'memory';
  const index = inMemory ? new PgVectorIndex(db, { threads: options.searchThreads ?? 0 }) : null;
  const keywordIndex = inMemory ? new PgKeywordIndex(db) : null;
  // Authentication from memory while this node hears every node's key changes (one more session: LISTEN).
  const apiKeyCache = new ApiKeyCache();
  const apiKeyListener = db.listen && options.keyCache !== false ? listenForApiKeyChanges(db, apiKeyCache) : null;
  let closed = false;
  return {
    kind: 'postgres',
    memories: createPgMemoryRepository(db, outbox, {
      exactScanBelow: options.exactScanBelow ?? DEFAULT_EXACT_SCAN_BELOW, hnswEfSearch: options.hnswEfSearch ?? DEFAULT_HNSW_EF_SEARCH, index,
      keywordIndex,
    }),
    apiKeys: createPgApiKeyRepository(db, outbox, apiKeyCache),
    searchLog: createPgSearchLogRepository(db),
    topics: createPgTopicRepository(db),
    events: createPgEventRepository(db, outbox),
    webhooks: createPgWebhookRepository(db),
    usage: createPgUsageRepository(db),
    requestMetrics: createPgRequestMetricsRepository(db),
    idempotency: createPgIdempotencyRepository(db, outbox),
    secrets: createPgSecretRepository(db, outbox),
    audit: createPgAuditRepository(db),
    idempotentRequests: createPgIdempotentRequestRepository(db),
    mcpResources: createPgMcpResourceRepository(db),
    mcpApprovals: createPgMcpApprovalRepository(db),
    reindexProgress: createPgReindexProgressRepository(db),
    ingestions: createPgIngestionRepository(db, outbox),
    oauth: createPgOAuthRepository(db),
    transfer: createPgTransfer(db, !index),
    async ping() {
      if (closed) return false;
      try {
        const [row] = await db.query<{ one: number }>('SELECT 1 AS one');
        return row?.one === 1;
      } catch {
        return false;
      }
    },
    async sizeBytes() {
      // The whole database (every schema in it: a store sharing its database with others reports their size too).
      const [row] = await db.query<{ size: string | number }>('SELECT pg_database_size(current_database()) AS size');
      return Number(row?.size ?? 0);
    },
    async warmUp() {
      await index?.warmUp();
      await keywordIndex?.warmUp();
    },
    async close() {
      if (closed) return;
      closed = true;
      await apiKeyListener?.close();
      await index?.close();
      keywordIndex?.close();
      await db.close();
    },
  };
}
