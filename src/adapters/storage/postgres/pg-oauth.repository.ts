import type { Permission } from '../../../core/api-keys/api-key.types.ts';
import type { OAuthRepository } from '../../../core/oauth/oauth.repository.ts';
import type { OAuthClient, OAuthCode, OAuthGrant, OAuthToken, OAuthTokenKind } from '../../../core/oauth/oauth.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import { pgJson, pgTime, pgTimeOrNull, type PgExecutor, type PgQueryable } from './pg-executor.ts';

interface ClientRow { id: string; name: string; redirect_uris: string[]; created_at: Date }
interface GrantRow {
  id: string; client_id: string; tenant_id: string; mode: string; workspace: string; key_id: string; user_id: string; scopes: Permission[];
  created_at: Date; last_used_at: Date | null; revoked_at: Date | null;
}
interface CodeRow {
  digest: string; client_id: string; redirect_uri: string; code_challenge: string; resource: string | null; grant_id: string;
  tenant_id: string; mode: string; workspace: string; key_id: string; user_id: string; scopes: Permission[]; created_at: Date;
  expires_at: Date; used_at: Date | null;
}
interface TokenRow { digest: string; grant_id: string; kind: string; created_at: Date; expires_at: Date; used_at: Date | null }

const toClient = (r: ClientRow): OAuthClient => ({ id: r.id, name: r.name, redirectUris: r.redirect_uris, createdAt: r.created_at });
const toGrant = (r: GrantRow): OAuthGrant => ({
  id: r.id, clientId: r.client_id, tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace, keyId: r.key_id, userId: r.user_id,
  scopes: r.scopes, createdAt: r.created_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at,
});
const toCode = (r: CodeRow): OAuthCode => ({
  digest: r.digest, clientId: r.client_id, redirectUri: r.redirect_uri, codeChallenge: r.code_challenge, resource: r.resource,
  grant: {
    id: r.grant_id, clientId: r.client_id, tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace, keyId: r.key_id,
    userId: r.user_id, scopes: r.scopes,
  },
  createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
});
const toToken = (r: TokenRow): OAuthToken => ({
  digest: r.digest, grantId: r.grant_id, kind: r.kind as OAuthTokenKind, createdAt: r.created_at, expiresAt: r.expires_at, usedAt: r.used_at,
});

async function addTokens(tx: PgQueryable, tokens: readonly OAuthToken[]): Promise<void> {
  for (const t of tokens) {
    await tx.query('INSERT INTO oauth_tokens (digest, grant_id, kind, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [t.digest, t.grantId, t.kind, pgTime(t.createdAt), pgTime(t.expiresAt), pgTimeOrNull(t.usedAt)]);
  }
}

/**
 * OAuth clients, codes, grants and tokens. Single use is one conditional UPDATE (`used_at IS NULL`) first in each
 * write's transaction: a concurrent one waits for the row lock, re-checks, and matches nothing.
 */
export function createPgOAuthRepository(db: PgExecutor): OAuthRepository {
  return {
    async insertClient(c) {
      await db.query('INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES ($1, $2, $3::jsonb, $4)',
        [c.id, c.name, pgJson(c.redirectUris), pgTime(c.createdAt)]);
    },
    async findClient(id) {
      const [row] = await db.query<ClientRow>('SELECT * FROM oauth_clients WHERE id = $1', [id]);
      return row ? toClient(row) : null;
    },
    async insertCode(c) {
      const g = c.grant;
      await db.query(`INSERT INTO oauth_codes (digest, client_id, redirect_uri, code_challenge, resource, grant_id, tenant_id, mode, workspace,
        key_id, user_id, scopes, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15)`,
      [c.digest, c.clientId, c.redirectUri, c.codeChallenge, c.resource, g.id, g.tenantId, g.mode, g.workspace, g.keyId, g.userId,
        pgJson(g.scopes), pgTime(c.createdAt), pgTime(c.expiresAt), pgTimeOrNull(c.usedAt)]);
    },
    async findCode(digest) {
      const [row] = await db.query<CodeRow>('SELECT * FROM oauth_codes WHERE digest = $1', [digest]);
      return row ? toCode(row) : null;
    },
    async redeemCode(digest, at, g, tokens) {
      return db.transaction(async (tx) => {
        const used = await tx.query('UPDATE oauth_codes SET used_at = $1 WHERE digest = $2 AND used_at IS NULL RETURNING digest', [pgTime(at), digest]);
        if (used.length === 0) return false;
        await tx.query(`INSERT INTO oauth_grants (id, client_id, tenant_id, mode, workspace, key_id, user_id, scopes, created_at, last_used_at,
          revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)`,
        [g.id, g.clientId, g.tenantId, g.mode, g.workspace, g.keyId, g.userId, pgJson(g.scopes), pgTime(g.createdAt),
          pgTimeOrNull(g.lastUsedAt), pgTimeOrNull(g.revokedAt)]);
        await addTokens(tx, tokens);
        return true;
      });
    },
    // One round trip: every OAuth-authenticated request presents a token.
    async findToken(digest) {
      const [row] = await db.query<TokenRow & Omit<GrantRow, 'id' | 'created_at'> & { grant_created_at: Date }>(
        `SELECT t.*, g.client_id, g.tenant_id, g.mode, g.workspace, g.key_id, g.user_id, g.scopes, g.created_at AS grant_created_at,
          g.last_used_at, g.revoked_at
        FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.digest = $1`, [digest]);
      return row ? { token: toToken(row), grant: toGrant({ ...row, id: row.grant_id, created_at: row.grant_created_at }) } : null;
    },
    async rotateRefresh(digest, at, tokens) {
      return db.transaction(async (tx) => {
        const used = await tx.query("UPDATE oauth_tokens SET used_at = $1 WHERE digest = $2 AND kind = 'refresh' AND used_at IS NULL RETURNING digest",
          [pgTime(at), digest]);
        if (used.length === 0) return false;
        await addTokens(tx, tokens);
        return true;
      });
    },
    async findGrant(id) {
      const [row] = await db.query<GrantRow>('SELECT * FROM oauth_grants WHERE id = $1', [id]);
      return row ? toGrant(row) : null;
    },
    async touchGrant(id, at) {
      await db.query('UPDATE oauth_grants SET last_used_at = $1 WHERE id = $2', [pgTime(at), id]);
    },
    async revokeGrant(id, at) {
      const rows = await db.query('UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id', [pgTime(at), id]);
      return rows.length > 0;
    },
    async pruneExpired(before) {
      const codes = await db.query('DELETE FROM oauth_codes WHERE expires_at < $1 RETURNING digest', [pgTime(before)]);
      const tokens = await db.query('DELETE FROM oauth_tokens WHERE expires_at < $1 RETURNING digest', [pgTime(before)]);
      return codes.length + tokens.length;
    },
    async listGrants(owner) {
      const rows = await db.query<GrantRow & { client_name: string | null }>(`SELECT g.*, c.name AS client_name
        FROM oauth_grants g LEFT JOIN oauth_clients c ON c.id = g.client_id
        WHERE g.tenant_id = $1 AND g.mode = $2 AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.id COLLATE "C" DESC`, [owner.tenantId, owner.mode]);
      return rows.map((r) => ({ ...toGrant(r), clientName: r.client_name ?? r.client_id }));
    },
  };
}
