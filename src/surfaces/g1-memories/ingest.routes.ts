import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { isoTimestamp, type Clock } from '../../core/clock.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import type { IngestionService } from '../../core/ingestion/ingestion.service.ts';
import type { IngestRequestMessage } from '../../core/ingestion/ingestion.rules.ts';
import type { IngestionJob, Proposal } from '../../core/ingestion/ingestion.types.ts';
import type { OperationRunner } from '../../core/operations/runner.ts';
import { parseTimestamp } from '../../core/search/filters.ts';
import { authGuard, requirePrincipal, scopeOf, type AuthDeps } from '../http-kit/auth.ts';
import { createG1ErrorHandler } from './errors.ts';
import { ErrorWire } from './schemas.ts';

export interface G1IngestDeps extends AuthDeps {
  /** Charges the memory-write quota on start; refuses a review by the key that asked. */
  ingestion: Pick<IngestionService, 'start' | 'find' | 'list' | 'review'>;
  /** Writes the review's audit row (operation `memory.ingest_review`, action `ingestion.review`). */
  operations: Pick<OperationRunner, 'run'>;
  clock: Clock;
}

const Iso = Type.String({ description: 'ISO 8601 UTC' });
const IsoOrNull = Type.Union([Iso, Type.Null()]);
const StateField = Type.Enum(['queued', 'running', 'pending_review', 'completed', 'failed'], {
  description: 'queued (waiting for a worker), running, pending_review (proposals wait for a person), completed, failed (nothing written; `error` says why)',
});

const MessageBody = Type.Object({
  role: Type.String({ description: 'user, assistant, system or tool; only user and assistant turns become memories' }),
  content: Type.String({ description: 'The turn\'s text (MNEMO_INGEST_MAX_CHARS bounds all of them together)' }),
  timestamp: Type.Optional(Type.Union([Type.String(), Type.Null()], {
    description: 'ISO 8601: when it was said (lets the model resolve "yesterday"; raw mode keeps it in metadata)',
  })),
});

const IngestBody = Type.Object({
  messages: Type.Array(MessageBody, { description: 'The conversation, in order (MNEMO_INGEST_MAX_MESSAGES at most, default 500)' }),
  policy: Type.Optional(Type.Union([Type.Literal('review'), Type.Literal('auto')], {
    description: 'review: proposals wait for a person (POST /ingest/{id}/review); auto: written at once, which needs the '
      + 'memories:auto_ingest permission. Default: auto for a key holding it, else review',
  })),
  mode: Type.Optional(Type.Union([Type.Literal('extract'), Type.Literal('raw')], {
    description: 'extract (default): the configured chat model (MNEMO_LLM_URL) extracts standalone facts and decides, for each, '
      + 'add, supersede or skip against the nearest existing memories; raw: each non-empty user or assistant turn becomes a memory',
  })),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Merged into each written memory\'s metadata' })),
  tags: Type.Optional(Type.Array(Type.String(), { description: 'Put on each written memory' })),
});

const ListQuery = Type.Object({
  state: Type.Optional(StateField),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0, description: 'Ingestions to skip (newest first)' }),
});

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'The ingestion\'s id (`ing_…`)' }) });
const ReadQuery = Type.Object({
  include: Type.Optional(Type.Literal('messages', { description: '`messages`: the answer also holds the conversation as stored' })),
});

const ReviewBody = Type.Object({
  decisions: Type.Optional(Type.Array(Type.Object({
    proposal: Type.String({ minLength: 1, maxLength: 32, description: 'A proposal\'s id (`p1`, `p2`, …)' }),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
  }), { maxItems: 10_000, description: 'Decisions on named pending proposals' })),
  all: Type.Optional(Type.Union([Type.Literal('approve'), Type.Literal('reject')], {
    description: 'The decision for every pending proposal that `decisions` does not name',
  })),
});

const ProposalWire = Type.Object({
  id: Type.String(),
  action: Type.String({ description: 'add, supersede (replaces `supersedes`) or skip (a duplicate of `duplicate_of`: nothing to write)' }),
  content: Type.String(),
  supersedes: Type.Array(Type.String()),
  duplicate_of: Type.Union([Type.String(), Type.Null()]),
  sources: Type.Array(Type.Integer(), { description: 'Positions (from 0) of the messages it came from' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'The model\'s one-line reason, when it gave one' }),
  status: Type.String({ description: 'pending, approved (being written), rejected, applied (`memory_id`) or skipped' }),
  memory_id: Type.Union([Type.String(), Type.Null()]),
  decided_by: Type.Union([Type.String(), Type.Null()], { description: 'The API key id that decided it (for auto, the requesting key)' }),
  decided_at: IsoOrNull,
  forgotten: Type.Optional(Type.Boolean({
    description: 'true once the memory written for it was forgotten: its content and its source messages are then blank',
  })),
});

const JobWire = Type.Object({
  id: Type.String(),
  object: Type.Literal('ingestion'),
  state: StateField,
  mode: Type.String(),
  policy: Type.String(),
  workspace: Type.String(),
  requested_by: Type.Object({ key_id: Type.String(), user_id: Type.String() }, { description: 'The key that asked: it can never review this ingestion' }),
  messages_count: Type.Integer(),
  messages: Type.Optional(Type.Array(Type.Object({ role: Type.String(), content: Type.String(), timestamp: IsoOrNull }), {
    description: 'Only with ?include=messages',
  })),
  proposals: Type.Array(ProposalWire),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
    description: 'Why a failed job wrote nothing: model_unavailable, model_timeout, model_refused, model_rejected, invalid_answer, model_call_limit, apply_failed, abandoned',
  }),
  usage: Type.Object({
    model: Type.Union([Type.String(), Type.Null()]),
    model_calls: Type.Integer(), prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(),
  }),
  prompt_version: Type.Union([Type.String(), Type.Null()]),
  created_at: Iso,
  updated_at: Iso,
  finished_at: IsoOrNull,
});

const JobAnswer = Type.Object({ success: Type.Literal(true), data: JobWire });
const ListAnswer = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(JobWire),
  pagination: Type.Object({ total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), hasMore: Type.Boolean() }),
});

const proposalWire = (p: Proposal) => ({
  id: p.id, action: p.action, content: p.content, supersedes: p.supersedes, duplicate_of: p.duplicateOf, sources: p.sources,
  reason: p.reason, status: p.status, memory_id: p.memoryId, decided_by: p.decidedBy,
  decided_at: p.decidedAt ? isoTimestamp(p.decidedAt) : null, ...(p.forgotten ? { forgotten: true } : {}),
});

/** An ingestion as G1 answers it; the conversation only when asked for (it can be large). */
export const ingestionWire = (j: IngestionJob, withMessages = false) => ({
  id: j.id, object: 'ingestion' as const, state: j.state, mode: j.mode, policy: j.policy, workspace: j.scope.workspace,
  requested_by: { key_id: j.requestedBy.keyId, user_id: j.requestedBy.userId }, messages_count: j.messages.length,
  ...(withMessages ? {
    messages: j.messages.map((m) => ({ role: m.role, content: m.content, timestamp: m.timestamp ? isoTimestamp(m.timestamp) : null })),
  } : {}),
  proposals: j.proposals.map(proposalWire),
  error: j.error,
  usage: { model: j.usage.model, model_calls: j.usage.modelCalls, prompt_tokens: j.usage.promptTokens, completion_tokens: j.usage.completionTokens },
  prompt_version: j.promptVersion,
  created_at: isoTimestamp(j.createdAt), updated_at: isoTimestamp(j.updatedAt), finished_at: j.finishedAt ? isoTimestamp(j.finishedAt) : null,
});

/** The messages with their timestamps read; a timestamp that is no ISO 8601 time is a 400 naming it. */
function requestMessages(messages: readonly { role: string; content: string; timestamp?: string | null | undefined }[]): IngestRequestMessage[] {
  const problems: FieldProblem[] = [];
  const out = messages.map((m, i) => {
    if (m.timestamp === undefined || m.timestamp === null) return { role: m.role, content: m.content, timestamp: null };
    const at = parseTimestamp(m.timestamp);
    if (!at) problems.push({ field: `messages[${i}].timestamp`, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
    return { role: m.role, content: m.content, timestamp: at };
  });
  if (problems.length > 0) throw validationError(problems.slice(0, 20));
  return out;
}

/**
 * Ingestion on G1 (G1's envelope, `X-API-Key`; docs/ingestion.md): `POST /api/v1/memories/ingest` stores a job and
 * answers 202 (a worker turns it into proposals), `GET /ingest` and `GET /ingest/{id}` read jobs of the workspace,
 * `POST /ingest/{id}/review` records a person's decisions through the operation runner, so each has its audit row.
 * Register with prefix `/api/v1/memories`.
 */
export const g1IngestRoutes: FastifyPluginAsync<G1IngestDeps> = async (app, deps) => {
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  r.setErrorHandler(createG1ErrorHandler(deps.clock));
  r.addHook('onRequest', authGuard(deps, 'x-api-key'));
  const tags = ['G1 memories'];
  const security = [{ apiKey: [] }];

  r.post('/ingest', {
    config: { operation: 'memory.ingest' },
    schema: {
      tags, security,
      summary: 'Ingest a conversation: memories extracted by a model (or one per turn), written at once or after a review',
      description: 'Stores the job and answers 202 with it (state `queued`); a worker runs it. `extract` needs a chat model '
        + '(MNEMO_LLM_URL, MNEMO_LLM_MODEL; 400 naming them otherwise): facts are extracted, then for each the model is shown the '
        + 'nearest memories of this workspace and decides add, supersede or skip. `raw` writes each non-empty user or assistant '
        + 'turn, with role, position and session (metadata.session, else the job id) in its metadata. With policy `review` the '
        + 'proposals wait (state pending_review, event memory.proposed); with `auto` (permission memories:auto_ingest, 403 '
        + 'otherwise) they are written when the job runs. 429 when the tenant already has too many ingestions queued or running. '
        + 'Counts one memory write against the hourly quota.',
      body: IngestBody,
      response: { 202: JobAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 413: ErrorWire, 429: ErrorWire },
    },
  }, async (req, reply) => {
    const principal = requirePrincipal(req);
    const b = req.body;
    const job = await deps.ingestion.start(scopeOf(req), principal, {
      messages: requestMessages(b.messages), policy: b.policy, mode: b.mode, metadata: b.metadata as Record<string, unknown> | undefined, tags: b.tags,
    });
    return reply.status(202).send({ success: true as const, data: ingestionWire(job) });
  });

  r.get('/ingest', {
    config: { operation: 'memory.ingest_read' },
    schema: {
      tags, security, summary: 'List the workspace\'s ingestions, newest first',
      description: 'Without the conversations (GET /ingest/{id}?include=messages has them). `state` keeps one state only.',
      querystring: ListQuery,
      response: { 200: ListAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const q = req.query;
    const { items, total } = await deps.ingestion.list(scopeOf(req), { state: q.state, limit: q.limit, offset: q.offset });
    return {
      success: true as const,
      data: items.map((j) => ingestionWire(j)),
      pagination: { total, page: Math.floor(q.offset / q.limit) + 1, limit: q.limit, hasMore: q.offset + items.length < total },
    };
  });

  r.get('/ingest/:id', {
    config: { operation: 'memory.ingest_read' },
    schema: {
      tags, security, summary: 'An ingestion: its state, its proposals and what was written',
      description: 'Each proposal says what it would do (add, supersede which memories, skip as a duplicate of which), its status '
        + 'and, once applied, the memory written. 404 for an id of another workspace or tenant.',
      params: IdParams, querystring: ReadQuery,
      response: { 200: JobAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const job = await deps.ingestion.find(scopeOf(req), req.params.id);
    return { success: true as const, data: ingestionWire(job, req.query.include === 'messages') };
  });

  r.post('/ingest/:id/review', {
    config: { operation: 'memory.ingest_review' },
    schema: {
      tags, security, summary: 'Approve or reject an ingestion\'s pending proposals',
      description: 'Decides the named proposals (`decisions`) and, with `all`, every other pending one. The approved ones are '
        + 'written in one transaction, supersessions included; a write that is refused (a memory to replace is gone or already '
        + 'replaced) takes the decisions back. Proposals left pending keep the job pending_review. Emits memory.review.decided; '
        + 'every review, accepted or refused, is in the audit log (action ingestion.review). 403 for the key that asked for '
        + 'the ingestion (a person reviews with another key); 409 when the job is not pending_review or changed meanwhile.',
      params: IdParams, body: ReviewBody,
      response: { 200: JobAnswer, 400: ErrorWire, 401: ErrorWire, 403: ErrorWire, 404: ErrorWire, 409: ErrorWire, 429: ErrorWire },
    },
  }, async (req) => {
    const principal = requirePrincipal(req);
    const scope = scopeOf(req);
    const b = req.body;
    const origin = { ip: req.ip, userAgent: req.headers['user-agent'] ?? null, requestId: req.id };
    const subject = {
      resource: `ingestion:${req.params.id}`,
      metadata: { via: 'api', workspace: scope.workspace, decisions: b.decisions?.length ?? 0, all: b.all ?? null },
    };
    const job = await deps.operations.run('memory.ingest_review', principal, origin, subject,
      () => deps.ingestion.review(scope, principal, req.params.id, { decisions: b.decisions ?? [], all: b.all }),
      (j) => ({ state: j.state }));
    return { success: true as const, data: ingestionWire(job) };
  });
};
