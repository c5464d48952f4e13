import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError } from '../../core/errors.ts';
import { cookieOptions, csrfRefusal, field, param, SeeOther, SESSION_COOKIE, SIGN_IN_COOKIE, signedIn } from '../context.ts';
import { html } from '../html.ts';
import type { RouteRegistrar } from '../index.ts';
import { barePage, DASHBOARD_PREFIX } from '../layout.ts';
import { sameSecret } from '../../core/api-keys/api-key.format.ts';
import { randomToken } from '../../core/dashboard-sessions/session-tokens.ts';

const SIGN_IN_TOKEN_SECONDS = 3600;

/** Where to go after sign-in: a dashboard path only (never another site: `//host`, `/\host`). */
export function safeNext(next: string | undefined): string {
  return next !== undefined && /^\/dashboard(\/[^\\]*)?$/.test(next) && !next.startsWith('//') ? next : DASHBOARD_PREFIX;
}

const NOTICES: Record<string, string> = {
  out: 'You are signed out.',
  key: 'The API key of your session no longer works (revoked, rotated or expired). Sign in again.',
};

function signInForm(reply: FastifyReply, req: FastifyRequest, opts: { next: string; notice?: string | undefined; error?: string }) {
  // A fresh token per form shown, in a cookie the form must echo (double submit): a sign-in cannot be forged either.
  const token = randomToken();
  reply.setCookie(SIGN_IN_COOKIE, token, cookieOptions(req, SIGN_IN_TOKEN_SECONDS));
  return barePage('Sign in', html`
${opts.notice ? html`<p class="notice">${opts.notice}</p>` : ''}
${opts.error ? html`<p class="refusal" role="alert">${opts.error}</p>` : ''}
<form method="post" action="${DASHBOARD_PREFIX}/sign-in" class="card">
  <input type="hidden" name="_csrf" value="${token}"><input type="hidden" name="next" value="${opts.next}">
  <p><label>API key <input type="password" name="api_key" autocomplete="off" required autofocus size="44"></label></p>
  <p class="muted">The key stays on the server for the session; the cookie holds only a random session id.
  Pages need the scopes they show: approvals <code>mcp:access</code>, memories <code>memories:read</code>
  (editing <code>memories:write</code>), secrets and G11 webhooks <code>secrets:read</code>, audit <code>audit:read</code>.</p>
  <button id="sign-in" class="primary">Sign in</button>
</form>
<section class="card" id="get-a-key"><h2>No key yet?</h2>
<p>Whoever runs this server creates keys with the command line, in the server's directory (the CLI must use the same
data directory as the server):</p>
<pre>npx mnemo keys create --user YOUR_NAME --json</pre>
<p>It prints the key once, as <code>key</code> (<code>mnemo_live_…</code>); only its digest is stored. Without
<code>--scopes</code> the key gets every scope but the opt-in ones. <code>npx mnemo keys --help</code> lists the options.</p>
</section>`);
}

export const signInRoutes: RouteRegistrar = (app, deps) => {
  app.get(`${DASHBOARD_PREFIX}/sign-in`, { config: { operation: null } }, async (req, reply) => {
    if (await deps.sessions.find(req.cookies[SESSION_COOKIE])) return reply.redirect(safeNext(param(req, 'next')), 303);
    const ended = param(req, 'ended');
    const page = signInForm(reply, req, { next: safeNext(param(req, 'next')), notice: ended === undefined ? undefined : NOTICES[ended] });
    return reply.type('text/html; charset=utf-8').send(page.value);
  });

  app.post(`${DASHBOARD_PREFIX}/sign-in`, { config: { operation: null } }, async (req, reply) => {
    const expected = req.cookies[SIGN_IN_COOKIE];
    const token = field(req, '_csrf');
    if (!expected || token === undefined || !sameSecret(token, expected)) throw csrfRefusal();
    const next = safeNext(field(req, 'next'));
    const key = field(req, 'api_key')?.trim() ?? '';
    try {
      // A sign-in counts against the key's gateway limit, as every page it then opens does.
      await deps.limits.gateway(await deps.apiKeys.authenticate(key));
    } catch (err) {
      if (!isDomainError(err) || err.code !== 'UNAUTHENTICATED') throw err;
      const page = signInForm(reply, req, { next, error: 'That API key was not accepted (unknown, revoked or expired).' });
      return reply.status(401).type('text/html; charset=utf-8').send(page.value);
    }
    const { cookieValue } = await deps.sessions.create(key);
    reply.clearCookie(SIGN_IN_COOKIE, cookieOptions(req));
    reply.setCookie(SESSION_COOKIE, cookieValue, cookieOptions(req));
    return reply.redirect(next, 303);
  });

  app.post(`${DASHBOARD_PREFIX}/sign-out`, signedIn(deps, 'session.sign_out', async (req, reply, viewer) => {
    await deps.sessions.end(viewer.session);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
    return new SeeOther(`${DASHBOARD_PREFIX}/sign-in?ended=out`);
  }));
};
