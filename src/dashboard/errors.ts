import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError, type DomainErrorCode } from '../core/errors.ts';
import { DashboardRefusal } from './context.ts';
import { html } from './html.ts';
import { barePage, DASHBOARD_PREFIX } from './layout.ts';
import { SECURITY_HEADERS } from './security-headers.ts';

const DOMAIN_STATUS: Partial<Record<DomainErrorCode, [status: number, title: string]>> = {
  UNAUTHENTICATED: [401, 'Not signed in'],
  PERMISSION_DENIED: [403, 'Not allowed'],
  NOT_FOUND: [404, 'Not found'],
  VALIDATION_FAILED: [400, 'Not accepted'],
  CONFLICT: [409, 'Conflict'],
  RATE_LIMITED: [429, 'Too many requests'],
  QUOTA_EXCEEDED: [429, 'Quota exceeded'],
  OVERLOADED: [503, 'Busy'],
  TIMEOUT: [504, 'Timed out'],
};

/** Why a request was refused, for a person: a domain error's own message, or the status's usual words. */
export function describeRefusal(error: FastifyError | Error): { status: number; title: string; message: string } {
  if (error instanceof DashboardRefusal) return { status: error.status, title: error.title, message: error.message };
  if (isDomainError(error)) {
    const known = DOMAIN_STATUS[error.code];
    if (known) {
      const problems = (error.details.fields ?? []).map((p) => `${p.field} ${p.message}`).join('; ');
      return { status: known[0], title: known[1], message: problems ? `${error.message}: ${problems}` : error.message };
    }
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, title: status === 404 ? 'Page not found' : 'Bad request', message: status === 404 ? 'There is no such page here. The sections of the dashboard are linked above.' : error.message };
  }
  return { status: 500, title: 'Something went wrong', message: 'The server could not answer this request. It has been logged.' };
}

/**
 * Every error under /dashboard becomes an HTML page with a status, a sentence (a 403 names the scope the key lacks)
 * and the sections' links, never a stack trace or the JSON of an API surface.
 */
export function dashboardErrorHandler(error: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { status, title, message } = describeRefusal(error);
  if (status >= 500) req.log.error({ err: error }, 'dashboard request failed');
  const retryMs = isDomainError(error) ? error.details.retryAfterMs ?? error.details.limit?.retryAfterMs : undefined;
  const retryAfter = retryMs === undefined ? null : Math.max(1, Math.ceil(retryMs / 1000));
  if (retryAfter !== null) reply.header('Retry-After', retryAfter);
  return reply.status(status).type('text/html; charset=utf-8').headers(SECURITY_HEADERS).header('Cache-Control', 'no-store').send(barePage(title, html`
<p class="refusal" data-status="${status}">${message}</p>
<p><a href="${DASHBOARD_PREFIX}">Back to the overview</a></p>`, true).value);
}
