import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Principal } from '../../core/api-keys/api-key.types.ts';
import type { Clock } from '../../core/clock.ts';
import type { EmbeddingService } from '../../core/embeddings/embedding.service.ts';
import type { Embedder } from '../../core/embeddings/embedder.port.ts';
import { DomainError, type FieldProblem } from '../../core/errors.ts';
import type { MemoryService } from '../../core/memories/memory.service.ts';
import type { Scope } from '../../core/scope.ts';
import { collectProblems } from '../http-kit/field-problems.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG2ErrorHandler } from './errors.ts';
import { clientView, CLIENT_VECTOR_MODEL, storedVectorOf, toWire, wireVector } from './mappers.ts';
import { parseCreate, parseUpdate, schemaProblems, type ContentLimit } from './requests.ts';
import { CreateBody, ErrorWire, G2_VECTOR_DIMENSIONS, IdParams, Responses, UpdateBody } from './schemas.ts';

export interface G2Deps extends AuthDeps {
  /** Writes count the memory-write quota there. */
  memories: Pick<MemoryService, 'create' | 'get' | 'delete' | 'findByLegacyId' | 'updateByLegacyId' | 'legacyIdOf' | 'vectorOf'>;
  embeddings: Pick<EmbeddingService, 'countTokens'>;
  /** Which model a supplied embedding belongs to (see storedVectorOf). */
  embedder: Pick<Embedder, 'modelId' | 'dimensions'>;
  /** The content size limit, checked before the write quota is counted. */
  config: ContentLimit;
  clock: Clock;
}

const errors = { 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 429: ErrorWire };
const writeErrors = { ...errors, 409: ErrorWire, 413: ErrorWire, 415: ErrorWire, 503: ErrorWire };


/** G2 (legacy): `/api/v1/memory` (Bearer, optional X-Workspace-ID). Register with prefix `/api/v1/memory`. */
export const g2Routes: FastifyPluginAsync<G2Deps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG2ErrorHandler(deps.clock));
  // onRequest: the key is checked (and the gateway limit counted) before the body is even parsed.
  r.addHook('onRequest', authGuard(deps, 'bearer'));
  const tags = ['G2 legacy memory'];
  const security = [{ bearer: [] }];

  /** The caller and its data scope (a bad X-Workspace-ID joins the other problems). */
  function caller(req: FastifyRequest, problems: FieldProblem[]): { principal: Principal; scope: Scope | undefined } {
    const principal = requirePrincipal(req);
    return { principal, scope: collectProblems(problems, () => scopeOf(req)) };
  }

  r.post('/', {
    config: { operation: 'memory.create' },
    schema: {
      tags, security, summary: 'Store a memory',
      description: 'Stores one memory; without `embedding` the server embeds the text. Counts against the hourly memory-write quota.',
      body: CreateBody,
      response: { 201: Responses.created, ...writeErrors },
    },
    attachValidation: true,
  }, async (req, reply) => {
    const problems = schemaProblems(req);
    const { principal, scope } = caller(req, problems);
    const input = parseCreate(req.body, problems, deps.config);
    // metadata.supersedes names memories by any G2 id; the core takes their UUIDs (an unknown one is a 404).
    const supersedes = input.supersedes === undefined ? undefined
      : await Promise.all(input.supersedes.map(async (id) => (await deps.memories.findByLegacyId(scope!, id)).id));
    const memory = await deps.memories.create(scope!, principal, {
      title: input.title,
      content: input.text,
      clientId: input.clientId,
      vector: input.embedding ? storedVectorOf(input.embedding, deps.embedder) : undefined,
      memoryType: input.memoryType,
      tags: input.tags,
      metadata: input.metadata,
      topicId: input.topicId,
      validFrom: input.validFrom,
      validUntil: input.validUntil,
      supersedes,
    });
    const id = deps.memories.legacyIdOf(memory);
    return reply.status(201).send({
      ...clientView(memory, id),
      id,
      status: 'stored' as const,
      embedding_generated: input.embedding === undefined,
      vector_dimensions: G2_VECTOR_DIMENSIONS,
      tokens_used: input.embedding === undefined ? await deps.embeddings.countTokens(input.text) : 0,
    });
  });

  r.get('/:id', {
    config: { operation: 'memory.read' },
    schema: {
      tags, security, summary: 'Get a memory (counts an access)',
      description: 'By your id, mem_<uuid>, or the bare UUID. `embedding` is the stored vector at 1536 dimensions.',
      params: IdParams,
      response: { 200: Responses.memory, ...errors, 503: ErrorWire },
    },
  }, async (req) => {
    const problems: FieldProblem[] = [];
    const { scope } = caller(req, problems);
    if (!scope) throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: problems });
    const found = await deps.memories.findByLegacyId(scope, req.params.id);
    const memory = await deps.memories.get(scope, found.id);
    // The current model's vector, else a supplied one, else what the current model makes of the text.
    const id = deps.memories.legacyIdOf(memory);
    return { ...clientView(memory, id), ...toWire(memory, id, wireVector(await deps.memories.vectorOf(scope, memory, CLIENT_VECTOR_MODEL))) };
  });

  r.put('/:id', {
    config: { operation: 'memory.update' },
    schema: {
      tags, security, summary: 'Update a memory\'s text and/or metadata',
      description: 'A changed text re-derives the title and re-embeds the memory (replacing a supplied embedding); metadata '
        + 'replaces type, tags and every other key. Counts against the hourly memory-write quota.',
      params: IdParams,
      body: UpdateBody,
      response: { 200: Responses.updated, ...writeErrors },
    },
    attachValidation: true,
  }, async (req) => {
    const problems = schemaProblems(req);
    const { principal, scope } = caller(req, problems);
    const input = parseUpdate(req.body, problems, deps.config);
    const { memory, textChanged } = await deps.memories.updateByLegacyId(scope!, principal, req.params.id, {
      text: input.text && { title: input.text.title, content: input.text.text },
      patch: {
        ...input.metadata,
        title: input.title, content: input.content,
        ...(input.client.memoryType !== undefined ? { memoryType: input.client.memoryType } : {}),
        ...(input.client.tags !== undefined ? { tags: input.client.tags } : {}),
        ...(input.client.topicId !== undefined ? { topicId: input.client.topicId } : {}),
      },
      metadataKeys: input.client.metadataKeys,
    });
    const id = deps.memories.legacyIdOf(memory);
    return { ...clientView(memory, id), id, status: 'updated' as const, embedding_regenerated: textChanged };
  });

  r.delete('/:id', {
    config: { operation: 'memory.delete' },
    schema: {
      tags, security, summary: 'Delete a memory permanently',
      description: 'Counts against the hourly memory-write quota.',
      params: IdParams,
      response: { 200: Responses.deleted, ...errors },
    },
  }, async (req) => {
    const problems: FieldProblem[] = [];
    const { principal, scope } = caller(req, problems);
    if (!scope) throw new DomainError('VALIDATION_FAILED', 'Invalid request', { fields: problems });
    const memory = await deps.memories.findByLegacyId(scope, req.params.id);
    await deps.memories.delete(scope, principal, memory.id);
    return { success: true as const, deleted_id: deps.memories.legacyIdOf(memory) };
  });
};
