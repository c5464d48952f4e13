import type { FastifyRequest } from 'fastify';
import type { OperationName } from '../core/operations/catalog.ts';
import type { OperationRunner } from '../core/operations/runner.ts';
import type { Viewer } from './context.ts';

/**
 * Runs a dashboard action that the G11 audit log must hold (a secret revealed, an approval answered, the log read)
 * as its core operation, which records it there, succeeded or refused, with `via: dashboard`. The row is written
 * before the result is returned: if it cannot be stored, the action's answer (a secret's value, an access token)
 * never reaches the page.
 */
export function audited<T>(
  operations: Pick<OperationRunner, 'run'>, req: FastifyRequest, viewer: Viewer,
  entry: { operation: OperationName; resource: string; metadata?: Record<string, unknown> }, run: () => Promise<T>,
  noted?: (result: T) => Record<string, unknown>,
): Promise<T> {
  return operations.run(entry.operation, viewer.principal, { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id },
    { resource: entry.resource, metadata: { via: 'dashboard', ...entry.metadata } }, run, noted);
}
