/**
 * An adapter-neutral copy of a store's rows, for `mnemo migrate`: each adapter dumps its tables in this shape and
 * loads them back, so any store can be copied into any other. Rows keep their ids and sequence numbers (events keep
 * their order and cursors; deliveries and vectors keep pointing at their rows).
 */

/** How a column travels: times as epoch milliseconds, JSON as parsed values, tags as string[], vectors as number[]. */
export type TransferColumnKind = 'text' | 'int' | 'real' | 'time' | 'json' | 'tags' | 'vector';

export interface TransferTable {
  readonly name: string;
  /** The key rows are ordered and paged by (integer or text columns, which travel unchanged). */
  readonly key: readonly string[];
  /** A sequence the store assigns to new rows (it must continue after the copied ones). */
  readonly sequence?: string;
  readonly columns: Readonly<Record<string, TransferColumnKind>>;
}

export type TransferRow = Record<string, unknown>;

const text = 'text' as const;
const int = 'int' as const;
const time = 'time' as const;
const json = 'json' as const;

/** Every table a store holds, in an order that loads what a row points at before the row. */
export const TRANSFER_TABLES: readonly TransferTable[] = [
  {
    name: 'api_keys', key: ['id'],
    columns: {
      id: text, tenant_id: text, user_id: text, name: text, tier: text, mode: text, scopes: json, display_prefix: text,
      digest: text, created_at: time, expires_at: time, revoked_at: time, replaced_by: text,
    },
  },
  {
    name: 'topics', key: ['seq'], sequence: 'seq',
    columns: {
      seq: int, id: text, tenant_id: text, mode: text, workspace: text, name: text, description: text, parent_id: text,
      metadata: json, created_at: time, updated_at: time, created_by: text,
    },
  },
  {
    name: 'memories', key: ['seq'], sequence: 'seq',
    columns: {
      seq: int, id: text, client_id: text, tenant_id: text, mode: text, workspace: text, title: text, content: text,
      memory_type: text, tags: 'tags', metadata: json, topic_id: text, created_at: time, updated_at: time,
      created_by: text, updated_by: text, access_count: int, last_accessed: time, content_hash: text,
      valid_from: time, valid_until: time, superseded_by: text, version: int,
    },
  },
  {
    name: 'memory_vectors', key: ['memory_seq', 'model_id'],
    columns: { memory_seq: int, model_id: text, dims: int, vector: 'vector' },
  },
  {
    // A memory's kept earlier states (MemoryStore.history), by its id: they travel with it.
    name: 'memory_versions', key: ['memory_id', 'version'],
    columns: {
      memory_id: text, version: int, tenant_id: text, mode: text, workspace: text, title: text, content: text,
      memory_type: text, tags: 'tags', metadata: json, topic_id: text, valid_from: time, valid_until: time,
      written_at: time, written_by: text, replaced_at: time, replaced_by: text,
    },
  },
  {
    // What deleted memories left (never their content).
    name: 'memory_tombstones', key: ['memory_id'],
    columns: {
      memory_id: text, tenant_id: text, mode: text, workspace: text, deleted_at: time, deleted_by: text, reason: text,
    },
  },
  {
    name: 'events', key: ['seq'], sequence: 'seq',
    columns: {
      seq: int, id: text, tenant_id: text, mode: text, workspace: text, type: text, data: json, created_at: time, memory_id: text,
    },
  },
  {
    // The signing secret travels sealed (or, from a store not yet started since secrets were sealed, as the plaintext
    // the target's next start seals); the context binds it to the webhook's tenant, mode and id, which the copy keeps.
    name: 'webhooks', key: ['seq'], sequence: 'seq',
    columns: {
      seq: int, id: text, kind: text, tenant_id: text, mode: text, workspace: text, url: text, events: json,
      description: text, status: text, retry_policy: json, filters: json, created_at: time, updated_at: time,
      last_delivery_at: time, total_attempts: int, successful_deliveries: int, failed_deliveries: int,
      plaintext_secret: text, secret_key_id: text, secret_wrapped_key: text, secret_payload: text,
    },
  },
  {
    name: 'webhook_deliveries', key: ['seq'], sequence: 'seq',
    columns: {
      seq: int, id: text, webhook_id: text, event_seq: int, attempts: int, state: text, next_attempt_at: time,
      lease_until: time, last_status: int, last_error: text, created_at: time, finished_at: time,
    },
  },
  {
    name: 'idempotency_keys', key: ['tenant_id', 'mode', 'key'],
    columns: { tenant_id: text, mode: text, key: text, request_hash: text, response: text, created_at: time },
  },
  {
    name: 'search_log', key: ['id'], sequence: 'id',
    columns: {
      id: int, tenant_id: text, mode: text, workspace: text, user_id: text, surface: text, kind: text, query: text,
      query_norm: text, results_count: int, execution_ms: 'real', avg_score: 'real', filters: json, created_at: time,
    },
  },
  {
    name: 'request_metrics', key: ['id'], sequence: 'id',
    columns: {
      id: int, tenant_id: text, mode: text, minute: time, surface: text, route: text, status_class: int, key_id: text,
      user_id: text, requests: int, latency_sum_ms: 'real', latency_max_ms: 'real', histogram: json, bytes_in: int,
      bytes_out: int,
    },
  },
  {
    name: 'secrets', key: ['id'],
    columns: {
      id: text, tenant_id: text, mode: text, name: text, tags: 'tags', version: int, created_at: time, updated_at: time,
      expires_at: time, region: text, created_by: text, updated_by: text,
    },
  },
  {
    // Sealed parts travel as the base64 text they are stored as; the AAD binds them to tenant, mode, name and version,
    // which the copy keeps, so they open in the target under the same master keys.
    name: 'secret_versions', key: ['secret_id', 'version'],
    columns: { secret_id: text, version: int, key_id: text, wrapped_key: text, payload: text, created_at: time, created_by: text },
  },
  {
    name: 'master_key_checks', key: ['key_id'],
    columns: { key_id: text, wrapped_key: text, payload: text, created_at: time },
  },
  {
    // Rows keep their chain (seq, prev_hash, hash) and metadata travels as the canonical text that was hashed, so the
    // copy verifies as the source does (mnemo audit verify).
    name: 'audit_logs', key: ['tenant_id', 'mode', 'seq'],
    columns: {
      tenant_id: text, mode: text, seq: int, id: text, created_at: time, user_id: text, key_id: text, action: text,
      resource: text, outcome: text, status: int, ip: text, user_agent: text, region: text, request_id: text,
      metadata: text, prev_hash: text, hash: text,
    },
  },
  {
    // Each chain's signed head travels as it is: its MAC depends on the master key only, so the copy verifies under
    // the same key, and an unsigned one is signed by the target's next start.
    name: 'audit_heads', key: ['tenant_id', 'mode'],
    columns: { tenant_id: text, mode: text, seq: int, hash: text, key_id: text, signed_at: time, mac: text },
  },
  {
    // G11 Idempotency-Key rows: answers travel sealed; their context (tenant, mode, API key id, key, reservation) is
    // kept by the copy, so they open in the target under the same master keys. Pending reservations come too: they
    // lapse after their lock.
    name: 'idempotent_requests', key: ['tenant_id', 'mode', 'api_key_id', 'idempotency_key'],
    columns: {
      tenant_id: text, mode: text, api_key_id: text, idempotency_key: text, reservation: text, created_at: time,
      locked_until: time, response_key_id: text, response_wrapped_key: text, response_payload: text,
    },
  },
  {
    // A custom resource's value travels sealed, bound to the resource's tenant, mode and id, which the copy keeps.
    name: 'mcp_resources', key: ['id'],
    columns: {
      id: text, tenant_id: text, mode: text, uri: text, type: text, name: text, description: text, permissions: json,
      requires_approval: int, approvers: json, auto_approve: json, value_key_id: text, value_wrapped_key: text, value_payload: text,
      created_at: time, created_by: text, accessed_at: time, access_count: int,
    },
  },
  {
    name: 'mcp_approvals', key: ['id'],
    columns: {
      id: text, tenant_id: text, mode: text, resource_id: text, resource: text, operation: text, reason: text, requested_by: text,
      requested_at: time, expires_at: time, status: text, responded_by: text, responded_at: time, response_reason: text,
      auto_approved: int, token_digest: text,
    },
  },
  {
    // Ingestion jobs with their lease as it stands: a job leased on the source is taken again once the lease lapses.
    name: 'ingestions', key: ['id'],
    columns: {
      id: text, tenant_id: text, mode: text, workspace: text, requested_by_key: text, requested_by_user: text, ingest_mode: text,
      policy: text, state: text, messages: json, metadata: json, tags: json, proposals: json, error: json, usage: json,
      prompt_version: text, attempts: int, revision: int, lease_token: text, lease_until: time, created_at: time,
      updated_at: time, finished_at: time,
    },
  },
  {
    // OAuth (core/oauth): codes and tokens travel as digests, so connected apps keep working on the copy.
    name: 'oauth_clients', key: ['id'],
    columns: { id: text, name: text, redirect_uris: json, created_at: time },
  },
  {
    name: 'oauth_grants', key: ['id'],
    columns: {
      id: text, client_id: text, tenant_id: text, mode: text, workspace: text, key_id: text, user_id: text, scopes: json,
      created_at: time, last_used_at: time, revoked_at: time,
    },
  },
  {
    name: 'oauth_codes', key: ['digest'],
    columns: {
      digest: text, client_id: text, redirect_uri: text, code_challenge: text, resource: text, grant_id: text, tenant_id: text,
      mode: text, workspace: text, key_id: text, user_id: text, scopes: json, created_at: time, expires_at: time, used_at: time,
    },
  },
  {
    name: 'oauth_tokens', key: ['digest'],
    columns: { digest: text, grant_id: text, kind: text, created_at: time, expires_at: time, used_at: time },
  },
];

/** Dump and load of whole tables (see TRANSFER_TABLES); used offline, by `mnemo migrate`. */
export interface StorageTransfer {
  count(table: TransferTable): Promise<number>;
  /** Up to `limit` rows in key order, from the start or after the row `after` (keyset paging: each page costs the same). */
  dump(table: TransferTable, after: TransferRow | null, limit: number): Promise<TransferRow[]>;
  /** Inserts the rows in one transaction, skipping any whose key (or id) is already there; returns how many it inserted. */
  load(table: TransferTable, rows: readonly TransferRow[]): Promise<number>;
}
