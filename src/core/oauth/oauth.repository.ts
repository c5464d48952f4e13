import type { OAuthClient, OAuthCode, OAuthGrant, OAuthGrantView, OAuthOwner, OAuthToken } from './oauth.types.ts';

/**
 * Storage port for OAuth: registered clients, authorization codes, grants and their tokens. Codes and tokens are
 * stored as SHA-256 digests only. The two conditional writes (`redeemCode`, `rotateRefresh`) are what make codes
 * and refresh tokens single-use under concurrency: of two attempts with one code or token, exactly one succeeds.
 */
export interface OAuthRepository {
  insertClient(client: OAuthClient): Promise<void>;
  findClient(id: string): Promise<OAuthClient | null>;
  insertCode(code: OAuthCode): Promise<void>;
  findCode(digest: string): Promise<OAuthCode | null>;
  /**
   * In one transaction: when code `digest` is unused, marks it used at `at` by `grant.id`, inserts `grant` and
   * `tokens`; returns false, writing nothing, when it was already used.
   */
  redeemCode(digest: string, at: Date, grant: OAuthGrant, tokens: readonly OAuthToken[]): Promise<boolean>;
  /** The token of `digest` and its grant; null when unknown. */
  findToken(digest: string): Promise<{ token: OAuthToken; grant: OAuthGrant } | null>;
  /**
   * In one transaction: when refresh token `digest` is unused, marks it used at `at` and inserts `tokens`; false,
   * writing nothing, when it was already used.
   */
  rotateRefresh(digest: string, at: Date, tokens: readonly OAuthToken[]): Promise<boolean>;
  /** Grant `id` (revoked ones too); null when unknown. */
  findGrant(id: string): Promise<OAuthGrant | null>;
  /** Records a use of grant `id` (for the dashboard's "last used"). */
  touchGrant(id: string, at: Date): Promise<void>;
  /** Marks grant `id` revoked at `at`; false when no such grant or already revoked. */
  revokeGrant(id: string, at: Date): Promise<boolean>;
  /**
   * Deletes codes and tokens that expired before `before`; returns how many. An expired one presented later is
   * unknown (invalid_grant) rather than spent, which refuses it all the same.
   */
  pruneExpired(before: Date): Promise<number>;
  /** The owner's live (unrevoked) grants, newest first, with their clients' names. */
  listGrants(owner: OAuthOwner): Promise<OAuthGrantView[]>;
}
