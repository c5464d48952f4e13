import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyService } from '../core/api-keys/api-key.service.ts';
import type { Principal } from '../core/api-keys/api-key.types.ts';
import type { DeclaredOperation, OperationName } from '../core/operations/catalog.ts';
import { authorize } from '../core/operations/runner.ts';
import { isDomainError, validationError } from '../core/errors.ts';
import type { LimitsService } from '../core/rate-limit/tier-limits.ts';
import { workspaceProblem, type Scope } from '../core/scope.ts';
import type { SafeHtml } from './html.ts';
import { DASHBOARD_PREFIX, type Chrome, type Section } from './layout.ts';
import type { DashboardSession, DashboardSessionStore } from '../core/dashboard-sessions/dashboard-session.port.ts';
import { sameSecret } from '../core/api-keys/api-key.format.ts';

export const SESSION_COOKIE = 'mnemo_dashboard';
/** Before sign-in: the token the sign-in form carries (double submit), so a sign-in cannot be forged either. */
export const SIGN_IN_COOKIE = 'mnemo_dashboard_signin';

/** Who is looking at a signed-in page, and in which workspace. */
export interface Viewer {
  session: DashboardSession;
  principal: Principal;
  /** Tenant and mode from the key, workspace from the switcher. */
  scope: Scope;
  chrome: (section: Section | null) => Chrome;
}

/** A refusal the dashboard renders itself: a status, a title and a sentence for a person. */
export class DashboardRefusal extends Error {
  constructor(readonly status: number, readonly title: string, message: string) {
    super(message);
  }
}

export const csrfRefusal = () => new DashboardRefusal(403, 'Form refused',
  'This form did not carry the security token of your session (it is stale, or it was sent from another site). Reload the page and try again.');

/**
 * Cookie attributes: HttpOnly, SameSite=Strict, path /dashboard, and Secure when the request came over TLS — as
 * the server sees it: the socket, or X-Forwarded-Proto when the server trusts its proxy (MNEMO_TRUST_PROXY).
 */
export const cookieOptions = (req: FastifyRequest, maxAgeSeconds?: number) => ({
  path: DASHBOARD_PREFIX, httpOnly: true, sameSite: 'strict' as const, secure: req.protocol === 'https',
  ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
});

/** A form field's text (the last one when repeated), or undefined. */
export function field(req: FastifyRequest, name: string): string | undefined {
  const body = req.body as Record<string, unknown> | null | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  const last = Array.isArray(v) ? v.at(-1) : v;
  return typeof last === 'string' ? last : undefined;
}

/** A query parameter's text, or undefined (blank counts as absent). */
export function param(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  const last = Array.isArray(v) ? v.at(-1) : v;
  return typeof last === 'string' && last.trim() !== '' ? last.trim() : undefined;
}

export interface KitDeps {
  apiKeys: Pick<ApiKeyService, 'authenticate'>;
  limits: Pick<LimitsService, 'gateway'>;
  sessions: DashboardSessionStore;
}

/** A handler's answer that is not a page: 303 to `location` (a form's redirect after its POST). */
export class SeeOther {
  constructor(readonly location: string) {}
}

/** A handler's answer that is a file to save (an export), not a page. */
export class Download {
  constructor(readonly filename: string, readonly type: string, readonly body: string) {}
}

export type PageHandler = (req: FastifyRequest, reply: FastifyReply, viewer: Viewer) => Promise<SafeHtml | SeeOther | Download>;

/**
 * A signed-in route: its options (`config.operation`, the core operation it runs, listed like every API route's) and
 * its handler, which finds the session (none: a GET goes to sign-in, a POST is refused 403), checks a POST's CSRF
 * token, authenticates the session's key again (a revoked key ends the session), counts the request against the
 * key's gateway limit, applies `?workspace=`, and checks the operation's permission (403 page otherwise). A list of
 * operations: the page runs one of them, chosen by its input, and authorizes it itself.
 */
export function signedIn(deps: KitDeps, operation: OperationName | readonly OperationName[], handler: PageHandler) {
  const declared: DeclaredOperation = operation;
  // Every path returns the reply it sent: an async handler that sends and resolves undefined makes Fastify send again.
  const run = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const session = await deps.sessions.find(req.cookies[SESSION_COOKIE]);
    if (!session) {
      if (req.method === 'GET' || req.method === 'HEAD') {
        const next = req.url.startsWith(`${DASHBOARD_PREFIX}/`) ? `?next=${encodeURIComponent(req.url)}` : '';
        return reply.redirect(`${DASHBOARD_PREFIX}/sign-in${next}`, 303);
      }
      throw csrfRefusal();
    }
    if (req.method === 'POST') {
      const token = field(req, '_csrf');
      if (token === undefined || !sameSecret(token, session.csrfToken)) throw csrfRefusal();
    }
    let principal: Principal;
    try {
      principal = await deps.apiKeys.authenticate(session.apiKey);
    } catch (err) {
      if (!isDomainError(err) || err.code !== 'UNAUTHENTICATED') throw err;
      await deps.sessions.end(session);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
      if (req.method === 'GET') return reply.redirect(`${DASHBOARD_PREFIX}/sign-in?ended=key`, 303);
      throw new DashboardRefusal(401, 'Signed out', 'The API key of this session no longer works (revoked, rotated or expired). Sign in again.');
    }
    await deps.limits.gateway(principal);
    const asked = param(req, 'workspace');
    if (asked !== undefined) {
      const problem = workspaceProblem(asked, 'workspace');
      if (problem) throw validationError([problem], 'That workspace name is not valid');
      if (asked !== session.workspace) await deps.sessions.setWorkspace(session, asked);
    }
    if (typeof operation === 'string') authorize(operation, principal);
    const path = req.url.split('?')[0]!;
    const viewer: Viewer = {
      session, principal,
      scope: { tenantId: principal.tenantId, mode: principal.mode, workspace: session.workspace },
      chrome: (section) => ({ principal, workspace: session.workspace, csrfToken: session.csrfToken, section, path }),
    };
    const page = await handler(req, reply, viewer);
    if (page instanceof SeeOther) return reply.redirect(page.location, 303);
    if (page instanceof Download) return reply.type(page.type).header('Content-Disposition', `attachment; filename="${page.filename}"`).send(page.body);
    return reply.type('text/html; charset=utf-8').send(page.value);
  };
  return { config: { operation: declared }, handler: run };
}
