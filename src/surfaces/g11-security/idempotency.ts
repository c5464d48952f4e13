import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { isOperationName, policyOf } from '../../core/operations/catalog.ts';
import {
  requestFingerprint, type IdempotencyTicket, type IdempotentRequestService,
} from '../../core/idempotency/idempotent-request.service.ts';
import { requirePrincipal } from '../http-kit/auth.ts';
import { noteForAudit } from './audit-recorder.ts';

/** The methods whose requests take an `Idempotency-Key` (the spec: POST and PUT); on others the header is ignored. */
const IDEMPOTENT_METHODS = new Set(['POST', 'PUT']);
/**
 * The headers that describe a kept body and are replayed with it. Not the rate-limit headers nor X-Request-Id, which
 * belong to each request (a replay counts against the limits like any request).
 */
const KEPT_HEADERS = ['content-type', 'content-disposition', 'location', 'x-total-count', 'x-next-cursor'] as const;
/** Marks a replayed answer, as G10's `POST /v1/events` does. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** The reservation each running request holds, until its answer is sent. */
const tickets = new WeakMap<FastifyRequest, IdempotencyTicket>();

/**
 * `Idempotency-Key` on every POST and PUT of the plugin it is added to (G11), whatever the route does, over the
 * core's IdempotentRequestService (which decides what is kept and for how long):
 *
 * - `preHandler`: after authentication, body validation (a malformed request uses no key) and the operation's
 *   permission (surfaces/http-kit/operations.ts: a replay skips the handler), reserves the key and lets the handler run,
 *   or answers with the kept answer (`Idempotent-Replayed: true`; the handler does not run), or refuses (400 for a
 *   malformed key, 409 while the key's first request runs, 422 for a key used with another request).
 * - `onSend`: hands the answer to the service, which keeps it (2xx) or frees the key. Add it before the audit
 *   recorder's onSend: an answer the recorder then withholds (500, no audit row) is still kept, and the client's
 *   retry gets it, recorded, instead of running the write a second time.
 * - `requireIdempotentOperations` (onRoute): a POST or PUT route whose operation is not marked idempotent (core
 *   operations catalog) cannot be registered, so that the catalogue says which operations replay.
 */
export function idempotencyHooks(service: Pick<IdempotentRequestService, 'begin' | 'finish' | 'abandon'>) {
  return {
    requireIdempotentOperations(route: RouteOptions): void {
      const operation = (route.config as { operation?: unknown } | undefined)?.operation;
      for (const method of [route.method].flat()) {
        if (IDEMPOTENT_METHODS.has(method) && !(isOperationName(operation) && policyOf(operation).idempotent)) {
          throw new Error(`G11 route ${method} ${route.url} takes an Idempotency-Key: its operation must be idempotent in the catalogue`);
        }
      }
    },

    async preHandler(req: FastifyRequest & { headers: { 'x-region'?: string } }, reply: FastifyReply): Promise<FastifyReply | undefined> {
      const header = req.headers['idempotency-key'];
      const operation = req.routeOptions.config.operation;
      // The catalogue says which operations replay (every POST and PUT of G11: requireIdempotentOperations).
      if (header === undefined || typeof operation !== 'string' || !policyOf(operation).idempotent) return undefined;
      const principal = requirePrincipal(req);
      const fingerprint = requestFingerprint({
        method: req.method, route: req.routeOptions.url ?? '', params: req.params, query: req.query, body: req.body,
        region: req.headers['x-region'] ?? null,
      });
      const outcome = await service.begin(
        { tenantId: principal.tenantId, mode: principal.mode, apiKeyId: principal.keyId }, [header].flat().join(', '), fingerprint,
      );
      if (outcome.kind === 'run') {
        tickets.set(req, outcome.ticket);
        return undefined;
      }
      noteForAudit(req, { replayed: true });
      for (const [name, value] of Object.entries(outcome.answer.headers)) reply.header(name, value);
      reply.header(REPLAYED_HEADER, 'true').code(outcome.answer.status);
      return reply.send(outcome.answer.body === '' ? undefined : outcome.answer.body);
    },

    async onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
      const ticket = tickets.get(req);
      if (!ticket) return payload;
      // Once: an onSend hook may run again for one request when an error answer replaces another.
      tickets.delete(req);
      try {
        if (payload === null || payload === undefined || typeof payload === 'string') {
          const headers: Record<string, string> = {};
          for (const name of KEPT_HEADERS) {
            const value = reply.getHeader(name);
            if (value !== undefined) headers[name] = String(value);
          }
          await service.finish(ticket, { status: reply.statusCode, headers, body: payload ?? '' });
        } else {
          // A stream or a buffer (no G11 route sends one): not kept, the key is freed.
          await service.abandon(ticket);
        }
      } catch (err) {
        // The answer itself is fine; only its replay is lost. The reservation lapses after its lock, and a retry runs.
        req.log.error({ err }, 'the answer to a request with an Idempotency-Key could not be kept for replays');
      }
      return payload;
    },
  };
}
