import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import { FORGET_PREVIEW_IDS, MAX_FORGET_PER_CALL, type MemoryForget } from '../../core/memories/memory-forget.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { FilterWire, parseFilterWire } from '../http-kit/filter-wire.ts';
import { createG1ErrorHandler } from './errors.ts';
import { ErrorWire } from './schemas.ts';

export interface G1ForgetDeps extends AuthDeps {
  memoryForget: Pick<MemoryForget, 'forget'>;
  clock: Clock;
}

/** `filter` is G3's `filters` (type, tags, date, metadata keys): required, and an empty one is a 400. */
const ForgetBody = Type.Object({
  filter: FilterWire,
  dry_run: Type.Optional(Type.Boolean({ default: false, description: 'true: answer the count and ids, delete nothing' })),
});

const ForgetAnswer = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    dry_run: Type.Boolean(),
    count: Type.Optional(Type.Integer({ description: 'Dry run: how many memories the filter matches now' })),
    deleted: Type.Optional(Type.Integer({ description: 'How many memories were forgotten' })),
    ids: Type.Array(Type.String(), {
      description: `Dry run: the first ${FORGET_PREVIEW_IDS} matching ids, oldest first; otherwise every forgotten id`,
    }),
    ids_truncated: Type.Optional(Type.Boolean({ description: 'Dry run: true when count exceeds the ids listed' })),
  }),
});

/**
 * `POST /api/v1/memories/forget` (G1's envelope, `X-API-Key`): forgets every memory of the workspace that the filter
 * matches, at once, or previews it with `dry_run` (core/memories/memory-forget.ts). Needs `memories:forget`. Register
 * with prefix `/api/v1/memories`.
 */
export const g1ForgetRoutes: FastifyPluginAsync<G1ForgetDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));

  r.post('/forget', {
    config: { operation: 'memory.forget' },
    schema: {
      tags: ['G1 memories'], security: [{ apiKey: [] }],
      summary: 'Forget the memories a filter matches (or preview them with dry_run)',
      description: 'Deletes, in one transaction, every memory of the workspace matching `filter` (at most '
        + `${MAX_FORGET_PER_CALL}; a filter matching more is a 400: narrow it). Each leaves a tombstone (id, when, who, reason `
        + '`forget`; no content) and its stored events keep only its id. Needs the `memories:forget` scope, which keys get only '
        + 'when it is asked for. Counts one memory write against the hourly quota; a dry run counts none.',
      body: ForgetBody,
      response: { 200: ForgetAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const problems: FieldProblem[] = [];
    const filter = parseFilterWire(req.body.filter, 'filter', problems);
    if (problems.length > 0) throw validationError(problems);
    const out = await deps.memoryForget.forget(scopeOf(req), principal, filter, { dryRun: req.body.dry_run === true });
    const data = out.dryRun
      ? { dry_run: true, count: out.count, ids: out.ids, ids_truncated: out.idsTruncated }
      : { dry_run: false, deleted: out.deleted, ids: out.ids };
    return { success: true as const, data };
  });
};
