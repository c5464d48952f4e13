/**
 * The error codes of OAuth's own envelope (RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 7009 §2.2.1): the
 * token, registration and revocation endpoints answer `{error, error_description}` with these, never a DomainError.
 */
export type OAuthErrorCode =
  | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type'
  | 'invalid_scope' | 'invalid_target' | 'unsupported_response_type' | 'access_denied' | 'unsupported_token_type'
  | 'invalid_redirect_uri' | 'invalid_client_metadata' | 'temporarily_unavailable';

/** A refusal of an OAuth endpoint, in the protocol's words (the surface picks the HTTP status from the code). */
export class OAuthError extends Error {
  constructor(readonly error: OAuthErrorCode, readonly description: string, readonly retryAfterMs?: number) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const isOAuthError = (err: unknown): err is OAuthError => err instanceof OAuthError;
