import { buildOAuthProtectedResourceMetadata, type OAuthMetadata } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { ALL_PERMISSIONS } from '../../core/api-keys/api-key.types.ts';
import type { OAuthSettings } from '../../core/oauth/oauth.service.ts';

/** Where each endpoint lives under the issuer. */
export const OAUTH_PATHS = { authorize: '/oauth/authorize', token: '/oauth/token', register: '/oauth/register', revoke: '/oauth/revoke' } as const;

/** RFC 8414 authorization-server metadata: public clients with PKCE S256, codes and refresh tokens, Mnemo's permissions as scopes. */
export function authorizationServerMetadata(settings: OAuthSettings): OAuthMetadata {
  const at = (path: string) => `${settings.issuer}${path}`;
  return {
    issuer: settings.issuer,
    authorization_endpoint: at(OAUTH_PATHS.authorize),
    token_endpoint: at(OAUTH_PATHS.token),
    registration_endpoint: at(OAUTH_PATHS.register),
    revocation_endpoint: at(OAUTH_PATHS.revoke),
    scopes_supported: [...ALL_PERMISSIONS],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}

/**
 * The discovery documents: RFC 9728 protected-resource metadata for `/mcp` (at the path-suffixed well-known URL
 * and the bare one) and RFC 8414 authorization-server metadata. The operator chose the issuer (MNEMO_PUBLIC_URL), so
 * an http one is served as configured; hosted clients refuse it, which docs/oauth.md says.
 */
export function metadataRoutes(app: FastifyInstance, settings: OAuthSettings): void {
  const asMetadata = authorizationServerMetadata(settings);
  const resourceMetadata = buildOAuthProtectedResourceMetadata({
    oauthMetadata: asMetadata, resourceServerUrl: new URL(settings.resource), scopesSupported: [...ALL_PERMISSIONS],
    resourceName: 'Mnemo', dangerouslyAllowInsecureIssuerUrl: true,
  });
  const options = { schema: { hide: true } };
  for (const path of ['/.well-known/oauth-protected-resource', `/.well-known/oauth-protected-resource${new URL(settings.resource).pathname}`]) {
    app.get(path, options, async () => resourceMetadata);
  }
  app.get('/.well-known/oauth-authorization-server', options, async () => asMetadata);
}
