import type { Permission } from '../../../core/api-keys/api-key.types.ts';
import type { OAuthRepository } from '../../../core/oauth/oauth.repository.ts';
import type { OAuthClient, OAuthCode, OAuthGrant, OAuthToken, OAuthTokenKind } from '../../../core/oauth/oauth.types.ts';
import type { KeyMode } from '../../../core/scope.ts';
import type { SqliteDb } from './sqlite.database.ts';

interface ClientRow { id: string; name: string; redirect_uris: string; created_at: number }
interface GrantRow {
  id: string; client_id: string; tenant_id: string; mode: string; workspace: string; key_id: string; user_id: string; scopes: string;
  created_at: number; last_used_at: number | null; revoked_at: number | null;
}
interface CodeRow {
  digest: string; client_id: string; redirect_uri: string; code_challenge: string; resource: string | null; grant_id: string;
  tenant_id: string; mode: string; workspace: string; key_id: string; user_id: string; scopes: string; created_at: number;
  expires_at: number; used_at: number | null;
}
interface TokenRow { digest: string; grant_id: string; kind: string; created_at: number; expires_at: number; used_at: number | null }

const orNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

const toClient = (r: ClientRow): OAuthClient => ({ id: r.id, name: r.name, redirectUris: JSON.parse(r.redirect_uris) as string[], createdAt: new Date(r.created_at) });
const toGrant = (r: GrantRow): OAuthGrant => ({
  id: r.id, clientId: r.client_id, tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace, keyId: r.key_id, userId: r.user_id,
  scopes: JSON.parse(r.scopes) as Permission[], createdAt: new Date(r.created_at), lastUsedAt: orNull(r.last_used_at), revokedAt: orNull(r.revoked_at),
});
const toCode = (r: CodeRow): OAuthCode => ({
  digest: r.digest, clientId: r.client_id, redirectUri: r.redirect_uri, codeChallenge: r.code_challenge, resource: r.resource,
  grant: {
    id: r.grant_id, clientId: r.client_id, tenantId: r.tenant_id, mode: r.mode as KeyMode, workspace: r.workspace, keyId: r.key_id,
    userId: r.user_id, scopes: JSON.parse(r.scopes) as Permission[],
  },
  createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at), usedAt: orNull(r.used_at),
});
const toToken = (r: TokenRow): OAuthToken => ({
  digest: r.digest, grantId: r.grant_id, kind: r.kind as OAuthTokenKind, createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at), usedAt: orNull(r.used_at),
});

/** OAuth clients, codes, grants and tokens; single use is one conditional UPDATE inside each write's transaction. */
export function createSqliteOAuthRepository(db: SqliteDb): OAuthRepository {
  const insertClient = db.prepare('INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)');
  const clientById = db.prepare<[string], ClientRow>('SELECT * FROM oauth_clients WHERE id = ?');
  const insertCode = db.prepare(`INSERT INTO oauth_codes (digest, client_id, redirect_uri, code_challenge, resource, grant_id, tenant_id, mode,
    workspace, key_id, user_id, scopes, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const codeByDigest = db.prepare<[string], CodeRow>('SELECT * FROM oauth_codes WHERE digest = ?');
  const useCode = db.prepare('UPDATE oauth_codes SET used_at = ? WHERE digest = ? AND used_at IS NULL');
  const insertGrant = db.prepare(`INSERT INTO oauth_grants (id, client_id, tenant_id, mode, workspace, key_id, user_id, scopes, created_at,
    last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertToken = db.prepare('INSERT INTO oauth_tokens (digest, grant_id, kind, created_at, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?)');
  const tokenByDigest = db.prepare<[string], TokenRow>('SELECT * FROM oauth_tokens WHERE digest = ?');
  const grantById = db.prepare<[string], GrantRow>('SELECT * FROM oauth_grants WHERE id = ?');
  const useRefresh = db.prepare("UPDATE oauth_tokens SET used_at = ? WHERE digest = ? AND kind = 'refresh' AND used_at IS NULL");
  const touch = db.prepare('UPDATE oauth_grants SET last_used_at = ? WHERE id = ?');
  const revoke = db.prepare('UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const listOwner = db.prepare<[string, string], GrantRow & { client_name: string | null }>(`SELECT g.*, c.name AS client_name
    FROM oauth_grants g LEFT JOIN oauth_clients c ON c.id = g.client_id
    WHERE g.tenant_id = ? AND g.mode = ? AND g.revoked_at IS NULL ORDER BY g.created_at DESC, g.id DESC`);

  const pruneCodes = db.prepare('DELETE FROM oauth_codes WHERE expires_at < ?');
  const pruneTokens = db.prepare('DELETE FROM oauth_tokens WHERE expires_at < ?');
  const addTokens = (tokens: readonly OAuthToken[]) => {
    for (const t of tokens) insertToken.run(t.digest, t.grantId, t.kind, t.createdAt.getTime(), t.expiresAt.getTime(), t.usedAt?.getTime() ?? null);
  };
  const redeemTx = db.transaction((digest: string, at: Date, g: OAuthGrant, tokens: readonly OAuthToken[]): boolean => {
    if (useCode.run(at.getTime(), digest).changes === 0) return false;
    insertGrant.run(g.id, g.clientId, g.tenantId, g.mode, g.workspace, g.keyId, g.userId, JSON.stringify(g.scopes), g.createdAt.getTime(),
      g.lastUsedAt?.getTime() ?? null, g.revokedAt?.getTime() ?? null);
    addTokens(tokens);
    return true;
  });
  const rotateTx = db.transaction((digest: string, at: Date, tokens: readonly OAuthToken[]): boolean => {
    if (useRefresh.run(at.getTime(), digest).changes === 0) return false;
    addTokens(tokens);
    return true;
  });

  return {
    async insertClient(c) {
      insertClient.run(c.id, c.name, JSON.stringify(c.redirectUris), c.createdAt.getTime());
    },
    async findClient(id) {
      const row = clientById.get(id);
      return row ? toClient(row) : null;
    },
    async insertCode(c) {
      const g = c.grant;
      insertCode.run(c.digest, c.clientId, c.redirectUri, c.codeChallenge, c.resource, g.id, g.tenantId, g.mode, g.workspace, g.keyId, g.userId,
        JSON.stringify(g.scopes), c.createdAt.getTime(), c.expiresAt.getTime(), c.usedAt?.getTime() ?? null);
    },
    async findCode(digest) {
      const row = codeByDigest.get(digest);
      return row ? toCode(row) : null;
    },
    async redeemCode(digest, at, grant, tokens) {
      return redeemTx.immediate(digest, at, grant, tokens);
    },
    async findToken(digest) {
      const token = tokenByDigest.get(digest);
      const grant = token ? grantById.get(token.grant_id) : undefined;
      return token && grant ? { token: toToken(token), grant: toGrant(grant) } : null;
    },
    async rotateRefresh(digest, at, tokens) {
      return rotateTx.immediate(digest, at, tokens);
    },
    async findGrant(id) {
      const row = grantById.get(id);
      return row ? toGrant(row) : null;
    },
    async touchGrant(id, at) {
      touch.run(at.getTime(), id);
    },
    async revokeGrant(id, at) {
      return revoke.run(at.getTime(), id).changes > 0;
    },
    async pruneExpired(before) {
      return pruneCodes.run(before.getTime()).changes + pruneTokens.run(before.getTime()).changes;
    },
    async listGrants(owner) {
      return listOwner.all(owner.tenantId, owner.mode).map((r) => ({ ...toGrant(r), clientName: r.client_name ?? r.client_id }));
    },
  };
}
