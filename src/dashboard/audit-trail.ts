import type { FastifyRequest } from 'fastify';
import type { AuditAction } from '../core/audit/audit.rules.ts';
import type { AuditService } from '../core/audit/audit.service.ts';
import { isDomainError } from '../core/errors.ts';
import type { Viewer } from './context.ts';

const STATUS_OF: Record<string, number> = { NOT_FOUND: 404, PERMISSION_DENIED: 403, VALIDATION_FAILED: 400, CONFLICT: 409 };

/**
 * Runs a dashboard action that the G11 audit log must hold (a secret revealed, an approval answered, the log read)
 * and records it there, succeeded or refused, with `via: dashboard`. The row is written before the result is
 * returned: if it cannot be stored, the action's answer (a secret's value, an access token) never reaches the page.
 */
export async function audited<T>(
  audit: Pick<AuditService, 'record'>, req: FastifyRequest, viewer: Viewer,
  entry: { action: AuditAction; resource: string; metadata?: Record<string, unknown> }, run: () => Promise<T>,
): Promise<T> {
  const record = (status: number) => audit.record({
    owner: { tenantId: viewer.principal.tenantId, mode: viewer.principal.mode },
    actor: { userId: viewer.principal.userId, keyId: viewer.principal.keyId },
    action: entry.action, resource: entry.resource, outcome: status < 400 ? 'success' : 'failure', status,
    ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id,
    metadata: { via: 'dashboard', ...entry.metadata },
  });
  let result: T;
  try {
    result = await run();
  } catch (err) {
    if (isDomainError(err)) await record(STATUS_OF[err.code] ?? 500);
    throw err;
  }
  await record(200);
  return result;
}
