import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Clock } from '../../core/clock.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG1ErrorHandler } from './errors.ts';
import { toWire } from './mappers.ts';
import { ErrorWire, IdParams, MemoryWire } from './schemas.ts';

export interface G1SupersedeDeps extends AuthDeps {
  /** Counts the memory-write quota there. */
  memories: Pick<MemoryService, 'supersede'>;
  clock: Clock;
}

const SupersedeBody = Type.Object({
  by: Type.String({
    minLength: 1, maxLength: 64,
    description: 'The memory that replaces this one (the current fact): a full UUID or an unambiguous prefix of at least 8 characters',
  }),
});

const SupersedeAnswer = Type.Object({ success: Type.Literal(true), data: MemoryWire });

/**
 * `POST /api/v1/memories/{id}/supersede {by}` (G1's envelope, `X-API-Key`): marks memory `id` replaced by memory `by`
 * after the fact (core MemoryService.supersede; docs/memory-lifecycle.md). Answers the superseded memory as it now is.
 * Register with prefix `/api/v1/memories`.
 */
export const g1SupersedeRoutes: FastifyPluginAsync<G1SupersedeDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));

  r.post('/:id/supersede', {
    config: { operation: 'memory.supersede' },
    schema: {
      tags: ['G1 memories'], security: [{ apiKey: [] }],
      summary: 'Mark a memory as replaced by another (supersession)',
      description: 'The memory stops holding where `by` starts: its valid_until becomes by\'s valid_from and its superseded_by '
        + 'names by, so lists and searches leave it out (include_expired, or an as_of before that moment, still show it). Nothing '
        + 'is deleted; emits memory.superseded; GET /api/v1/memories/{id}/history shows the chain. Superseding again by the same '
        + 'memory changes nothing. 400 when by is not valid from after this memory, or the supersession would make a loop; 404 '
        + 'when either memory does not exist; 409 when this memory is already superseded by another one (or a prefix is '
        + 'ambiguous). Counts one memory write against the hourly quota.',
      params: IdParams,
      body: SupersedeBody,
      response: { 200: SupersedeAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 409: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const memory = await deps.memories.supersede(scopeOf(req), principal, req.params.id, req.body.by);
    return { success: true as const, data: toWire(memory) };
  });
};
