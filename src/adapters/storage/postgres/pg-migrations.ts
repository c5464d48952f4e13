import type { PgExecutor } from './pg-executor.ts';

/**
 * PostgreSQL schema migrations, in order. Each runs once, recorded in `schema_migrations`; all pending ones run in
 * one transaction under an advisory lock, so servers starting together migrate once. Never edit a released
 * migration: add a new one.
 */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/** The key of the advisory lock held while migrating (any constant unlikely to clash: "mnemo" in ASCII). */
const MIGRATION_LOCK = 0x6d6e656d6f;

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'api keys, memories with keywords and vectors, search log, topics',
    sql: `
      -- Needs the pgvector extension installed on the server (CREATE EXTENSION needs the right to create it).
      CREATE EXTENSION IF NOT EXISTS vector;

      CREATE TABLE api_keys (
        id             text PRIMARY KEY,
        tenant_id      text NOT NULL,
        user_id        text NOT NULL,
        tier           text NOT NULL CHECK (tier IN ('free', 'pro', 'enterprise')),
        mode           text NOT NULL CHECK (mode IN ('live', 'test')),
        scopes         jsonb NOT NULL,
        display_prefix text NOT NULL,
        digest         text NOT NULL UNIQUE,
        created_at     timestamptz NOT NULL,
        expires_at     timestamptz,
        revoked_at     timestamptz
      );
      CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

      CREATE TABLE memories (
        seq            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id             text COLLATE "C" NOT NULL UNIQUE,
        client_id      text,
        tenant_id      text NOT NULL,
        mode           text NOT NULL,
        workspace      text NOT NULL,
        title          text NOT NULL,
        content        text NOT NULL,
        memory_type    text NOT NULL,
        tags           text[] NOT NULL,
        metadata       jsonb NOT NULL,
        topic_id       text,
        created_at     timestamptz NOT NULL,
        updated_at     timestamptz NOT NULL,
        created_by     text NOT NULL,
        updated_by     text NOT NULL,
        access_count   integer NOT NULL DEFAULT 0,
        last_accessed  timestamptz,
        -- Kept by the trigger below: title (weight A), content (B) and tags (C), and the count of their tokens.
        keywords       tsvector NOT NULL DEFAULT ''::tsvector,
        keyword_length integer NOT NULL DEFAULT 0
      );
      CREATE INDEX memories_scope_id ON memories (tenant_id, mode, workspace, id);
      CREATE INDEX memories_scope_created ON memories (tenant_id, mode, workspace, created_at);
      CREATE INDEX memories_scope_updated ON memories (tenant_id, mode, workspace, updated_at);
      CREATE INDEX memories_scope_title ON memories (tenant_id, mode, workspace, title COLLATE "C");
      CREATE INDEX memories_scope_type ON memories (tenant_id, mode, workspace, memory_type);
      CREATE INDEX memories_scope_topic ON memories (tenant_id, mode, workspace, topic_id);
      CREATE UNIQUE INDEX memories_scope_client_id ON memories (tenant_id, mode, workspace, client_id)
        WHERE client_id IS NOT NULL;
      CREATE INDEX memories_tags ON memories USING gin (tags);
      CREATE INDEX memories_metadata ON memories USING gin (metadata jsonb_path_ops);
      CREATE INDEX memories_keywords ON memories USING gin (keywords);

      CREATE FUNCTION memories_keywords() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.keywords := setweight(to_tsvector('english', NEW.title), 'A')
          || setweight(to_tsvector('english', NEW.content), 'B')
          || setweight(to_tsvector('english', array_to_string(NEW.tags, ' ')), 'C');
        NEW.keyword_length := (SELECT COALESCE(SUM(cardinality(k.positions)), 0) FROM unnest(NEW.keywords) k);
        RETURN NEW;
      END $$;
      CREATE TRIGGER memories_keywords BEFORE INSERT OR UPDATE OF title, content, tags ON memories
        FOR EACH ROW EXECUTE FUNCTION memories_keywords();

      -- One vector per memory; the width is fixed per model (dims). HNSW indexes are partial, one per (model, dims),
      -- created on demand over the expression embedding::vector(dims) (see pg-vector-index.ts).
      CREATE TABLE memory_vectors (
        memory_seq bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        model_id   text NOT NULL,
        dims       integer NOT NULL,
        embedding  vector NOT NULL
      );
      CREATE INDEX memory_vectors_model ON memory_vectors (model_id, dims);

      CREATE TABLE search_log (
        id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant_id      text NOT NULL,
        mode           text NOT NULL,
        workspace      text NOT NULL,
        user_id        text NOT NULL,
        surface        text NOT NULL,
        kind           text NOT NULL,
        query          text NOT NULL,
        query_norm     text NOT NULL,
        results_count  integer NOT NULL,
        execution_ms   double precision NOT NULL,
        avg_score      double precision,
        filters        jsonb NOT NULL,
        created_at     timestamptz NOT NULL
      );
      CREATE INDEX search_log_scope_time ON search_log (tenant_id, mode, workspace, created_at);
      CREATE INDEX search_log_scope_query ON search_log (tenant_id, mode, workspace, query_norm text_pattern_ops);

      CREATE TABLE topics (
        seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id           text NOT NULL UNIQUE,
        tenant_id    text NOT NULL,
        mode         text NOT NULL,
        workspace    text NOT NULL,
        name         text NOT NULL,
        description  text,
        parent_id    text,
        metadata     jsonb NOT NULL,
        created_at   timestamptz NOT NULL,
        updated_at   timestamptz NOT NULL,
        created_by   text NOT NULL
      );
      CREATE INDEX topics_scope_id ON topics (tenant_id, mode, workspace, id);
      CREATE UNIQUE INDEX topics_scope_parent_name ON topics (tenant_id, mode, workspace, COALESCE(parent_id, ''), name);
    `,
  },
  {
    version: 2,
    name: 'event log, webhooks and deliveries (transactional outbox), idempotency keys',
    sql: `
      CREATE TABLE events (
        seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id         text NOT NULL UNIQUE,
        tenant_id  text,
        mode       text,
        workspace  text,
        type       text NOT NULL,
        data       jsonb NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX events_scope_seq ON events (tenant_id, mode, seq);
      CREATE INDEX events_created ON events (created_at);

      CREATE TABLE webhooks (
        seq                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id                    text NOT NULL UNIQUE,
        kind                  text NOT NULL CHECK (kind IN ('g9', 'g10')),
        tenant_id             text NOT NULL,
        mode                  text NOT NULL,
        workspace             text,
        url                   text NOT NULL,
        events                jsonb NOT NULL,
        secret                text NOT NULL,
        description           text,
        status                text NOT NULL CHECK (status IN ('active', 'disabled', 'failed')),
        retry_policy          jsonb NOT NULL,
        filters               jsonb NOT NULL,
        created_at            timestamptz NOT NULL,
        updated_at            timestamptz NOT NULL,
        last_delivery_at      timestamptz,
        total_attempts        integer NOT NULL DEFAULT 0,
        successful_deliveries integer NOT NULL DEFAULT 0,
        failed_deliveries     integer NOT NULL DEFAULT 0
      );
      CREATE INDEX webhooks_scope ON webhooks (tenant_id, mode, kind, created_at);

      -- One row per (event, webhook): written with the event, claimed with a lease (FOR UPDATE SKIP LOCKED).
      CREATE TABLE webhook_deliveries (
        seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id              text NOT NULL UNIQUE,
        webhook_id      text NOT NULL,
        event_seq       bigint NOT NULL,
        attempts        integer NOT NULL DEFAULT 0,
        state           text NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
        next_attempt_at timestamptz NOT NULL,
        lease_until     timestamptz,
        last_status     integer,
        last_error      text,
        created_at      timestamptz NOT NULL,
        finished_at     timestamptz
      );
      CREATE INDEX deliveries_due ON webhook_deliveries (next_attempt_at, event_seq) WHERE state = 'pending';
      CREATE INDEX deliveries_webhook ON webhook_deliveries (webhook_id, state);
      CREATE INDEX deliveries_event ON webhook_deliveries (event_seq);

      CREATE TABLE idempotency_keys (
        tenant_id    text NOT NULL,
        mode         text NOT NULL,
        key          text NOT NULL,
        request_hash text NOT NULL,
        response     text NOT NULL,
        created_at   timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, mode, key)
      );
      CREATE INDEX idempotency_created ON idempotency_keys (created_at);
    `,
  },
  {
    version: 3,
    name: 'secrets: sealed versions and master-key checks',
    sql: `
      -- A named secret of a tenant + mode, without its value. Ids and names compare byte-wise (COLLATE "C"), as in
      -- SQLite: the list order, its cursor, and the order master-key rotation pages in.
      CREATE TABLE secrets (
        id          text COLLATE "C" PRIMARY KEY,
        tenant_id   text NOT NULL,
        mode        text NOT NULL CHECK (mode IN ('live', 'test')),
        name        text COLLATE "C" NOT NULL,
        tags        text[] NOT NULL,
        version     integer NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        expires_at  timestamptz,
        region      text,
        created_by  text NOT NULL,
        updated_by  text NOT NULL,
        CONSTRAINT secrets_owner_name UNIQUE (tenant_id, mode, name)
      );

      -- The kept versions of each secret, each value sealed (AES-256-GCM) under a data key wrapped by master key key_id.
      CREATE TABLE secret_versions (
        secret_id   text COLLATE "C" NOT NULL REFERENCES secrets (id) ON DELETE CASCADE,
        version     integer NOT NULL,
        key_id      text NOT NULL,
        wrapped_key text NOT NULL,
        payload     text NOT NULL,
        created_at  timestamptz NOT NULL,
        created_by  text NOT NULL,
        PRIMARY KEY (secret_id, version)
      );

      -- A check value sealed under each master key at its first use: proves a configured key is the right one.
      CREATE TABLE master_key_checks (
        key_id      text COLLATE "C" PRIMARY KEY,
        wrapped_key text NOT NULL,
        payload     text NOT NULL,
        created_at  timestamptz NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'api keys: names, rotation, pages per tenant and mode',
    sql: `
      -- A label for people; keys made before names existed get the command line's default.
      ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT 'API key';
      -- The key that replaced this one by rotation (its grace period is its expires_at).
      ALTER TABLE api_keys ADD COLUMN replaced_by text;
      -- G11 lists one tenant's keys of one mode, oldest first, a page at a time (ids byte-wise, as in SQLite).
      CREATE INDEX api_keys_owner ON api_keys (tenant_id, mode, created_at, id COLLATE "C");
    `,
  },
  {
    version: 5,
    name: 'webhook signing secrets sealed',
    sql: `
      -- Signing secrets are sealed as G11 secrets are (secret_key_id, secret_wrapped_key, secret_payload; see
      -- core/webhooks/webhook-secret.ts). A migration has no key, so it cannot seal: the secrets already stored move
      -- to plaintext_secret, which the app seals and clears at its next start (sealPlaintextWebhookSecrets). A row
      -- holds exactly one of the two forms.
      ALTER TABLE webhooks RENAME COLUMN secret TO plaintext_secret;
      ALTER TABLE webhooks
        ALTER COLUMN plaintext_secret DROP NOT NULL,
        ADD COLUMN secret_key_id text,
        ADD COLUMN secret_wrapped_key text,
        ADD COLUMN secret_payload text,
        ADD CONSTRAINT webhooks_secret_sealed_or_plaintext CHECK (
          (plaintext_secret IS NOT NULL AND secret_key_id IS NULL AND secret_wrapped_key IS NULL AND secret_payload IS NULL)
          OR (plaintext_secret IS NULL AND secret_key_id IS NOT NULL AND secret_wrapped_key IS NOT NULL AND secret_payload IS NOT NULL));
      -- What the start-up sealing looks for: empty once every secret is sealed, so the look costs nothing.
      CREATE INDEX webhooks_plaintext_secret ON webhooks (seq) WHERE plaintext_secret IS NOT NULL;
    `,
  },
  {
    version: 6,
    name: 'audit log: append-only, one hash chain per tenant and mode',
    sql: `
      -- G11 audit rows (core/audit). seq numbers each tenant + mode's chain 1, 2, 3 …; prev_hash and hash link it
      -- (core/audit/audit.hash.ts). metadata is the canonical JSON text that was hashed (keys sorted): text, not
      -- jsonb, which would reorder it. Tenants compare byte-wise (COLLATE "C"), as in SQLite: the order chains are
      -- verified in.
      CREATE TABLE audit_logs (
        tenant_id   text COLLATE "C" NOT NULL,
        mode        text NOT NULL CHECK (mode IN ('live', 'test')),
        seq         bigint NOT NULL,
        id          text COLLATE "C" NOT NULL,
        created_at  timestamptz NOT NULL,
        user_id     text NOT NULL,
        key_id      text,
        action      text NOT NULL,
        resource    text NOT NULL,
        outcome     text NOT NULL CHECK (outcome IN ('success', 'failure')),
        status      integer NOT NULL,
        ip          text,
        user_agent  text,
        region      text,
        request_id  text,
        metadata    text NOT NULL,
        prev_hash   text NOT NULL,
        hash        text NOT NULL,
        PRIMARY KEY (tenant_id, mode, seq),
        CONSTRAINT audit_logs_id UNIQUE (id)
      );
      CREATE INDEX audit_logs_time ON audit_logs (tenant_id, mode, created_at);

      -- Append-only: the server never changes or removes a row. Whoever can drop this trigger can also edit rows;
      -- the hash chain is what shows it (mnemo audit verify).
      CREATE FUNCTION audit_logs_append_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        RAISE EXCEPTION 'audit_logs is append-only';
      END
      $fn$;
      CREATE TRIGGER audit_logs_no_change BEFORE UPDATE OR DELETE ON audit_logs
        FOR EACH ROW EXECUTE FUNCTION audit_logs_append_only();
      CREATE TRIGGER audit_logs_no_truncate BEFORE TRUNCATE ON audit_logs
        FOR EACH STATEMENT EXECUTE FUNCTION audit_logs_append_only();
    `,
  },
  {
    version: 7,
    name: 'webhooks of G11 (kind g11)',
    sql: `
      -- G11 webhooks (the secrets component's events) share the table with G9's and G10's: kind may now be 'g11'.
      ALTER TABLE webhooks
        DROP CONSTRAINT webhooks_kind_check,
        ADD CONSTRAINT webhooks_kind_check CHECK (kind IN ('g9', 'g10', 'g11'));
    `,
  },
  {
    version: 8,
    name: 'G11 idempotent requests: reservations and sealed answers',
    sql: `
      -- One row per Idempotency-Key of one API key (core/idempotency): first a reservation (locked_until set, no
      -- answer) written before the request runs, then the answer, sealed under the master key like a secret version
      -- (response_key_id, response_wrapped_key, response_payload). reservation is random per reservation: only it
      -- completes or frees the row, and it is part of the sealed value's context. The lifetime (24 h) counts from
      -- created_at. A row is exactly one of the two states. Text keys compare byte-wise (COLLATE "C"), as in SQLite:
      -- the order master-key rotation pages in.
      CREATE TABLE idempotent_requests (
        tenant_id            text COLLATE "C" NOT NULL,
        mode                 text COLLATE "C" NOT NULL CHECK (mode IN ('live', 'test')),
        api_key_id           text COLLATE "C" NOT NULL,
        idempotency_key      text COLLATE "C" NOT NULL,
        reservation          text NOT NULL,
        created_at           timestamptz NOT NULL,
        locked_until         timestamptz,
        response_key_id      text,
        response_wrapped_key text,
        response_payload     text,
        PRIMARY KEY (tenant_id, mode, api_key_id, idempotency_key),
        CONSTRAINT idempotent_requests_reserved_or_answered CHECK (
          (locked_until IS NOT NULL AND response_key_id IS NULL AND response_wrapped_key IS NULL AND response_payload IS NULL)
          OR (locked_until IS NULL AND response_key_id IS NOT NULL AND response_wrapped_key IS NOT NULL AND response_payload IS NOT NULL))
      );
      -- Pruning of expired rows.
      CREATE INDEX idempotent_requests_created ON idempotent_requests (created_at);
    `,
  },
  {
    version: 9,
    name: 'mcp resources and approvals',
    sql: `
      -- MCP resource registrations (core/mcp): the access paths of MCP clients to secrets, API key records and
      -- custom values. uri is one of the spec's patterns, unique per tenant + mode; ids and URIs compare byte-wise
      -- (COLLATE "C"), as in SQLite: the list order, its cursor, and the order master-key rotation pages in. A custom
      -- resource's value is sealed as a secret version is (value_key_id, value_wrapped_key, value_payload: all or none).
      CREATE TABLE mcp_resources (
        id                text COLLATE "C" PRIMARY KEY,
        tenant_id         text NOT NULL,
        mode              text NOT NULL CHECK (mode IN ('live', 'test')),
        uri               text COLLATE "C" NOT NULL,
        type              text NOT NULL CHECK (type IN ('secret', 'api-key', 'custom')),
        name              text NOT NULL,
        description       text NOT NULL,
        permissions       jsonb NOT NULL,
        requires_approval integer NOT NULL CHECK (requires_approval IN (0, 1)),
        approvers         jsonb NOT NULL,
        auto_approve      jsonb NOT NULL,
        value_key_id      text,
        value_wrapped_key text,
        value_payload     text,
        created_at        timestamptz NOT NULL,
        created_by        text NOT NULL,
        accessed_at       timestamptz,
        access_count      integer NOT NULL DEFAULT 0,
        CONSTRAINT mcp_resources_owner_uri UNIQUE (tenant_id, mode, uri),
        CHECK ((value_key_id IS NULL) = (value_wrapped_key IS NULL) AND (value_key_id IS NULL) = (value_payload IS NULL))
      );

      -- Requests for MCP access and their answers. status is stored as answered; a pending row past expires_at reads
      -- as expired (core/mcp-access/mcp.types.ts effectiveStatus) until something writes it so. Only the SHA-256 digest of
      -- an access token is kept. One live pending request per requester and resource: the partial unique index
      -- decides between concurrent requests, on any connection (stale pending rows are marked expired first).
      CREATE TABLE mcp_approvals (
        id              text COLLATE "C" PRIMARY KEY,
        tenant_id       text NOT NULL,
        mode            text NOT NULL CHECK (mode IN ('live', 'test')),
        resource_id     text COLLATE "C" NOT NULL REFERENCES mcp_resources (id),
        resource        text NOT NULL,
        operation       text NOT NULL CHECK (operation IN ('read', 'write')),
        reason          text NOT NULL,
        requested_by    text NOT NULL,
        requested_at    timestamptz NOT NULL,
        expires_at      timestamptz NOT NULL,
        status          text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
        responded_by    text,
        responded_at    timestamptz,
        response_reason text,
        auto_approved   integer NOT NULL CHECK (auto_approved IN (0, 1)),
        token_digest    text,
        CONSTRAINT mcp_approvals_token_digest UNIQUE (token_digest)
      );
      CREATE UNIQUE INDEX mcp_approvals_one_pending ON mcp_approvals (tenant_id, mode, requested_by, resource) WHERE status = 'pending';
      CREATE INDEX mcp_approvals_owner ON mcp_approvals (tenant_id, mode, requested_at, id COLLATE "C");
    `,
  },
  {
    version: 10,
    name: 'request metrics',
    sql: `
      -- Answered requests per minute (core/analytics/request-recorder.ts): one row per (tenant, mode, minute, surface,
      -- route, status class, key, user) and flush; readers add rows up. histogram is the sparse latency histogram
      -- (core/analytics/latency-histogram.ts). Kept 90 days (REQUEST_METRICS_RETENTION_MS).
      CREATE TABLE request_metrics (
        id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant_id      text NOT NULL,
        mode           text NOT NULL,
        minute         timestamptz NOT NULL,
        surface        text NOT NULL,
        route          text NOT NULL,
        status_class   integer NOT NULL,
        key_id         text NOT NULL,
        user_id        text NOT NULL,
        requests       integer NOT NULL,
        latency_sum_ms double precision NOT NULL,
        latency_max_ms double precision NOT NULL,
        histogram      jsonb NOT NULL,
        bytes_in       bigint NOT NULL,
        bytes_out      bigint NOT NULL
      );
      CREATE INDEX request_metrics_scope_minute ON request_metrics (tenant_id, mode, minute);
      CREATE INDEX request_metrics_minute ON request_metrics (minute);
    `,
  },
  {
    version: 11,
    name: 'vectors of several models per memory',
    sql: `
      -- A memory may hold one vector per model (mnemo reindex writes the new model's beside the old one, so searches
      -- keep answering from the old vectors until the new ones are complete). A write that re-embeds a memory replaces
      -- all of them.
      ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_pkey;
      ALTER TABLE memory_vectors ADD PRIMARY KEY (memory_seq, model_id);
    `,
  },
  {
    version: 12,
    name: 'memory content hashes',
    sql: `
      -- SHA-256 of the memory's normalised content (core/memories/content-hash.ts), written with the content; the
      -- adapter fills it for rows written before this migration when it opens the store. Deduplicating creates look a
      -- scope's memories up by it (not unique: a create without dedupe may store the same content twice).
      ALTER TABLE memories ADD COLUMN content_hash text;
      CREATE INDEX memories_scope_content_hash ON memories (tenant_id, mode, workspace, content_hash);
    `,
  },
  {
    version: 13,
    name: 'reindex progress',
    sql: `
      -- The store's last mnemo reindex run, for /health on every node (core/embeddings/reindex-progress.repository.ts):
      -- one row (slot 1), replaced by each new run and written by it as it goes. tenant_id, mode, workspace: the run's
      -- filter (NULL: every value). A row left 'running' by a process that died is read as stopped once updated_at
      -- is older than REINDEX_STALE_AFTER_MS. Not copied by mnemo migrate: it describes a run on this store.
      CREATE TABLE reindex_progress (
        slot        integer PRIMARY KEY CHECK (slot = 1),
        run_id      text NOT NULL,
        model_id    text NOT NULL,
        dims        integer NOT NULL,
        tenant_id   text,
        mode        text,
        workspace   text,
        state       text NOT NULL CHECK (state IN ('running', 'stopped', 'complete')),
        stop_reason text,
        done        integer NOT NULL,
        total       integer NOT NULL,
        written     integer NOT NULL,
        started_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        finished_at timestamptz
      );
    `,
  },
  {
    version: 14,
    name: 'audit chain heads, signed',
    sql: `
      -- The signed head of each audit chain (core/audit/audit.head.ts): the chain's last seq and hash, the master key
      -- id, the time and the HMAC, replaced in the transaction of every append (under the chain's advisory lock).
      -- Chains that exist now get an unsigned head (key_id, signed_at and mac NULL), which the server's next start
      -- signs at the chain's last row; the partial index keeps that look free once none is left.
      CREATE TABLE audit_heads (
        tenant_id  text COLLATE "C" NOT NULL,
        mode       text NOT NULL CHECK (mode IN ('live', 'test')),
        seq        bigint NOT NULL,
        hash       text NOT NULL,
        key_id     text,
        signed_at  timestamptz,
        mac        text,
        PRIMARY KEY (tenant_id, mode),
        CHECK ((key_id IS NULL) = (mac IS NULL) AND (signed_at IS NULL) = (mac IS NULL))
      );
      CREATE INDEX audit_heads_unsigned ON audit_heads (tenant_id, mode) WHERE mac IS NULL;
      INSERT INTO audit_heads (tenant_id, mode, seq, hash)
        SELECT DISTINCT ON (tenant_id, mode) tenant_id, mode, seq, hash FROM audit_logs ORDER BY tenant_id, mode, seq DESC;
    `,
  },
  {
    version: 18,
    name: 'memory validity, supersession, history and tombstones',
    sql: `
      -- As SQLite's migration 18 (docs/memory-lifecycle.md).
      ALTER TABLE memories ADD COLUMN valid_from timestamptz;
      UPDATE memories SET valid_from = created_at;
      ALTER TABLE memories ALTER COLUMN valid_from SET NOT NULL;
      ALTER TABLE memories ADD COLUMN valid_until timestamptz;
      ALTER TABLE memories ADD COLUMN superseded_by text COLLATE "C";
      ALTER TABLE memories ADD COLUMN version integer NOT NULL DEFAULT 1;
      CREATE INDEX memories_scope_bounded ON memories (tenant_id, mode, workspace, seq)
        WHERE valid_until IS NOT NULL OR valid_from > created_at;
      CREATE INDEX memories_scope_superseded_by ON memories (tenant_id, mode, workspace, superseded_by)
        WHERE superseded_by IS NOT NULL;

      CREATE TABLE memory_versions (
        memory_id   text COLLATE "C" NOT NULL,
        version     integer NOT NULL,
        tenant_id   text NOT NULL,
        mode        text NOT NULL,
        workspace   text NOT NULL,
        title       text NOT NULL,
        content     text NOT NULL,
        memory_type text NOT NULL,
        tags        text[] NOT NULL,
        metadata    jsonb NOT NULL,
        topic_id    text,
        valid_from  timestamptz NOT NULL,
        valid_until timestamptz,
        written_at  timestamptz NOT NULL,
        written_by  text NOT NULL,
        replaced_at timestamptz NOT NULL,
        replaced_by text NOT NULL,
        PRIMARY KEY (memory_id, version)
      );
      CREATE INDEX memory_versions_scope ON memory_versions (tenant_id, mode, workspace, memory_id);

      CREATE TABLE memory_tombstones (
        memory_id  text COLLATE "C" PRIMARY KEY,
        tenant_id  text NOT NULL,
        mode       text NOT NULL,
        workspace  text NOT NULL,
        deleted_at timestamptz NOT NULL,
        deleted_by text NOT NULL,
        reason     text NOT NULL
      );
      CREATE INDEX memory_tombstones_scope ON memory_tombstones (tenant_id, mode, workspace, deleted_at);

      ALTER TABLE events ADD COLUMN memory_id text COLLATE "C";
      UPDATE events SET memory_id = CASE WHEN type = 'embedding.generated' THEN data->>'memory_id' ELSE data->>'id' END
        WHERE type IN ('memory.created', 'memory.updated', 'memory.deleted', 'embedding.generated');
      CREATE INDEX events_memory ON events (memory_id) WHERE memory_id IS NOT NULL;
    `,
  },
  {
    // Numbered as SQLite's migration of the same tables (SQLite's 19 has no PostgreSQL counterpart).
    version: 20,
    name: 'ingestion jobs',
    sql: `
      -- As SQLite's migration 20: times are timestamptz, the JSON columns jsonb (times inside as ISO text).
      CREATE TABLE ingestions (
        id                text COLLATE "C" PRIMARY KEY,
        tenant_id         text NOT NULL,
        mode              text NOT NULL CHECK (mode IN ('live', 'test')),
        workspace         text NOT NULL,
        requested_by_key  text NOT NULL,
        requested_by_user text NOT NULL,
        ingest_mode       text NOT NULL CHECK (ingest_mode IN ('extract', 'raw')),
        policy            text NOT NULL CHECK (policy IN ('review', 'auto')),
        state             text NOT NULL CHECK (state IN ('queued', 'running', 'pending_review', 'completed', 'failed')),
        messages          jsonb NOT NULL,
        metadata          jsonb NOT NULL,
        tags              jsonb NOT NULL,
        proposals         jsonb NOT NULL,
        error             jsonb,
        usage             jsonb NOT NULL,
        prompt_version    text,
        attempts          integer NOT NULL DEFAULT 0,
        revision          integer NOT NULL DEFAULT 0,
        lease_token       text,
        lease_until       timestamptz,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        finished_at       timestamptz,
        CHECK ((lease_token IS NULL) = (lease_until IS NULL))
      );
      CREATE INDEX ingestions_scope ON ingestions (tenant_id, mode, workspace, created_at, id);
      CREATE INDEX ingestions_due ON ingestions (created_at, id) WHERE state IN ('queued', 'running');
      CREATE INDEX ingestions_active ON ingestions (tenant_id, lease_until) WHERE state IN ('queued', 'running');
      CREATE INDEX ingestions_finished ON ingestions (finished_at) WHERE state IN ('completed', 'failed');
    `,
  },
  {
    // PostgreSQL only (no SQLite counterpart).
    version: 21,
    name: 'vectors stored in the row',
    sql: `
      -- pgvector's type is stored out of line past about 2 kB (512 dimensions and up), so an exact scan read three
      -- TOAST pages per vector (EXPLAIN: 30,000 buffers for 10,000 vectors); rows up to a page keep them inline. Rows
      -- written before keep their layout until rewritten (VACUUM FULL memory_vectors rewrites them all).
      ALTER TABLE memory_vectors SET (toast_tuple_target = 8160);
    `,
  },
  {
    version: 22,
    name: 'oauth',
    sql: `
      -- OAuth 2.1 for remote MCP clients: as SQLite's migration 21 (codes and tokens as SHA-256 digests only).
      CREATE TABLE oauth_clients (
        id            text PRIMARY KEY,
        name          text NOT NULL,
        redirect_uris jsonb NOT NULL,
        created_at    timestamptz NOT NULL
      );
      CREATE TABLE oauth_grants (
        id           text PRIMARY KEY,
        client_id    text NOT NULL,
        tenant_id    text NOT NULL,
        mode         text NOT NULL CHECK (mode IN ('live', 'test')),
        workspace    text NOT NULL,
        key_id       text NOT NULL,
        user_id      text NOT NULL,
        scopes       jsonb NOT NULL,
        created_at   timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at   timestamptz
      );
      CREATE INDEX oauth_grants_owner ON oauth_grants (tenant_id, mode, created_at, id COLLATE "C");
      CREATE TABLE oauth_codes (
        digest         text PRIMARY KEY,
        client_id      text NOT NULL,
        redirect_uri   text NOT NULL,
        code_challenge text NOT NULL,
        resource       text,
        grant_id       text NOT NULL,
        tenant_id      text NOT NULL,
        mode           text NOT NULL CHECK (mode IN ('live', 'test')),
        workspace      text NOT NULL,
        key_id         text NOT NULL,
        user_id        text NOT NULL,
        scopes         jsonb NOT NULL,
        created_at     timestamptz NOT NULL,
        expires_at     timestamptz NOT NULL,
        used_at        timestamptz
      );
      CREATE TABLE oauth_tokens (
        digest     text PRIMARY KEY,
        grant_id   text NOT NULL,
        kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at    timestamptz
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
      -- Codes and tokens past their expiry, for their pruning (periodic-events.ts).
      CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);
      CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
    `,
  },
  {
    // PostgreSQL only (SQLite's workspace_versions plays this part there).
    version: 23,
    name: 'vector change log',
    sql: `
      -- Each node keeps a workspace's vectors as int8 codes in memory (pg-vector-index.ts) and brings them up to date
      -- before every search from this log: per workspace a version, bumped once per statement that changes its
      -- vectors (the row lock makes concurrent writers take turns, so versions become visible in commit order), and
      -- per memory the version of its last change. "version > N" is then exactly what a node at N has not seen.
      CREATE TABLE vector_versions (
        tenant_id text NOT NULL,
        mode      text NOT NULL,
        workspace text NOT NULL,
        version   bigint NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace)
      );
      CREATE TABLE vector_changes (
        tenant_id  text NOT NULL,
        mode       text NOT NULL,
        workspace  text NOT NULL,
        memory_seq bigint NOT NULL,
        version    bigint NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace, memory_seq)
      );
      CREATE INDEX vector_changes_version ON vector_changes (tenant_id, mode, workspace, version);

      -- A statement's changed vectors noted: its workspaces' versions bumped once, each memory's change at the new one.
      CREATE FUNCTION note_vector_changes(tenants text[], modes text[], workspaces text[], seqs bigint[]) RETURNS void
      LANGUAGE sql AS $fn$
        WITH changed AS (
          SELECT DISTINCT * FROM unnest(tenants, modes, workspaces, seqs) AS c(tenant_id, mode, workspace, memory_seq)
        ), bumped AS (
          INSERT INTO vector_versions AS w (tenant_id, mode, workspace, version)
          SELECT DISTINCT tenant_id, mode, workspace, 1 FROM changed
          ON CONFLICT (tenant_id, mode, workspace) DO UPDATE SET version = w.version + 1
          RETURNING w.tenant_id, w.mode, w.workspace, w.version
        )
        INSERT INTO vector_changes (tenant_id, mode, workspace, memory_seq, version)
        SELECT c.tenant_id, c.mode, c.workspace, c.memory_seq, b.version FROM changed c
          JOIN bumped b ON b.tenant_id = c.tenant_id AND b.mode = c.mode AND b.workspace = c.workspace
        ON CONFLICT (tenant_id, mode, workspace, memory_seq) DO UPDATE SET version = EXCLUDED.version;
      $fn$;
      -- A vector deleted with its memory finds no memory to name its workspace here: memory_vectors_forgotten notes it.
      CREATE FUNCTION memory_vectors_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM note_vector_changes(array_agg(m.tenant_id), array_agg(m.mode), array_agg(m.workspace), array_agg(m.seq))
          FROM changed_rows c JOIN memories m ON m.seq = c.memory_seq;
        RETURN NULL;
      END $fn$;
      CREATE FUNCTION memory_vectors_forgotten() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM note_vector_changes(array_agg(c.tenant_id), array_agg(c.mode), array_agg(c.workspace), array_agg(c.seq))
          FROM changed_rows c;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER memory_vectors_inserted AFTER INSERT ON memory_vectors
        REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changed();
      CREATE TRIGGER memory_vectors_updated AFTER UPDATE ON memory_vectors
        REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changed();
      CREATE TRIGGER memory_vectors_deleted AFTER DELETE ON memory_vectors
        REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_changed();
      -- Named to fire after the other AFTER triggers of memories (they fire by name): a statement that locks another
      -- per-workspace row as well then takes the workspace's version last, as inserts and updates do, never the reverse.
      CREATE TRIGGER memory_vectors_forgotten AFTER DELETE ON memories
        REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_vectors_forgotten();

      -- Searches score vectors in memory now: the per-model HNSW indexes only slowed writes (BENCHMARKS.md, issue 39).
      -- A node configured to score in SQL creates its model's index again on its first write of that model.
      DO $drop$ DECLARE r record; BEGIN
        FOR r IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'memory\\_vectors\\_hnsw\\_%' LOOP
          EXECUTE format('DROP INDEX %I', r.indexname);
        END LOOP;
      END $drop$;

      -- The vectors stored so far: each memory changed at version 1.
      INSERT INTO vector_versions (tenant_id, mode, workspace, version)
        SELECT DISTINCT m.tenant_id, m.mode, m.workspace, 1 FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq;
      INSERT INTO vector_changes (tenant_id, mode, workspace, memory_seq, version)
        SELECT DISTINCT m.tenant_id, m.mode, m.workspace, m.seq, 1 FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq;
    `,
  },
  {
    // PostgreSQL only: SQLite reads the lengths from its keyword index (sqlite-keyword-lengths.ts).
    version: 24,
    name: 'keyword corpus statistics per scope',
    sql: `
      -- BM25's N and average length for a scope (pg-keyword-ranking.ts) were a count and sum over all its memories on
      -- every keyword search (a sequential scan of memories); this row keeps them, changed by each statement that adds,
      -- removes or re-measures memories, in its transaction (writers to one scope take turns on its row).
      CREATE TABLE memory_keyword_stats (
        tenant_id    text NOT NULL,
        mode         text NOT NULL,
        workspace    text NOT NULL,
        documents    bigint NOT NULL,
        total_length bigint NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace)
      );
      INSERT INTO memory_keyword_stats (tenant_id, mode, workspace, documents, total_length)
        SELECT tenant_id, mode, workspace, COUNT(*), COALESCE(SUM(keyword_length), 0) FROM memories GROUP BY 1, 2, 3;

      -- Per statement: each scope's change in memories and total length, added to its row; a scope whose figures do not
      -- move (an update of other columns, such as access counts) is not written, so its row is not locked.
      CREATE FUNCTION add_keyword_stats(tenants text[], modes text[], workspaces text[], documents bigint[], lengths bigint[])
      RETURNS void LANGUAGE sql AS $fn$
        INSERT INTO memory_keyword_stats AS s (tenant_id, mode, workspace, documents, total_length)
        SELECT d.tenant_id, d.mode, d.workspace, SUM(d.documents), SUM(d.total_length)
        FROM unnest(tenants, modes, workspaces, documents, lengths) AS d(tenant_id, mode, workspace, documents, total_length)
        GROUP BY 1, 2, 3 HAVING SUM(d.documents) <> 0 OR SUM(d.total_length) <> 0
        ORDER BY 1, 2, 3
        ON CONFLICT (tenant_id, mode, workspace) DO UPDATE
          SET documents = s.documents + EXCLUDED.documents, total_length = s.total_length + EXCLUDED.total_length;
      $fn$;
      -- One function for the three events: each branch reads only the transition tables its event has.
      CREATE FUNCTION memory_keyword_stats_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM add_keyword_stats(array_agg(n.tenant_id), array_agg(n.mode), array_agg(n.workspace),
            array_agg(1::bigint), array_agg(n.keyword_length::bigint)) FROM new_rows n;
        ELSIF TG_OP = 'DELETE' THEN
          PERFORM add_keyword_stats(array_agg(o.tenant_id), array_agg(o.mode), array_agg(o.workspace),
            array_agg(-1::bigint), array_agg(-o.keyword_length::bigint)) FROM old_rows o;
        ELSE
          PERFORM add_keyword_stats(array_agg(c.tenant_id), array_agg(c.mode), array_agg(c.workspace), array_agg(c.documents),
            array_agg(c.total_length))
          FROM (SELECT n.tenant_id, n.mode, n.workspace, 1::bigint AS documents, n.keyword_length::bigint AS total_length FROM new_rows n
                UNION ALL
                SELECT o.tenant_id, o.mode, o.workspace, -1::bigint, -o.keyword_length::bigint FROM old_rows o) c;
        END IF;
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER memory_keyword_stats_inserted AFTER INSERT ON memories
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_keyword_stats_changed();
      CREATE TRIGGER memory_keyword_stats_updated AFTER UPDATE ON memories
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_keyword_stats_changed();
      CREATE TRIGGER memory_keyword_stats_deleted AFTER DELETE ON memories
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_keyword_stats_changed();
    `,
  },
  {
    // PostgreSQL only: SQLite's keyword index is its own (FTS5).
    version: 25,
    name: 'keyword changes in the change log',
    sql: `
      -- Each node keeps a workspace's keywords in memory too (pg-keyword-index.ts), caught up from migration 23's log
      -- rather than a sibling one: a memory's keywords and vectors mostly change together (a new text is re-embedded),
      -- a forgotten memory is noted there already (memory_vectors_forgotten), and one log could let a hybrid search
      -- catch both indexes up in one read (today each index reads it in its own statement); each index merely
      -- re-reads a memory the other one needed (a vector after a tag edit). The same per-workspace version row orders these changes, so the commit-order argument holds as is.
      -- Noted: new memories, and updates that changed a memory's keywords or moved it (its old scope then sees it go);
      -- other updates (access counts, supersession) note nothing.
      CREATE FUNCTION memory_keywords_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM note_vector_changes(array_agg(n.tenant_id), array_agg(n.mode), array_agg(n.workspace), array_agg(n.seq))
            FROM new_rows n;
        ELSE
          PERFORM note_vector_changes(array_agg(c.tenant_id), array_agg(c.mode), array_agg(c.workspace), array_agg(c.seq))
          FROM (SELECT n.tenant_id, n.mode, n.workspace, n.seq, o.tenant_id AS old_tenant, o.mode AS old_mode,
                  o.workspace AS old_workspace, n.keywords IS DISTINCT FROM o.keywords
                  OR n.keyword_length IS DISTINCT FROM o.keyword_length AS rewritten
                FROM new_rows n JOIN old_rows o ON o.seq = n.seq) u,
            LATERAL (SELECT u.tenant_id, u.mode, u.workspace, u.seq
                     WHERE u.rewritten OR (u.tenant_id, u.mode, u.workspace) IS DISTINCT FROM (u.old_tenant, u.old_mode, u.old_workspace)
                     UNION ALL
                     SELECT u.old_tenant, u.old_mode, u.old_workspace, u.seq
                     WHERE (u.tenant_id, u.mode, u.workspace) IS DISTINCT FROM (u.old_tenant, u.old_mode, u.old_workspace)) c;
        END IF;
        RETURN NULL;
      END $fn$;
      -- Named to fire after memory_keyword_stats_* (AFTER triggers fire by name): the workspace's version is locked last.
      CREATE TRIGGER memory_vectors_keywords_inserted AFTER INSERT ON memories
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_keywords_changed();
      CREATE TRIGGER memory_vectors_keywords_updated AFTER UPDATE ON memories
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_keywords_changed();
    `,
  },
  {
    // PostgreSQL only: each node caches keys by digest (pg-api-key-cache.ts); SQLite reads its file in process.
    version: 26,
    name: 'api key change notifications',
    sql: `
      -- Every node LISTENs on mnemo_api_keys and forgets a key when it hears its id (all keys on '*'). NOTIFY is
      -- delivered at COMMIT, so a node hears of a revocation, rotation or re-scoping once it is visible. New keys need
      -- no notification: a digest not found is never cached.
      CREATE FUNCTION api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        PERFORM pg_notify('mnemo_api_keys', CASE WHEN TG_OP = 'TRUNCATE' THEN '*' ELSE OLD.id END);
        RETURN NULL;
      END $fn$;
      CREATE TRIGGER api_keys_changed AFTER UPDATE OR DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_keys_changed();
      CREATE TRIGGER api_keys_truncated AFTER TRUNCATE ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION api_keys_changed();
    `,
  },
  {
    // PostgreSQL only: the in-memory indexes' catch-up before each search (pg-index-catch-up.ts).
    version: 27,
    name: 'index catch-up functions',
    sql: `
      -- A search's catch-up: the workspace's version and, only when it moved past the node's, the changes since. As
      -- one statement of unions and subqueries it was planned afresh on every search, which cost PostgreSQL more than
      -- running it (BENCHMARKS.md, issue 39); a call of these is planned once per connection (prepared), and the
      -- changes query runs only after a write. STABLE: every query inside sees the calling statement's snapshot, so
      -- the version and the changes agree. Rows: kind 0 the version, kind 1 a change (pg-index-catch-up.ts KIND_*).
      CREATE FUNCTION vector_changes_after(p_tenant text, p_mode text, p_workspace text, p_model text, p_dims integer,
          p_after bigint, p_limit integer)
        RETURNS TABLE (kind integer, seq bigint, vector text) LANGUAGE plpgsql STABLE AS $fn$
      BEGIN
        kind := 0;
        seq := COALESCE((SELECT w.version FROM vector_versions w
          WHERE w.tenant_id = p_tenant AND w.mode = p_mode AND w.workspace = p_workspace), 0);
        vector := NULL;
        RETURN NEXT;
        IF seq > p_after THEN
          RETURN QUERY SELECT 1, c.memory_seq, (SELECT encode(vector_send(v.embedding), 'base64') FROM memory_vectors v
              WHERE v.memory_seq = c.memory_seq AND v.model_id = p_model AND v.dims = p_dims)
            FROM vector_changes c
            WHERE c.tenant_id = p_tenant AND c.mode = p_mode AND c.workspace = p_workspace AND c.version > p_after
            LIMIT p_limit;
        END IF;
      END $fn$;
      CREATE FUNCTION keyword_changes_after(p_tenant text, p_mode text, p_workspace text, p_after bigint, p_limit integer)
        RETURNS TABLE (kind integer, seq bigint, length bigint, keywords text) LANGUAGE plpgsql STABLE AS $fn$
      BEGIN
        kind := 0;
        seq := COALESCE((SELECT w.version FROM vector_versions w
          WHERE w.tenant_id = p_tenant AND w.mode = p_mode AND w.workspace = p_workspace), 0);
        length := NULL;
        keywords := NULL;
        RETURN NEXT;
        IF seq > p_after THEN
          -- NULLs for a memory gone from the scope (deleted, or moved to another workspace). Subqueries by primary key,
          -- as for the vectors: a join could be planned as a scan.
          RETURN QUERY SELECT 1, c.memory_seq,
              (SELECT m.keyword_length::bigint FROM memories m WHERE m.seq = c.memory_seq AND m.tenant_id = c.tenant_id
                AND m.mode = c.mode AND m.workspace = c.workspace),
              (SELECT m.keywords::text FROM memories m WHERE m.seq = c.memory_seq AND m.tenant_id = c.tenant_id
                AND m.mode = c.mode AND m.workspace = c.workspace)
            FROM vector_changes c
            WHERE c.tenant_id = p_tenant AND c.mode = p_mode AND c.workspace = p_workspace AND c.version > p_after
            LIMIT p_limit;
        END IF;
      END $fn$;
    `,
  },
];

/** Applies the pending migrations in one transaction under the advisory lock; returns the versions applied. */
export async function migratePostgres(db: PgExecutor, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  return db.transaction(async (tx) => {
    // Transaction-scoped: released at COMMIT or ROLLBACK, whatever happens to this process.
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
