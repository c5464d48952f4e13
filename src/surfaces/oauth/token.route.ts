import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../../core/oauth/oauth.errors.ts';
import type { OAuthService } from '../../core/oauth/oauth.service.ts';
import { bodyField } from './errors.ts';
import { OAUTH_PATHS } from './metadata.routes.ts';

/** The token endpoint (RFC 6749 §3.2): authorization_code with PKCE, refresh_token with rotation; never cached (§5.1). */
export function tokenRoute(app: FastifyInstance, oauth: Pick<OAuthService, 'exchangeCode' | 'refresh'>): void {
  app.post(OAUTH_PATHS.token, { schema: { hide: true } }, async (req, reply) => {
    const f = (name: string) => bodyField(req, name);
    const origin = { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id };
    const grantType = f('grant_type');
    let tokens;
    if (grantType === 'authorization_code') {
      tokens = await oauth.exchangeCode({
        clientId: f('client_id'), code: f('code'), codeVerifier: f('code_verifier'), redirectUri: f('redirect_uri'), resource: f('resource'),
      }, origin);
    } else if (grantType === 'refresh_token') {
      tokens = await oauth.refresh({ clientId: f('client_id'), refreshToken: f('refresh_token'), scope: f('scope'), resource: f('resource') }, origin);
    } else {
      throw new OAuthError(grantType === undefined ? 'invalid_request' : 'unsupported_grant_type',
        grantType === undefined ? 'grant_type is required' : 'grant_type must be authorization_code or refresh_token');
    }
    return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(tokens);
  });
}
