import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { BatchService } from '../../core/batch/batch.service.ts';
import type { Clock } from '../../core/clock.ts';
import { randomBase62 } from '../../core/ids.ts';
import type { LimitsService } from '../../core/rate-limit/tier-limits.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG6ErrorHandler, MAX_BATCH_BYTES } from './errors.ts';
import { markerOf, toBatchOp, toResultEntry } from './mappers.ts';
import { checkOperations, parseOptions } from './requests.ts';
import { BatchBody, BatchResponse, ErrorWire } from './schemas.ts';

export interface G6Deps extends AuthDeps {
  batch: BatchService;
  limits: Pick<LimitsService, 'gateway'>;
  clock: Clock;
}

const SAFE_BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** G6: `POST /api/v1/batch` (Bearer, optional X-Workspace-ID, X-Batch-Id). Register with prefix `/api/v1/batch`. */
export const g6Routes: FastifyPluginAsync<G6Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG6ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'bearer'));

  r.post('/', {
    config: { operation: 'batch.run' },
    bodyLimit: MAX_BATCH_BYTES,
    schema: {
      tags: ['G6 batch'], security: [{ bearer: [] }], summary: 'Run up to 100 memory operations',
      body: BatchBody, response: { 200: BatchResponse, 207: BatchResponse, 400: ErrorWire, 401: ErrorWire, 413: ErrorWire, 429: ErrorWire },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const operations = checkOperations(req.body.operations);
    const options = parseOptions(req.body.options);
    const ops = operations.map((op) => toBatchOp(op, deps.clock));
    await deps.batch.admit(principal, ops);
    const header = req.headers['x-batch-id'];
    const batchId = typeof header === 'string' && SAFE_BATCH_ID.test(header) ? header : `batch_${randomBase62(20)}`;

    const { outcomes, executionMs } = await deps.batch.run(principal, scopeOf(req), ops, options);
    const failed = outcomes.filter((o) => o.status === 'failed').length;
    const count = (type: string) => ops.filter((op) => op.type === type).length;
    reply.header('X-Batch-Id', batchId);
    return reply.status(failed > 0 ? 207 : 200).send({
      success: failed === 0,
      data: {
        batch_id: batchId,
        processed: outcomes.length - failed,
        failed,
        total: outcomes.length,
        execution_time: Math.round(executionMs * 100) / 100,
        operations: outcomes.map((o) => toResultEntry(o, markerOf(ops[o.index]!, deps.clock))),
        summary: { creates: count('create'), reads: count('read'), updates: count('update'), deletes: count('delete'), searches: count('search') },
      },
    });
  });
};
