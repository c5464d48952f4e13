import type { FastifyReply, FastifyRequest } from 'fastify';
import { ALL_PERMISSIONS, OPT_IN_PERMISSIONS, type Permission } from '../../core/api-keys/api-key.types.ts';
import type { AuthorizationCheck, AuthorizationRequest } from '../../core/oauth/oauth.service.ts';
import { DashboardRefusal, field, SeeOther, signedIn, type Viewer } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { barePage, csrfField, DASHBOARD_PREFIX } from '../layout.ts';
import { SECURITY_HEADERS } from '../security-headers.ts';

/** Where `GET /oauth/authorize` sends the browser, with the authorization request's parameters. */
export const OAUTH_CONSENT_PATH = `${DASHBOARD_PREFIX}/oauth/authorize`;

/** The authorization request's parameters, carried from the page's URL into its form and back. */
const REQUEST_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method', 'resource', 'scope'] as const;

/** Every value of a form field (checkboxes repeat their name). */
function fieldValues(req: FastifyRequest, name: string): string[] {
  const v = (req.body as Record<string, unknown> | null | undefined)?.[name];
  return (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((s): s is string => typeof s === 'string');
}

function paramsOf(source: (name: string) => string | undefined): Record<string, string | undefined> {
  return Object.fromEntries(REQUEST_PARAMS.map((name) => [name, source(name)]));
}

const queryParam = (req: FastifyRequest) => (name: string): string | undefined => {
  const v = (req.query as Record<string, unknown>)[name];
  const last = Array.isArray(v) ? v.at(-1) : v;
  return typeof last === 'string' && last !== '' ? last : undefined;
};

/** A refused request: back to the client when its redirect URI is known, else a page for the person. */
function refused(check: Extract<AuthorizationCheck, { ok: false }>): SeeOther {
  if (check.redirect) return new SeeOther(check.redirect);
  throw new DashboardRefusal(400, 'Authorization request refused', `${check.error.description} (${check.error.error}).`);
}

function consentPage(reply: FastifyReply, viewer: Viewer, request: AuthorizationRequest, params: Record<string, string | undefined>) {
  const held = ALL_PERMISSIONS.filter((p) => viewer.principal.scopes.has(p));
  // Checked at first: what the client asked for that the key holds; with no request, the key's but the opt-in ones.
  const proposed = new Set<Permission>(request.requestedScopes ?? held.filter((p) => !OPT_IN_PERMISSIONS.includes(p)));
  const notHeld = (request.requestedScopes ?? []).filter((p) => !viewer.principal.scopes.has(p));
  const redirect = new URL(request.redirectUri);
  // The Approve/Deny answer is a redirect to the client, which a form may follow only to an origin form-action names.
  reply.header('Content-Security-Policy', SECURITY_HEADERS['Content-Security-Policy'].replace("form-action 'self'", `form-action 'self' ${redirect.origin}`));
  // Without the chrome: its workspace switcher would reload this page without the request's parameters.
  return barePage('Connect an app', html`
<form method="post" action="${OAUTH_CONSENT_PATH}" class="card" id="consent">
  ${csrfField(viewer.session.csrfToken)}
  ${REQUEST_PARAMS.map((name) => (params[name] === undefined ? '' : html`<input type="hidden" name="${name}" value="${params[name]}">`))}
  <p><strong id="client-name">${request.client.name}</strong> asks to use Mnemo's MCP server as
  <strong>${viewer.principal.userId}</strong> (tenant ${viewer.principal.tenantId}, ${viewer.principal.mode}).
  It will be sent back to <code id="redirect-host">${redirect.host}</code>.</p>
  <p><label>Workspace it may use <input type="text" name="workspace" value="${viewer.session.workspace}" required></label></p>
  <fieldset><legend>Scopes to grant (your key holds these; the app gets only those ticked)</legend>
  ${held.map((p) => html`<label class="check"><input type="checkbox" name="scopes" value="${p}"${proposed.has(p) ? html` checked` : ''}> <code>${p}</code></label>`)}
  </fieldset>
  ${notHeld.length > 0 ? html`<p class="muted">Also asked for, but your key does not hold them: ${notHeld.join(', ')}.</p>` : ''}
  <p class="muted">Access lasts until you revoke it under Connected apps, or until your key is revoked or expires.</p>
  <p><button class="primary" name="decision" value="approve" id="approve">Approve</button>
  <button name="decision" value="deny" id="deny">Deny</button></p>
</form>`);
}

/**
 * The consent page of Mnemo's OAuth authorization server (docs/oauth.md): the signed-in person sees which app asks
 * and where it will be sent, picks the workspace and the scopes to grant (core/oauth refuses any their key lacks),
 * and approves or denies; the answer is a redirect to the client with a code or `access_denied`.
 */
export const oauthConsentRoutes: RouteRegistrar = (app, deps) => {
  app.get(OAUTH_CONSENT_PATH, signedIn(deps, 'oauth.authorize', async (req, reply, viewer) => {
    const params = paramsOf(queryParam(req));
    const check = await deps.oauth.checkAuthorization(params);
    if (!check.ok) return refused(check);
    return consentPage(reply, viewer, check.request, params);
  }));

  app.post(OAUTH_CONSENT_PATH, signedIn(deps, 'oauth.authorize', async (req, _reply, viewer) => {
    const check = await deps.oauth.checkAuthorization(paramsOf((name) => field(req, name) || undefined));
    if (!check.ok) return refused(check);
    if (field(req, 'decision') !== 'approve') return new SeeOther(deps.oauth.deny(check.request));
    const location = await deps.oauth.approve(viewer.principal, check.request,
      { workspace: field(req, 'workspace')?.trim() ?? '', scopes: fieldValues(req, 'scopes') },
      { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id });
    return new SeeOther(location);
  }));
};
