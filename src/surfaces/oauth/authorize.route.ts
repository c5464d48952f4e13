import type { FastifyInstance } from 'fastify';
import { OAUTH_PATHS } from './metadata.routes.ts';

/**
 * The authorization endpoint hands the browser to the dashboard's consent page with the same parameters: a person
 * signs in there (their dashboard session), and the page checks the request (core/oauth) and answers it.
 */
export function authorizeRoute(app: FastifyInstance, consentPath: string): void {
  app.get(OAUTH_PATHS.authorize, { schema: { hide: true } }, async (req, reply) => {
    const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
    return reply.redirect(`${consentPath}${query}`, 302);
  });
}
