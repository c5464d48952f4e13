import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { isOperationName, policyOf } from '../../core/operations/catalog.ts';
import type { OperationRunner } from '../../core/operations/runner.ts';
import { REGION_PATTERN } from '../../core/region.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What an audited route acts on, for its audit row: from the path or the body, never a value. */
    auditResource?: (req: FastifyRequest) => string;
  }
}

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
 * An `onRoute` hook: a route whose operation records nothing in the audit log, or that does not say what it acts
 * on, cannot be registered, so no G11 endpoint goes unrecorded (the server does not start; the message names it).
 */
export function requireAuditedRoutes(route: RouteOptions): void {
  const config = route.config as { operation?: unknown; auditResource?: unknown } | undefined;
  const operation = config?.operation;
  // One operation, not a list: the row's action is the route's.
  const audits = isOperationName(operation) && policyOf(operation).audit !== undefined;
  if (!audits || typeof config?.auditResource !== 'function') {
    throw new Error(`G11 route ${[route.method].flat().join(',')} ${route.url} must run an audited operation and name its auditResource`);
  }
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
export function auditRecorder(operations: Pick<OperationRunner, 'record'>, withheld: { status: number; body: object }) {
  return async (req: FastifyRequest & { headers: { 'x-region'?: string | string[] } }, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (handled.has(req)) return payload;
    handled.add(req);
    const principal = req.principal;
    if (principal === null || NOT_RECORDED.has(reply.statusCode)) return payload;
    const { operation, auditResource } = req.routeOptions.config;
    const region = req.headers['x-region'];
    try {
      // requireAuditedRoutes makes a route without them impossible; if it happens anyway, nothing leaves unrecorded.
      if (typeof operation !== 'string' || !auditResource) throw new Error(`no audited operation for ${req.routeOptions.method} ${req.routeOptions.url}`);
      await operations.record(operation, principal, {
        ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id,
        // Only a region the write routes would accept (RegionHeaders): anything else is the client's noise.
        region: typeof region === 'string' && REGION_PATTERN.test(region) ? region : null,
      }, { resource: auditResource(req), metadata: notes.get(req) ?? {} }, reply.statusCode);
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
