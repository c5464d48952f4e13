import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { AuditAction } from '../../core/audit/audit.rules.ts';
import type { AuditService } from '../../core/audit/audit.service.ts';
import { REGION_PATTERN } from '../../core/region.ts';

/** How a G11 route is recorded: its action, and what it acts on (from the path or the body, never a value). */
export interface AuditedRoute {
  action: AuditAction;
  resource: (req: FastifyRequest) => string;
}

/** `METHOD /url` as the route was declared; a HEAD request is the GET it mirrors (it runs the same handler). */
const routeKeyOf = (method: string, url: string): string => `${method === 'HEAD' ? 'GET' : method} ${url}`;

/** Requests already recorded (an onSend hook may run twice for one request when an error answer replaces another). */
const handled = new WeakSet<FastifyRequest>();
/** What a route's handler chose to add to its request's row (AuditMetadata: small, never a value or a key). */
const notes = new WeakMap<FastifyRequest, Record<string, unknown>>();

/** Adds to the metadata of the request's audit row (a version read, the rows a list returned). */
export function noteForAudit(req: FastifyRequest, metadata: Record<string, unknown>): void {
  notes.set(req, { ...notes.get(req), ...metadata });
}

/**
 * Answers that are not recorded: refusals by a rate limit (429) or for want of capacity (503), made before the route
 * touched anything. Recording them would let a client that is already refused keep writing rows without bound.
 */
const NOT_RECORDED = new Set([429, 503]);

/** Logged when a row could not be stored: the answer is replaced and what it held never leaves. */
export class AuditRecordFailed extends Error {
  constructor(cause: unknown) {
    super('The audit log could not record this request, so its answer was withheld', { cause });
    this.name = 'AuditRecordFailed';
  }
}

/**
 * An `onRoute` hook: a route without an action in `routes` cannot be registered, so no G11 endpoint goes unrecorded
 * (the server does not start; the message names the table to extend).
 */
export function requireAuditedRoutes(routes: Readonly<Record<string, AuditedRoute>>) {
  return (route: RouteOptions): void => {
    for (const method of [route.method].flat()) {
      const key = routeKeyOf(method, route.url);
      if (!Object.hasOwn(routes, key)) throw new Error(`G11 route ${key} has no audit action: add it to G11_AUDIT_ACTIONS`);
    }
  };
}

/**
 * An `onSend` hook: records the request in the caller's audit log before its answer leaves, and awaits the write.
 * Every answer to an authenticated caller is recorded, successes and failures (4xx, 5xx) alike, with the status it
 * got; requests without a valid key are not (no tenant to attribute them to, and nothing was read or written: a
 * flood of them would otherwise fill the log), nor NOT_RECORDED refusals. When the row cannot be stored, the hook
 * logs AuditRecordFailed and replaces the answer with `withheld` (G11: 500 INTERNAL_ERROR), so a secret's value never
 * leaves unrecorded. It replaces the payload itself rather than throwing: a throw from onSend goes to the next error
 * handler up when the answer was already an error, which would not speak G11. A write (create, update, delete) has
 * already happened by then; the caller sees a 500.
 */
export function auditRecorder(
  audit: Pick<AuditService, 'record'>, routes: Readonly<Record<string, AuditedRoute>>, withheld: { status: number; body: object },
) {
  return async (req: FastifyRequest & { headers: { 'x-region'?: string | string[] } }, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (handled.has(req)) return payload;
    handled.add(req);
    const principal = req.principal;
    if (principal === null || NOT_RECORDED.has(reply.statusCode)) return payload;
    const key = routeKeyOf(req.routeOptions.method as string, req.routeOptions.url ?? '');
    const route = Object.hasOwn(routes, key) ? routes[key] : undefined;
    const region = req.headers['x-region'];
    try {
      // requireAuditedRoutes makes a missing action impossible; if it happens anyway, nothing leaves unrecorded.
      if (!route) throw new Error(`no audit action for ${key}`);
      await audit.record({
        owner: { tenantId: principal.tenantId, mode: principal.mode },
        actor: { userId: principal.userId, keyId: principal.keyId },
        action: route.action,
        resource: route.resource(req),
        outcome: reply.statusCode < 400 ? 'success' : 'failure',
        status: reply.statusCode,
        ip: req.ip,
        userAgent: req.headers['user-agent'] ?? null,
        // Only a region the write routes would accept (RegionHeaders): anything else is the client's noise.
        region: typeof region === 'string' && REGION_PATTERN.test(region) ? region : null,
        requestId: req.id,
        metadata: notes.get(req) ?? {},
      });
    } catch (err) {
      req.log.error({ err: new AuditRecordFailed(err) }, 'audit log unavailable');
      // Headers that describe the withheld answer go with it.
      for (const header of ['content-disposition', 'content-length', 'x-next-cursor', 'x-total-count']) reply.removeHeader(header);
      reply.code(withheld.status).type('application/json; charset=utf-8');
      return JSON.stringify(withheld.body);
    }
    return payload;
  };
}
