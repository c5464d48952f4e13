/**
 * Schema migrations, in order. Each runs once, inside a transaction, recorded in `schema_migrations`.
 * Never edit a released migration: add a new one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'api keys and memories',
    sql: `
      CREATE TABLE api_keys (
        id             TEXT PRIMARY KEY,
        tenant_id      TEXT NOT NULL,
        user_id        TEXT NOT NULL,
        tier           TEXT NOT NULL CHECK (tier IN ('free', 'pro', 'enterprise')),
        mode           TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        scopes         TEXT NOT NULL,
        display_prefix TEXT NOT NULL,
        digest         TEXT NOT NULL UNIQUE,
        created_at     INTEGER NOT NULL,
        expires_at     INTEGER,
        revoked_at     INTEGER
      );
      CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

      CREATE TABLE memories (
        seq           INTEGER PRIMARY KEY,
        id            TEXT NOT NULL UNIQUE,
        tenant_id     TEXT NOT NULL,
        mode          TEXT NOT NULL,
        workspace     TEXT NOT NULL,
        title         TEXT NOT NULL,
        content       TEXT NOT NULL,
        memory_type   TEXT NOT NULL,
        tags          TEXT NOT NULL,
        metadata      TEXT NOT NULL,
        topic_id      TEXT,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL,
        created_by    TEXT NOT NULL,
        updated_by    TEXT NOT NULL,
        access_count  INTEGER NOT NULL DEFAULT 0,
        last_accessed INTEGER
      );
      CREATE INDEX memories_scope_id ON memories (tenant_id, mode, workspace, id);
      CREATE INDEX memories_scope_created ON memories (tenant_id, mode, workspace, created_at);
      CREATE INDEX memories_scope_updated ON memories (tenant_id, mode, workspace, updated_at);
      CREATE INDEX memories_scope_title ON memories (tenant_id, mode, workspace, title);
      CREATE INDEX memories_scope_type ON memories (tenant_id, mode, workspace, memory_type);

      CREATE TABLE memory_tags (
        memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
        tag        TEXT NOT NULL,
        PRIMARY KEY (memory_seq, tag)
      ) WITHOUT ROWID;
      CREATE INDEX memory_tags_tag ON memory_tags (tag, memory_seq);

      CREATE TABLE memory_vectors (
        memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        model_id   TEXT NOT NULL,
        dims       INTEGER NOT NULL,
        vector     BLOB NOT NULL
      );
      CREATE INDEX memory_vectors_model ON memory_vectors (model_id);
    `,
  },
  {
    version: 2,
    name: 'keyword index and search log',
    sql: `
      -- External-content FTS5 index over memories, kept in step by triggers in the same transaction as each write.
      CREATE VIRTUAL TABLE memories_fts USING fts5 (
        title, content, tags,
        content = 'memories', content_rowid = 'seq',
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, title, content, tags) VALUES (new.seq, new.title, new.content, new.tags);
      END;
      CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, title, content, tags)
          VALUES ('delete', old.seq, old.title, old.content, old.tags);
      END;
      CREATE TRIGGER memories_fts_update AFTER UPDATE OF title, content, tags ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, title, content, tags)
          VALUES ('delete', old.seq, old.title, old.content, old.tags);
        INSERT INTO memories_fts (rowid, title, content, tags) VALUES (new.seq, new.title, new.content, new.tags);
      END;
      INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');

      CREATE TABLE search_log (
        id             INTEGER PRIMARY KEY,
        tenant_id      TEXT NOT NULL,
        mode           TEXT NOT NULL,
        workspace      TEXT NOT NULL,
        user_id        TEXT NOT NULL,
        surface        TEXT NOT NULL,
        kind           TEXT NOT NULL,
        query          TEXT NOT NULL,
        query_norm     TEXT NOT NULL,
        results_count  INTEGER NOT NULL,
        execution_ms   REAL NOT NULL,
        avg_score      REAL,
        filters        TEXT NOT NULL,
        created_at     INTEGER NOT NULL
      );
      CREATE INDEX search_log_scope_time ON search_log (tenant_id, mode, workspace, created_at);
      CREATE INDEX search_log_scope_query ON search_log (tenant_id, mode, workspace, query_norm);
    `,
  },
  {
    version: 3,
    name: 'topics and client-supplied memory ids',
    sql: `
      CREATE TABLE topics (
        seq          INTEGER PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        tenant_id    TEXT NOT NULL,
        mode         TEXT NOT NULL,
        workspace    TEXT NOT NULL,
        name         TEXT NOT NULL,
        description  TEXT,
        parent_id    TEXT,
        metadata     TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        updated_at   INTEGER NOT NULL,
        created_by   TEXT NOT NULL
      );
      CREATE INDEX topics_scope_id ON topics (tenant_id, mode, workspace, id);
      CREATE UNIQUE INDEX topics_scope_parent_name ON topics (tenant_id, mode, workspace, COALESCE(parent_id, ''), name);

      -- G2 lets a client choose a memory's id: unique within the caller's scope only, so it can never reveal or
      -- collide with another tenant's data. The internal id stays a UUID.
      ALTER TABLE memories ADD COLUMN client_id TEXT;
      CREATE UNIQUE INDEX memories_scope_client_id ON memories (tenant_id, mode, workspace, client_id)
        WHERE client_id IS NOT NULL;
      CREATE INDEX memories_scope_topic ON memories (tenant_id, mode, workspace, topic_id);
    `,
  },
  {
    version: 4,
    name: 'event log, webhooks and deliveries (transactional outbox)',
    sql: `
      -- The event log. A memory change and its events commit in one transaction; seq orders the log.
      CREATE TABLE events (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        id         TEXT NOT NULL UNIQUE,
        tenant_id  TEXT,
        mode       TEXT,
        workspace  TEXT,
        type       TEXT NOT NULL,
        data       TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX events_scope_seq ON events (tenant_id, mode, seq);
      CREATE INDEX events_created ON events (created_at);

      CREATE TABLE webhooks (
        seq                   INTEGER PRIMARY KEY,
        id                    TEXT NOT NULL UNIQUE,
        kind                  TEXT NOT NULL CHECK (kind IN ('g9', 'g10')),
        tenant_id             TEXT NOT NULL,
        mode                  TEXT NOT NULL,
        workspace             TEXT,
        url                   TEXT NOT NULL,
        events                TEXT NOT NULL,
        secret                TEXT NOT NULL,
        description           TEXT,
        status                TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'failed')),
        retry_policy          TEXT NOT NULL,
        filters               TEXT NOT NULL,
        created_at            INTEGER NOT NULL,
        updated_at            INTEGER NOT NULL,
        last_delivery_at      INTEGER,
        total_attempts        INTEGER NOT NULL DEFAULT 0,
        successful_deliveries INTEGER NOT NULL DEFAULT 0,
        failed_deliveries     INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX webhooks_scope ON webhooks (tenant_id, mode, kind, created_at);

      -- One row per (event, webhook): written with the event, claimed with a lease, retried on the schedule.
      CREATE TABLE webhook_deliveries (
        seq             INTEGER PRIMARY KEY,
        id              TEXT NOT NULL UNIQUE,
        webhook_id      TEXT NOT NULL,
        event_seq       INTEGER NOT NULL,
        attempts        INTEGER NOT NULL DEFAULT 0,
        state           TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
        next_attempt_at INTEGER NOT NULL,
        lease_until     INTEGER,
        last_status     INTEGER,
        last_error      TEXT,
        created_at      INTEGER NOT NULL,
        finished_at     INTEGER
      );
      CREATE INDEX deliveries_due ON webhook_deliveries (state, next_attempt_at);
      CREATE INDEX deliveries_webhook ON webhook_deliveries (webhook_id, state);
      CREATE INDEX deliveries_event ON webhook_deliveries (event_seq);

      -- Producer requests already answered (POST /v1/events with Idempotency-Key).
      CREATE TABLE idempotency_keys (
        tenant_id    TEXT NOT NULL,
        mode         TEXT NOT NULL,
        key          TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        response     TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, mode, key)
      );
    `,
  },
  {
    version: 5,
    name: 'secrets: sealed versions and master-key checks',
    sql: `
      -- A named secret of a tenant + mode, without its value. Names compare byte-wise (BINARY collation): the list
      -- order and its cursor. tags is a JSON array (as memories.tags).
      CREATE TABLE secrets (
        id          TEXT PRIMARY KEY,
        tenant_id   TEXT NOT NULL,
        mode        TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        name        TEXT NOT NULL,
        tags        TEXT NOT NULL,
        version     INTEGER NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        expires_at  INTEGER,
        region      TEXT,
        created_by  TEXT NOT NULL,
        updated_by  TEXT NOT NULL,
        UNIQUE (tenant_id, mode, name)
      );

      -- The kept versions of each secret, each value sealed (AES-256-GCM) under a data key wrapped by master key key_id.
      CREATE TABLE secret_versions (
        secret_id   TEXT NOT NULL REFERENCES secrets (id) ON DELETE CASCADE,
        version     INTEGER NOT NULL,
        key_id      TEXT NOT NULL,
        wrapped_key TEXT NOT NULL,
        payload     TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        created_by  TEXT NOT NULL,
        PRIMARY KEY (secret_id, version)
      );

      -- A check value sealed under each master key at its first use: proves a configured key is the right one.
      CREATE TABLE master_key_checks (
        key_id      TEXT PRIMARY KEY,
        wrapped_key TEXT NOT NULL,
        payload     TEXT NOT NULL,
        created_at  INTEGER NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'api keys: names, rotation, pages per tenant and mode',
    sql: `
      -- A label for people; keys made before names existed get the command line's default.
      ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT 'API key';
      -- The key that replaced this one by rotation (its grace period is its expires_at).
      ALTER TABLE api_keys ADD COLUMN replaced_by TEXT;
      -- G11 lists one tenant's keys of one mode, oldest first, a page at a time.
      CREATE INDEX api_keys_owner ON api_keys (tenant_id, mode, created_at, id);
    `,
  },
  {
    version: 7,
    name: 'webhook signing secrets sealed',
    sql: `
      -- Signing secrets are sealed as G11 secrets are (secret_key_id, secret_wrapped_key, secret_payload; see
      -- core/webhooks/webhook-secret.ts). A migration has no key, so it cannot seal: the secrets already stored move
      -- to plaintext_secret, which the app seals and clears at its next start (sealPlaintextWebhookSecrets). A row
      -- holds exactly one of the two forms. SQLite cannot drop NOT NULL from a column: the table is rebuilt (nothing
      -- references it by foreign key).
      CREATE TABLE webhooks_sealed_secrets (
        seq                   INTEGER PRIMARY KEY,
        id                    TEXT NOT NULL UNIQUE,
        kind                  TEXT NOT NULL CHECK (kind IN ('g9', 'g10')),
        tenant_id             TEXT NOT NULL,
        mode                  TEXT NOT NULL,
        workspace             TEXT,
        url                   TEXT NOT NULL,
        events                TEXT NOT NULL,
        description           TEXT,
        status                TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'failed')),
        retry_policy          TEXT NOT NULL,
        filters               TEXT NOT NULL,
        created_at            INTEGER NOT NULL,
        updated_at            INTEGER NOT NULL,
        last_delivery_at      INTEGER,
        total_attempts        INTEGER NOT NULL DEFAULT 0,
        successful_deliveries INTEGER NOT NULL DEFAULT 0,
        failed_deliveries     INTEGER NOT NULL DEFAULT 0,
        plaintext_secret      TEXT,
        secret_key_id         TEXT,
        secret_wrapped_key    TEXT,
        secret_payload        TEXT,
        CHECK ((plaintext_secret IS NOT NULL AND secret_key_id IS NULL AND secret_wrapped_key IS NULL AND secret_payload IS NULL)
          OR (plaintext_secret IS NULL AND secret_key_id IS NOT NULL AND secret_wrapped_key IS NOT NULL AND secret_payload IS NOT NULL))
      );
      INSERT INTO webhooks_sealed_secrets (seq, id, kind, tenant_id, mode, workspace, url, events, description, status,
          retry_policy, filters, created_at, updated_at, last_delivery_at, total_attempts, successful_deliveries,
          failed_deliveries, plaintext_secret)
        SELECT seq, id, kind, tenant_id, mode, workspace, url, events, description, status,
          retry_policy, filters, created_at, updated_at, last_delivery_at, total_attempts, successful_deliveries,
          failed_deliveries, secret
        FROM webhooks;
      DROP TABLE webhooks;
      ALTER TABLE webhooks_sealed_secrets RENAME TO webhooks;
      CREATE INDEX webhooks_scope ON webhooks (tenant_id, mode, kind, created_at);
      -- What the start-up sealing looks for: empty once every secret is sealed, so the look costs nothing.
      CREATE INDEX webhooks_plaintext_secret ON webhooks (seq) WHERE plaintext_secret IS NOT NULL;
    `,
  },
  {
    version: 8,
    name: 'audit log: append-only, one hash chain per tenant and mode',
    sql: `
      -- G11 audit rows (core/audit). seq numbers each tenant + mode's chain 1, 2, 3 …; prev_hash and hash link it
      -- (core/audit/audit.hash.ts). metadata is the canonical JSON text that was hashed (keys sorted), kept as text
      -- so that it reads back byte for byte. created_at is epoch ms.
      CREATE TABLE audit_logs (
        tenant_id   TEXT NOT NULL,
        mode        TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        seq         INTEGER NOT NULL,
        id          TEXT NOT NULL UNIQUE,
        created_at  INTEGER NOT NULL,
        user_id     TEXT NOT NULL,
        key_id      TEXT,
        action      TEXT NOT NULL,
        resource    TEXT NOT NULL,
        outcome     TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
        status      INTEGER NOT NULL,
        ip          TEXT,
        user_agent  TEXT,
        region      TEXT,
        request_id  TEXT,
        metadata    TEXT NOT NULL,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL,
        PRIMARY KEY (tenant_id, mode, seq)
      );
      CREATE INDEX audit_logs_time ON audit_logs (tenant_id, mode, created_at);

      -- Append-only: the server never changes or removes a row. Whoever can drop these triggers can also edit rows;
      -- the hash chain is what shows it (mnemo audit verify).
      CREATE TRIGGER audit_logs_no_update BEFORE UPDATE ON audit_logs
        BEGIN SELECT RAISE(ABORT, 'audit_logs is append-only'); END;
      CREATE TRIGGER audit_logs_no_delete BEFORE DELETE ON audit_logs
        BEGIN SELECT RAISE(ABORT, 'audit_logs is append-only'); END;
    `,
  },
  {
    version: 9,
    name: 'webhooks of G11 (kind g11)',
    sql: `
      -- G11 webhooks (the secrets component's events) share the table with G9's and G10's: kind may now be 'g11'.
      -- SQLite cannot alter a CHECK constraint: the table is rebuilt as it stands, with the wider CHECK, its rows
      -- copied and its indexes made again (nothing references it by foreign key; deliveries name webhooks by id).
      CREATE TABLE webhooks_with_g11 (
        seq                   INTEGER PRIMARY KEY,
        id                    TEXT NOT NULL UNIQUE,
        kind                  TEXT NOT NULL CHECK (kind IN ('g9', 'g10', 'g11')),
        tenant_id             TEXT NOT NULL,
        mode                  TEXT NOT NULL,
        workspace             TEXT,
        url                   TEXT NOT NULL,
        events                TEXT NOT NULL,
        description           TEXT,
        status                TEXT NOT NULL CHECK (status IN ('active', 'disabled', 'failed')),
        retry_policy          TEXT NOT NULL,
        filters               TEXT NOT NULL,
        created_at            INTEGER NOT NULL,
        updated_at            INTEGER NOT NULL,
        last_delivery_at      INTEGER,
        total_attempts        INTEGER NOT NULL DEFAULT 0,
        successful_deliveries INTEGER NOT NULL DEFAULT 0,
        failed_deliveries     INTEGER NOT NULL DEFAULT 0,
        plaintext_secret      TEXT,
        secret_key_id         TEXT,
        secret_wrapped_key    TEXT,
        secret_payload        TEXT,
        CHECK ((plaintext_secret IS NOT NULL AND secret_key_id IS NULL AND secret_wrapped_key IS NULL AND secret_payload IS NULL)
          OR (plaintext_secret IS NULL AND secret_key_id IS NOT NULL AND secret_wrapped_key IS NOT NULL AND secret_payload IS NOT NULL))
      );
      INSERT INTO webhooks_with_g11 (seq, id, kind, tenant_id, mode, workspace, url, events, description, status,
          retry_policy, filters, created_at, updated_at, last_delivery_at, total_attempts, successful_deliveries,
          failed_deliveries, plaintext_secret, secret_key_id, secret_wrapped_key, secret_payload)
        SELECT seq, id, kind, tenant_id, mode, workspace, url, events, description, status,
          retry_policy, filters, created_at, updated_at, last_delivery_at, total_attempts, successful_deliveries,
          failed_deliveries, plaintext_secret, secret_key_id, secret_wrapped_key, secret_payload
        FROM webhooks;
      DROP TABLE webhooks;
      ALTER TABLE webhooks_with_g11 RENAME TO webhooks;
      CREATE INDEX webhooks_scope ON webhooks (tenant_id, mode, kind, created_at);
      CREATE INDEX webhooks_plaintext_secret ON webhooks (seq) WHERE plaintext_secret IS NOT NULL;
    `,
  },
  {
    version: 10,
    name: 'G11 idempotent requests: reservations and sealed answers',
    sql: `
      -- One row per Idempotency-Key of one API key (core/idempotency): first a reservation (locked_until set, no
      -- answer) written before the request runs, then the answer, sealed under the master key like a secret version
      -- (response_key_id, response_wrapped_key, response_payload). reservation is random per reservation: only it
      -- completes or frees the row, and it is part of the sealed value's context. created_at is epoch ms (the 24 h
      -- lifetime counts from it). A row is exactly one of the two states.
      CREATE TABLE idempotent_requests (
        tenant_id            TEXT NOT NULL,
        mode                 TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        api_key_id           TEXT NOT NULL,
        idempotency_key      TEXT NOT NULL,
        reservation          TEXT NOT NULL,
        created_at           INTEGER NOT NULL,
        locked_until         INTEGER,
        response_key_id      TEXT,
        response_wrapped_key TEXT,
        response_payload     TEXT,
        PRIMARY KEY (tenant_id, mode, api_key_id, idempotency_key),
        CHECK ((locked_until IS NOT NULL AND response_key_id IS NULL AND response_wrapped_key IS NULL AND response_payload IS NULL)
          OR (locked_until IS NULL AND response_key_id IS NOT NULL AND response_wrapped_key IS NOT NULL AND response_payload IS NOT NULL))
      );
      -- Pruning of expired rows.
      CREATE INDEX idempotent_requests_created ON idempotent_requests (created_at);
    `,
  },
  {
    version: 11,
    name: 'mcp resources and approvals',
    sql: `
      -- MCP resource registrations (core/mcp): the access paths of MCP clients to secrets, API key records and
      -- custom values. uri is one of the spec's patterns, unique per tenant + mode, compared byte-wise (the list
      -- order and its cursor). permissions, approvers and auto_approve are JSON. A custom resource's value is sealed
      -- as a secret version is (value_key_id, value_wrapped_key, value_payload: all three or none).
      CREATE TABLE mcp_resources (
        id                TEXT PRIMARY KEY,
        tenant_id         TEXT NOT NULL,
        mode              TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        uri               TEXT NOT NULL,
        type              TEXT NOT NULL CHECK (type IN ('secret', 'api-key', 'custom')),
        name              TEXT NOT NULL,
        description       TEXT NOT NULL,
        permissions       TEXT NOT NULL,
        requires_approval INTEGER NOT NULL CHECK (requires_approval IN (0, 1)),
        approvers         TEXT NOT NULL,
        auto_approve      TEXT NOT NULL,
        value_key_id      TEXT,
        value_wrapped_key TEXT,
        value_payload     TEXT,
        created_at        INTEGER NOT NULL,
        created_by        TEXT NOT NULL,
        accessed_at       INTEGER,
        access_count      INTEGER NOT NULL DEFAULT 0,
        UNIQUE (tenant_id, mode, uri),
        CHECK ((value_key_id IS NULL) = (value_wrapped_key IS NULL) AND (value_key_id IS NULL) = (value_payload IS NULL))
      );

      -- Requests for MCP access and their answers. status is stored as answered; a pending row past expires_at reads
      -- as expired (core/mcp-access/mcp.types.ts effectiveStatus) until something writes it so. Only the SHA-256 digest of
      -- an access token is kept. One live pending request per requester and resource: the partial unique index
      -- decides between concurrent requests (stale pending rows are marked expired first, in the same transaction).
      CREATE TABLE mcp_approvals (
        id              TEXT PRIMARY KEY,
        tenant_id       TEXT NOT NULL,
        mode            TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        resource_id     TEXT NOT NULL REFERENCES mcp_resources (id),
        resource        TEXT NOT NULL,
        operation       TEXT NOT NULL CHECK (operation IN ('read', 'write')),
        reason          TEXT NOT NULL,
        requested_by    TEXT NOT NULL,
        requested_at    INTEGER NOT NULL,
        expires_at      INTEGER NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
        responded_by    TEXT,
        responded_at    INTEGER,
        response_reason TEXT,
        auto_approved   INTEGER NOT NULL CHECK (auto_approved IN (0, 1)),
        token_digest    TEXT UNIQUE
      );
      CREATE UNIQUE INDEX mcp_approvals_one_pending ON mcp_approvals (tenant_id, mode, requested_by, resource) WHERE status = 'pending';
      CREATE INDEX mcp_approvals_owner ON mcp_approvals (tenant_id, mode, requested_at, id);
    `,
  },
  {
    version: 12,
    name: 'request metrics',
    sql: `
      -- Answered requests per minute (core/analytics/request-recorder.ts): one row per (tenant, mode, minute, surface,
      -- route, status class, key, user) and flush; readers add rows up. histogram is the sparse JSON latency histogram
      -- (core/analytics/latency-histogram.ts). minute is epoch ms. Kept 90 days (REQUEST_METRICS_RETENTION_MS).
      CREATE TABLE request_metrics (
        id             INTEGER PRIMARY KEY,
        tenant_id      TEXT NOT NULL,
        mode           TEXT NOT NULL,
        minute         INTEGER NOT NULL,
        surface        TEXT NOT NULL,
        route          TEXT NOT NULL,
        status_class   INTEGER NOT NULL,
        key_id         TEXT NOT NULL,
        user_id        TEXT NOT NULL,
        requests       INTEGER NOT NULL,
        latency_sum_ms REAL NOT NULL,
        latency_max_ms REAL NOT NULL,
        histogram      TEXT NOT NULL,
        bytes_in       INTEGER NOT NULL,
        bytes_out      INTEGER NOT NULL
      );
      CREATE INDEX request_metrics_scope_minute ON request_metrics (tenant_id, mode, minute);
      CREATE INDEX request_metrics_minute ON request_metrics (minute);
    `,
  },
  {
    version: 13,
    name: 'vectors of several models per memory',
    sql: `
      -- A memory may hold one vector per model (mnemo reindex writes the new model's beside the old one, so searches
      -- keep answering from the old vectors until the new ones are complete). A write that re-embeds a memory replaces
      -- all of them. SQLite cannot change a primary key in place: the table is rebuilt.
      CREATE TABLE memory_vectors_by_model (
        memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
        model_id   TEXT NOT NULL,
        dims       INTEGER NOT NULL,
        vector     BLOB NOT NULL,
        PRIMARY KEY (memory_seq, model_id)
      );
      INSERT INTO memory_vectors_by_model (memory_seq, model_id, dims, vector)
        SELECT memory_seq, model_id, dims, vector FROM memory_vectors;
      DROP TABLE memory_vectors;
      ALTER TABLE memory_vectors_by_model RENAME TO memory_vectors;
      CREATE INDEX memory_vectors_model ON memory_vectors (model_id, memory_seq);
    `,
  },
  {
    version: 14,
    name: 'memory content hashes',
    sql: `
      -- SHA-256 of the memory's normalised content (core/memories/content-hash.ts), written with the content; the
      -- adapter fills it for rows written before this migration when it opens the store. Deduplicating creates look a
      -- scope's memories up by it (not unique: a create without dedupe may store the same content twice).
      ALTER TABLE memories ADD COLUMN content_hash TEXT;
      CREATE INDEX memories_scope_content_hash ON memories (tenant_id, mode, workspace, content_hash);
    `,
  },
  {
    version: 15,
    name: 'workspace versions',
    sql: `
      -- A counter per (tenant, mode, workspace), moved on by every write that changes what an in-process search cache
      -- holds for it (a memory inserted, deleted, re-titled or re-worded, a vector written), whichever connection
      -- wrote. A cache compares it with the value it last saw, so a write in one workspace (or a key created by the
      -- CLI) never drops another workspace's cache (sqlite-workspace-versions.ts).
      CREATE TABLE workspace_versions (
        tenant_id TEXT NOT NULL,
        mode      TEXT NOT NULL,
        workspace TEXT NOT NULL,
        version   INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace)
      ) WITHOUT ROWID;
      -- Every workspace that holds memories gets a row now (warm-up lists workspaces from this table).
      INSERT INTO workspace_versions SELECT tenant_id, mode, workspace, 1 FROM memories GROUP BY tenant_id, mode, workspace;
      CREATE TRIGGER memories_version_insert AFTER INSERT ON memories BEGIN
        INSERT INTO workspace_versions VALUES (NEW.tenant_id, NEW.mode, NEW.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memories_version_delete AFTER DELETE ON memories BEGIN
        INSERT INTO workspace_versions VALUES (OLD.tenant_id, OLD.mode, OLD.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memories_version_update AFTER UPDATE OF tenant_id, mode, workspace, title, content ON memories BEGIN
        INSERT INTO workspace_versions VALUES (OLD.tenant_id, OLD.mode, OLD.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
        INSERT INTO workspace_versions VALUES (NEW.tenant_id, NEW.mode, NEW.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memory_vectors_version_insert AFTER INSERT ON memory_vectors BEGIN
        INSERT INTO workspace_versions SELECT tenant_id, mode, workspace, 1 FROM memories WHERE seq = NEW.memory_seq
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memory_vectors_version_update AFTER UPDATE ON memory_vectors BEGIN
        INSERT INTO workspace_versions SELECT tenant_id, mode, workspace, 1 FROM memories WHERE seq = NEW.memory_seq
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      -- A vector deleted on its own (its memory's deletion is counted by memories_version_delete).
      CREATE TRIGGER memory_vectors_version_delete AFTER DELETE ON memory_vectors BEGIN
        INSERT INTO workspace_versions SELECT tenant_id, mode, workspace, 1 FROM memories WHERE seq = OLD.memory_seq
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
    `,
  },
  {
    version: 16,
    name: 'reindex progress',
    sql: `
      -- The store's last mnemo reindex run, for /health on every node (core/embeddings/reindex-progress.repository.ts):
      -- one row (slot 1), replaced by each new run and written by it as it goes. tenant_id, mode, workspace: the run's
      -- filter (NULL: every value). A row left 'running' by a process that died is read as stopped once updated_at
      -- is older than REINDEX_STALE_AFTER_MS. Not copied by mnemo migrate: it describes a run on this store.
      CREATE TABLE reindex_progress (
        slot        INTEGER PRIMARY KEY CHECK (slot = 1),
        run_id      TEXT NOT NULL,
        model_id    TEXT NOT NULL,
        dims        INTEGER NOT NULL,
        tenant_id   TEXT,
        mode        TEXT,
        workspace   TEXT,
        state       TEXT NOT NULL CHECK (state IN ('running', 'stopped', 'complete')),
        stop_reason TEXT,
        done        INTEGER NOT NULL,
        total       INTEGER NOT NULL,
        written     INTEGER NOT NULL,
        started_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        finished_at INTEGER
      );
    `,
  },
  {
    version: 17,
    name: 'audit chain heads, signed',
    sql: `
      -- The signed head of each audit chain (core/audit/audit.head.ts): the chain's last seq and hash, the master key
      -- id, the time and the HMAC, replaced in the transaction of every append. signed_at is epoch ms. Chains that
      -- exist now get an unsigned head (key_id, signed_at and mac NULL), which the server's next start signs at the
      -- chain's last row; the partial index keeps that look free once none is left.
      CREATE TABLE audit_heads (
        tenant_id  TEXT NOT NULL,
        mode       TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        seq        INTEGER NOT NULL,
        hash       TEXT NOT NULL,
        key_id     TEXT,
        signed_at  INTEGER,
        mac        TEXT,
        PRIMARY KEY (tenant_id, mode),
        CHECK ((key_id IS NULL) = (mac IS NULL) AND (signed_at IS NULL) = (mac IS NULL))
      );
      CREATE INDEX audit_heads_unsigned ON audit_heads (tenant_id, mode) WHERE mac IS NULL;
      -- SQLite takes hash from the row holding MAX(seq).
      INSERT INTO audit_heads (tenant_id, mode, seq, hash)
        SELECT tenant_id, mode, MAX(seq), hash FROM audit_logs GROUP BY tenant_id, mode;
    `,
  },
  {
    version: 18,
    name: 'memory validity, supersession, history and tombstones',
    sql: `
      -- Validity in time (docs/memory-lifecycle.md): a memory holds from valid_from (epoch ms; its creation time unless
      -- set) until valid_until (NULL: open). superseded_by names the memory that replaced it (its valid_until is then
      -- the successor's valid_from). version counts the memory's states: 1 as created, +1 per update.
      ALTER TABLE memories ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE memories ADD COLUMN valid_until INTEGER;
      ALTER TABLE memories ADD COLUMN superseded_by TEXT;
      ALTER TABLE memories ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
      UPDATE memories SET valid_from = created_at;
      -- The few memories whose validity is bounded: a search finds those not valid now through this index alone.
      CREATE INDEX memories_scope_bounded ON memories (tenant_id, mode, workspace, seq)
        WHERE valid_until IS NOT NULL OR valid_from > created_at;
      CREATE INDEX memories_scope_superseded_by ON memories (tenant_id, mode, workspace, superseded_by)
        WHERE superseded_by IS NOT NULL;

      -- Every earlier state of a memory, written in the transaction of the update that replaced it. Deleted with the
      -- memory (forgetting leaves no content behind).
      CREATE TABLE memory_versions (
        memory_id   TEXT NOT NULL,
        version     INTEGER NOT NULL,
        tenant_id   TEXT NOT NULL,
        mode        TEXT NOT NULL,
        workspace   TEXT NOT NULL,
        title       TEXT NOT NULL,
        content     TEXT NOT NULL,
        memory_type TEXT NOT NULL,
        tags        TEXT NOT NULL,
        metadata    TEXT NOT NULL,
        topic_id    TEXT,
        valid_from  INTEGER NOT NULL,
        valid_until INTEGER,
        written_at  INTEGER NOT NULL,
        written_by  TEXT NOT NULL,
        replaced_at INTEGER NOT NULL,
        replaced_by TEXT NOT NULL,
        PRIMARY KEY (memory_id, version)
      );
      CREATE INDEX memory_versions_scope ON memory_versions (tenant_id, mode, workspace, memory_id);

      -- What a delete leaves: who deleted which memory, when and why; never its content.
      CREATE TABLE memory_tombstones (
        memory_id  TEXT PRIMARY KEY,
        tenant_id  TEXT NOT NULL,
        mode       TEXT NOT NULL,
        workspace  TEXT NOT NULL,
        deleted_at INTEGER NOT NULL,
        deleted_by TEXT NOT NULL,
        reason     TEXT NOT NULL
      );
      CREATE INDEX memory_tombstones_scope ON memory_tombstones (tenant_id, mode, workspace, deleted_at);

      -- The memory an event is about (memory.* and embedding.generated), so forgetting can find its stored events.
      ALTER TABLE events ADD COLUMN memory_id TEXT;
      UPDATE events SET memory_id = CASE WHEN type = 'embedding.generated' THEN json_extract(data, '$.memory_id')
        ELSE json_extract(data, '$.id') END
        WHERE type IN ('memory.created', 'memory.updated', 'memory.deleted', 'embedding.generated') AND json_valid(data);
      CREATE INDEX events_memory ON events (memory_id) WHERE memory_id IS NOT NULL;
    `,
  },
  {
    version: 19,
    name: 'keyword index: secure delete',
    sql: `
      -- FTS5 removes a deleted memory's entries from the index's segments at once instead of adding delete markers
      -- that leave its words in the file until a merge (SQLite 3.44+; kept in memories_fts_config). With PRAGMA
      -- secure_delete (sqlite.database.ts), a forgotten memory's words leave the file (docs/api.md, "Forgetting").
      INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1);
    `,
  },
  {
    version: 20,
    name: 'ingestion jobs',
    sql: `
      -- Ingestion jobs (core/ingestion): a conversation in, proposed memories out. mode is the key's mode, ingest_mode
      -- the job's (extract or raw). A worker leases a job as the outbox leases a delivery (lease_token, lease_until
      -- epoch ms, both or neither); revision goes up on every save, so a review saves only over what it read.
      -- messages, metadata, tags, proposals, error and usage are JSON (times inside as ISO text).
      CREATE TABLE ingestions (
        id                TEXT PRIMARY KEY,
        tenant_id         TEXT NOT NULL,
        mode              TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        workspace         TEXT NOT NULL,
        requested_by_key  TEXT NOT NULL,
        requested_by_user TEXT NOT NULL,
        ingest_mode       TEXT NOT NULL CHECK (ingest_mode IN ('extract', 'raw')),
        policy            TEXT NOT NULL CHECK (policy IN ('review', 'auto')),
        state             TEXT NOT NULL CHECK (state IN ('queued', 'running', 'pending_review', 'completed', 'failed')),
        messages          TEXT NOT NULL,
        metadata          TEXT NOT NULL,
        tags              TEXT NOT NULL,
        proposals         TEXT NOT NULL,
        error             TEXT,
        usage             TEXT NOT NULL,
        prompt_version    TEXT,
        attempts          INTEGER NOT NULL DEFAULT 0,
        revision          INTEGER NOT NULL DEFAULT 0,
        lease_token       TEXT,
        lease_until       INTEGER,
        created_at        INTEGER NOT NULL,
        updated_at        INTEGER NOT NULL,
        finished_at       INTEGER,
        CHECK ((lease_token IS NULL) = (lease_until IS NULL))
      );
      -- A scope's jobs, newest first.
      CREATE INDEX ingestions_scope ON ingestions (tenant_id, mode, workspace, created_at, id);
      -- What a worker may claim, oldest first; finished jobs stay out of it.
      CREATE INDEX ingestions_due ON ingestions (created_at, id) WHERE state IN ('queued', 'running');
      -- A tenant's active jobs (the cap on new ones) and their leases (the cap on jobs run at once).
      CREATE INDEX ingestions_active ON ingestions (tenant_id, lease_until) WHERE state IN ('queued', 'running');
      -- Finished jobs by age, for their pruning (finished_at lies past the JSON columns: a scan would read them all).
      CREATE INDEX ingestions_finished ON ingestions (finished_at) WHERE state IN ('completed', 'failed');
    `,
  },
  {
    version: 21,
    name: 'oauth',
    sql: `
      -- OAuth 2.1 for remote MCP clients (core/oauth, docs/oauth.md). Clients register themselves (public, no secret);
      -- codes and tokens are stored as SHA-256 digests only. A code carries the grant it becomes (grant_id, scopes,
      -- …) and is redeemed once (used_at); a refresh token is spent once (used_at). Times are epoch ms; JSON columns
      -- hold string arrays.
      CREATE TABLE oauth_clients (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        created_at    INTEGER NOT NULL
      );
      CREATE TABLE oauth_grants (
        id           TEXT PRIMARY KEY,
        client_id    TEXT NOT NULL,
        tenant_id    TEXT NOT NULL,
        mode         TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        workspace    TEXT NOT NULL,
        key_id       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        scopes       TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at   INTEGER
      );
      -- An owner's grants, newest first (the dashboard's Connected apps).
      CREATE INDEX oauth_grants_owner ON oauth_grants (tenant_id, mode, created_at, id);
      CREATE TABLE oauth_codes (
        digest         TEXT PRIMARY KEY,
        client_id      TEXT NOT NULL,
        redirect_uri   TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        resource       TEXT,
        grant_id       TEXT NOT NULL,
        tenant_id      TEXT NOT NULL,
        mode           TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        workspace      TEXT NOT NULL,
        key_id         TEXT NOT NULL,
        user_id        TEXT NOT NULL,
        scopes         TEXT NOT NULL,
        created_at     INTEGER NOT NULL,
        expires_at     INTEGER NOT NULL,
        used_at        INTEGER
      );
      CREATE TABLE oauth_tokens (
        digest     TEXT PRIMARY KEY,
        grant_id   TEXT NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at    INTEGER
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
      -- Codes and tokens past their expiry, for their pruning (periodic-events.ts).
      CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);
      CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
    `,
  },
  {
    version: 22,
    name: 'metadata index and filter versions',
    sql: `
      -- What a metadata filter matches, by index (similarity prefilters: allowedSeqs in sqlite-memory.repository.ts): a row for every
      -- (JSON path, value) that json_each(metadata, path) yields, i.e. the value at a path of object keys, and each
      -- element or member of an array or object there. key is json_tree's path text ($.a."b-c"); value has no type
      -- (no affinity), so it compares as json_each's value does. Rows whose metadata SQLite cannot read have none:
      -- they match no metadata condition, as the guarded filter has it.
      CREATE TABLE memory_metadata (
        key        TEXT NOT NULL,
        value      NOT NULL,
        memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
        PRIMARY KEY (key, value, memory_seq)
      ) WITHOUT ROWID;
      CREATE INDEX memory_metadata_seq ON memory_metadata (memory_seq);
      CREATE TRIGGER memory_metadata_insert AFTER INSERT ON memories BEGIN
        INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
          SELECT j.fullkey, j.value, NEW.seq FROM json_tree(CASE WHEN json_valid(NEW.metadata) THEN NEW.metadata ELSE '{}' END) j
          WHERE j.parent IS NOT NULL AND j.value IS NOT NULL AND instr(j.fullkey, '[') = 0;
        INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
          SELECT j.path, j.value, NEW.seq FROM json_tree(CASE WHEN json_valid(NEW.metadata) THEN NEW.metadata ELSE '{}' END) j
          WHERE j.path <> '$' AND j.value IS NOT NULL AND instr(j.path, '[') = 0;
      END;
      CREATE TRIGGER memory_metadata_update AFTER UPDATE OF metadata ON memories BEGIN
        DELETE FROM memory_metadata WHERE memory_seq = OLD.seq;
        INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
          SELECT j.fullkey, j.value, NEW.seq FROM json_tree(CASE WHEN json_valid(NEW.metadata) THEN NEW.metadata ELSE '{}' END) j
          WHERE j.parent IS NOT NULL AND j.value IS NOT NULL AND instr(j.fullkey, '[') = 0;
        INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
          SELECT j.path, j.value, NEW.seq FROM json_tree(CASE WHEN json_valid(NEW.metadata) THEN NEW.metadata ELSE '{}' END) j
          WHERE j.path <> '$' AND j.value IS NOT NULL AND instr(j.path, '[') = 0;
      END;
      INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
        SELECT j.fullkey, j.value, m.seq FROM memories m, json_tree(CASE WHEN json_valid(m.metadata) THEN m.metadata ELSE '{}' END) j
        WHERE j.parent IS NOT NULL AND j.value IS NOT NULL AND instr(j.fullkey, '[') = 0;
      INSERT OR IGNORE INTO memory_metadata (key, value, memory_seq)
        SELECT j.path, j.value, m.seq FROM memories m, json_tree(CASE WHEN json_valid(m.metadata) THEN m.metadata ELSE '{}' END) j
        WHERE j.path <> '$' AND j.value IS NOT NULL AND instr(j.path, '[') = 0;

      -- A workspace's filter version: moved on by every write that can change which memories a filter keeps (a memory
      -- added or deleted, or its scope, type, tags, metadata, topic or creation time changed), from any connection.
      -- Cached prefilter results (sqlite-filter-cache.ts) hold while it stands. Validity is not here: searches
      -- leave out the memories not valid at their moment apart.
      CREATE TABLE workspace_filter_versions (
        tenant_id TEXT NOT NULL,
        mode      TEXT NOT NULL,
        workspace TEXT NOT NULL,
        version   INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace)
      ) WITHOUT ROWID;
      CREATE TRIGGER memories_filter_version_insert AFTER INSERT ON memories BEGIN
        INSERT INTO workspace_filter_versions VALUES (NEW.tenant_id, NEW.mode, NEW.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memories_filter_version_delete AFTER DELETE ON memories BEGIN
        INSERT INTO workspace_filter_versions VALUES (OLD.tenant_id, OLD.mode, OLD.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
      CREATE TRIGGER memories_filter_version_update
        AFTER UPDATE OF tenant_id, mode, workspace, memory_type, tags, metadata, topic_id, created_at ON memories BEGIN
        INSERT INTO workspace_filter_versions VALUES (OLD.tenant_id, OLD.mode, OLD.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
        INSERT INTO workspace_filter_versions VALUES (NEW.tenant_id, NEW.mode, NEW.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
      END;
    `,
  },
  {
    version: 23,
    name: 'filter change log',
    sql: `
      -- Which memory each filter version moved on for (sqlite-filter-cache.ts): a cached filter result a few versions
      -- behind re-checks only those memories instead of reading the filter again (at 100k a broad filter's first
      -- search after a write cost up to 7x the unfiltered one). One row per version, from any connection; versions
      -- from before this log have none, and a cache that finds a range incomplete reads the filter again.
      CREATE TABLE workspace_filter_changes (
        tenant_id  TEXT NOT NULL,
        mode       TEXT NOT NULL,
        workspace  TEXT NOT NULL,
        version    INTEGER NOT NULL,
        memory_seq INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace, version)
      ) WITHOUT ROWID;
      -- Every 1,024th version drops the rows 2,048 versions older: the newest 2,048 at least stay.
      CREATE TRIGGER workspace_filter_changes_prune AFTER INSERT ON workspace_filter_changes WHEN NEW.version % 1024 = 0 BEGIN
        DELETE FROM workspace_filter_changes
          WHERE tenant_id = NEW.tenant_id AND mode = NEW.mode AND workspace = NEW.workspace AND version <= NEW.version - 2048;
      END;
      DROP TRIGGER memories_filter_version_insert;
      DROP TRIGGER memories_filter_version_delete;
      DROP TRIGGER memories_filter_version_update;
      CREATE TRIGGER memories_filter_version_insert AFTER INSERT ON memories BEGIN
        ${filterVersionStep('NEW')}
      END;
      CREATE TRIGGER memories_filter_version_delete AFTER DELETE ON memories BEGIN
        ${filterVersionStep('OLD')}
      END;
      CREATE TRIGGER memories_filter_version_update
        AFTER UPDATE OF tenant_id, mode, workspace, memory_type, tags, metadata, topic_id, created_at ON memories BEGIN
        ${filterVersionStep('OLD')}
        ${filterVersionStep('NEW')}
      END;
    `,
  },
  {
    version: 24,
    name: 'vector snapshots; memories missing a content hash',
    sql: `
      -- Which file of persisted vector codes (sqlite-vector-snapshots.ts) holds a workspace's index of one model, and
      -- the workspace version it reflects: a restart reads that file instead of quantising every stored float, only
      -- while workspace_versions still has that version and the file carries the same token (else it is rebuilt).
      CREATE TABLE vector_snapshots (
        tenant_id TEXT NOT NULL,
        mode      TEXT NOT NULL,
        workspace TEXT NOT NULL,
        model_id  TEXT NOT NULL,
        dims      INTEGER NOT NULL,
        version   INTEGER NOT NULL,
        token     TEXT NOT NULL,
        PRIMARY KEY (tenant_id, mode, workspace, model_id)
      ) WITHOUT ROWID;
      -- The rows the content-hash backfill (run at every open: sqlite-memory.repository.ts) looks for, indexed: it
      -- read the whole table each start (6 s before listening at a million memories); the index is empty once done.
      CREATE INDEX memories_content_hash_missing ON memories (seq) WHERE content_hash IS NULL;
    `,
  },
];

/** A trigger's step for one row (`NEW` or `OLD`): its workspace's filter version moved on, and the row's seq logged at it. */
function filterVersionStep(row: 'NEW' | 'OLD'): string {
  return `INSERT INTO workspace_filter_versions VALUES (${row}.tenant_id, ${row}.mode, ${row}.workspace, 1)
          ON CONFLICT DO UPDATE SET version = version + 1;
        INSERT INTO workspace_filter_changes (tenant_id, mode, workspace, version, memory_seq)
          SELECT tenant_id, mode, workspace, version, ${row}.seq FROM workspace_filter_versions
          WHERE tenant_id = ${row}.tenant_id AND mode = ${row}.mode AND workspace = ${row}.workspace;`;
}
