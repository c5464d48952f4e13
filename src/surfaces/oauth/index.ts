import formbody from '@fastify/formbody';
import type { FastifyPluginAsync } from 'fastify';
import type { OAuthService } from '../../core/oauth/oauth.service.ts';
import { authorizeRoute } from './authorize.route.ts';
import { oauthErrorHandler } from './errors.ts';
import { metadataRoutes } from './metadata.routes.ts';
import { registerRoute } from './register.route.ts';
import { revokeRoute } from './revoke.route.ts';
import { tokenRoute } from './token.route.ts';

/**
 * Mnemo's OAuth 2.1 authorization server for remote MCP clients (docs/oauth.md): discovery, registration, the
 * authorization endpoint (handing over to the dashboard's consent page at `consentPath`), token and revocation. Encapsulated: its
 * form parser and its error envelope apply to these routes only.
 */
export const oauthRoutes: FastifyPluginAsync<{ oauth: OAuthService; consentPath: string }> = async (app, { oauth, consentPath }) => {
  // RFC 6749 §3.2: the token and revocation endpoints take application/x-www-form-urlencoded bodies.
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.setErrorHandler(oauthErrorHandler);
  metadataRoutes(app, oauth.settings);
  registerRoute(app, oauth);
  authorizeRoute(app, consentPath);
  tokenRoute(app, oauth);
  revokeRoute(app, oauth);
};
