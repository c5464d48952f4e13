import type { Principal } from '../api-keys/api-key.types.ts';
import type { Clock } from '../clock.ts';
import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { prefixedId } from '../ids.ts';
import type { ChatModel } from '../llm/chat-model.port.ts';
import type { AtomicStep, MemoryStore } from '../memories/memory.repository.ts';
import type { MemoryService } from '../memories/memory.service.ts';
import { titleFromText } from '../memories/title.ts';
import { chargeQuota } from '../operations/quota.ts';
import type { LimitsService } from '../rate-limit/tier-limits.ts';
import type { Scope } from '../scope.ts';
import type { SearchService } from '../search/search.service.ts';
import { extractProposals, IngestionFailed, rawProposals } from './extraction.ts';
import { ingestionProposed, reviewDecided } from './ingestion-events.ts';
import { ingestionClientId } from './ingestion-forget.ts';
import type { IngestionListQuery, IngestionRepository } from './ingestion.repository.ts';
import { checkIngestExtras, checkMessages, extractNeedsModel, type IngestInput, type IngestionLimits } from './ingestion.rules.ts';
import type { IngestionJob, IngestionUpdate, LeasedIngestion, Proposal } from './ingestion.types.ts';
import { PROMPT_VERSION, type CandidateMemory } from './prompts.ts';

/** The permission that lets a key's ingestions write without a person's review (policy `auto`). */
export const AUTO_INGEST_PERMISSION = 'memories:auto_ingest';

/** How many existing memories a fact's decision is shown, and how similar they must be (hybrid's relevance). */
export const CANDIDATES_PER_FACT = 5;
export const CANDIDATE_MIN_RELEVANCE = 0.55;

export interface ReviewInput {
  /** Decisions on named proposals. */
  decisions: readonly { proposal: string; decision: 'approve' | 'reject' }[];
  /** A decision for every proposal still pending that `decisions` does not name. */
  all?: 'approve' | 'reject' | undefined;
}

export type IngestionService = ReturnType<typeof createIngestionService>;


/**
 * Ingestion (docs/ingestion.md): a conversation is stored as a job and answered at once; a worker (ingestion-worker.ts)
 * turns it into proposals — one memory per turn (`raw`), or facts and decisions from the chat model (`extract`) — which
 * are written at once (`auto`) or wait for a person (`review`). The key that asked can never decide its own job's
 * proposals. Approved proposals are written in one transaction (supersessions included), after the decision is saved,
 * so that a crash between the two leaves the write to a worker rather than losing it.
 */
export function createIngestionService(deps: {
  ingestions: IngestionRepository;
  memories: Pick<MemoryService, 'prepareCreate' | 'supersedeSteps'>;
  store: Pick<MemoryStore, 'applyAtomically' | 'findByClientId'>;
  search: Pick<SearchService, 'hybrid'>;
  /** Null when no chat model is configured: `extract` is then refused. */
  chat: ChatModel | null;
  clock: Clock;
  limits: IngestionLimits;
  quota: Pick<LimitsService, 'memoryWrite'>;
  /** Told when a job is queued (wakes this node's worker). */
  onQueued?: (() => void) | undefined;
  /** The lease a review holds while it writes (the workers' lease): a crash mid-write hands the job to a worker after it. */
  leaseMs?: number | undefined;
}) {
  const { ingestions, clock, limits } = deps;

  async function find(scope: Scope, id: string): Promise<IngestionJob> {
    const job = await ingestions.find(scope, id);
    if (!job) throw new DomainError('NOT_FOUND', `Ingestion ${id} not found`, { resource: 'ingestion' });
    return job;
  }

  /** The nearest memories valid now in the job's scope: the only ids a decision may name. */
  async function candidatesFor(job: IngestionJob, fact: string): Promise<CandidateMemory[]> {
    const { hits } = await deps.search.hybrid(
      { scope: job.scope, userId: job.requestedBy.userId, surface: 'ingestion', unlogged: true },
      { query: fact, limit: CANDIDATES_PER_FACT, filter: {}, semanticWeight: 0.7, keywordWeight: 0.3, rerank: true, threshold: CANDIDATE_MIN_RELEVANCE },
    );
    return hits.map((h) => ({ id: h.memory.id, content: h.memory.content, validFrom: h.memory.validFrom }));
  }

  /** What a proposal writes: its text, the job's tags, and metadata tracing it to the job (and, raw, to its turn). */
  function memoryInput(job: IngestionJob, p: Proposal) {
    const source = job.messages[p.sources[0] ?? -1];
    const trace = { id: job.id, proposal: p.id, mode: job.mode, model: job.usage.model, prompt_version: job.promptVersion };
    const raw = job.mode === 'raw' && source
      ? { role: source.role, position: p.sources[0], session: job.metadata.session ?? job.id, ...(source.timestamp ? { timestamp: source.timestamp.toISOString() } : {}) }
      : {};
    return {
      title: titleFromText(p.content) ?? p.id, content: p.content, tags: job.tags, clientId: ingestionClientId(job.id, p.id),
      metadata: { ...job.metadata, ...raw, ingestion: trace },
    };
  }

  /**
   * Writes the job's approved proposals in one transaction and returns them applied. Idempotent: the memories carry
   * client ids derived from the job, so proposals a crashed attempt already wrote (all of them, or none: one
   * transaction) are found and not written again. A refused step (the memory to replace is gone, or already replaced
   * by another) refuses all of them: nothing is written.
   */
  async function applyApproved(job: IngestionJob): Promise<Proposal[]> {
    const approved = job.proposals.filter((p) => p.status === 'approved');
    if (approved.length === 0) return job.proposals;
    const written = new Map<string, string>();
    const already = await deps.store.findByClientId(job.scope, ingestionClientId(job.id, approved[0]!.id));
    if (already) {
      for (const p of approved) {
        const m = await deps.store.findByClientId(job.scope, ingestionClientId(job.id, p.id));
        if (m) written.set(p.id, m.id);
      }
    } else {
      const steps: AtomicStep[] = [];
      const at = clock.now();
      for (const p of approved) {
        const prepared = await deps.memories.prepareCreate(job.scope, job.requestedBy.userId, memoryInput(job, p));
        steps.push({ kind: 'insert', memory: prepared.memory, vector: prepared.vector, events: prepared.events });
        if (p.action === 'supersede') steps.push(...await deps.memories.supersedeSteps(job.scope, job.requestedBy.userId, prepared.memory, p.supersedes, at));
        written.set(p.id, prepared.memory.id);
      }
      await deps.store.applyAtomically(job.scope, steps);
    }
    return job.proposals.map((p) => (p.status === 'approved' ? { ...p, status: 'applied' as const, memoryId: written.get(p.id) ?? null } : p));
  }

  const settled = (proposals: readonly Proposal[]) => proposals.every((p) => p.status !== 'pending' && p.status !== 'approved');

  /** The update that ends (or parks for review) a job whose proposals are as given. */
  function outcome(job: IngestionJob, proposals: Proposal[], extra: Partial<IngestionUpdate> = {}): IngestionUpdate {
    const now = clock.now();
    const done = settled(proposals);
    return {
      state: done ? 'completed' : 'pending_review', proposals, usage: job.usage, error: null, promptVersion: job.promptVersion,
      updatedAt: now, finishedAt: done ? now : null, ...extra,
    };
  }

  return {
    find,

    /**
     * Stores a job for `actor` and answers with it (state `queued`): checks the input, the policy the key may ask
     * for, that `extract` has a model, the tenant's bound on unfinished jobs, then charges one memory write.
     */
    async start(scope: Scope, actor: Principal, input: IngestInput): Promise<IngestionJob> {
      const mayAuto = actor.scopes.has(AUTO_INGEST_PERMISSION);
      const policy = input.policy ?? (mayAuto ? 'auto' : 'review');
      if (policy === 'auto' && !mayAuto) {
        throw new DomainError('PERMISSION_DENIED', `policy "auto" needs the ${AUTO_INGEST_PERMISSION} permission; this key's ingestions wait for a review`,
          { required: AUTO_INGEST_PERMISSION });
      }
      const mode = input.mode ?? 'extract';
      if (mode === 'extract' && !deps.chat) throw extractNeedsModel();
      const messages = checkMessages(input.messages, limits);
      const tags = checkIngestExtras(input.tags, input.metadata);
      const active = await ingestions.countActive(scope.tenantId);
      if (active >= limits.tenantQueue) {
        const retryAfterMs = 5_000;
        throw new DomainError('RATE_LIMITED', `This tenant already has ${active} ingestions queued or running (at most ${limits.tenantQueue}); retry when one ends`, {
          limit: { limit: limits.tenantQueue, remaining: 0, resetAt: new Date(clock.now().getTime() + retryAfterMs), retryAfterMs, bucket: 'ingestions' },
        });
      }
      await chargeQuota(deps.quota, 'memory.ingest', actor);
      const now = clock.now();
      const job: IngestionJob = {
        id: prefixedId('ing', 20), scope, requestedBy: { keyId: actor.keyId, userId: actor.userId }, mode, policy, state: 'queued',
        messages, metadata: input.metadata ?? {}, tags, proposals: [], error: null,
        usage: { model: mode === 'extract' ? deps.chat!.model : null, modelCalls: 0, promptTokens: 0, completionTokens: 0 },
        promptVersion: mode === 'extract' ? PROMPT_VERSION : null, attempts: 0, revision: 0, createdAt: now, updatedAt: now, finishedAt: null,
      };
      await ingestions.insert(job);
      deps.onQueued?.();
      return job;
    },

    list: (scope: Scope, query: IngestionListQuery) => ingestions.list(scope, query),

    /**
     * A worker's turn on a leased job: proposals from the messages (or, when a crashed attempt or a review left
     * proposals, those, writing the approved ones), then, for `auto`, the write. Answers the update that ends the job; a model or write failure ends it
     * `failed` with the reason and nothing written. `checkpoint` saves approved proposals before they are written.
     */
    async process(leased: LeasedIngestion, signal: AbortSignal,
      checkpoint: (update: IngestionUpdate) => Promise<void>): Promise<IngestionUpdate> {
      const { job } = leased;
      try {
        // Proposals saved by an earlier attempt or a review are decided: only the approved ones are left to write (a
        // proposal a forget turned `applied` meanwhile must not be extracted and proposed again).
        if (job.proposals.length > 0) return outcome(job, await applyApproved(job));
        let proposals: Proposal[];
        let usage = job.usage;
        if (job.mode === 'raw') {
          proposals = rawProposals(job.messages);
        } else {
          if (!deps.chat) throw new IngestionFailed('model_unavailable', 'No chat model is configured on this node (MNEMO_LLM_URL, MNEMO_LLM_MODEL)');
          const extracted = await extractProposals(job.messages, {
            chat: deps.chat, candidatesFor: (fact) => candidatesFor(job, fact), maxModelCalls: limits.maxModelCalls,
            windowChars: limits.windowChars, signal,
          });
          proposals = extracted.proposals;
          usage = { model: deps.chat.model, ...extracted.usage };
        }
        const current = { ...job, usage };
        if (job.policy === 'review') {
          const update = outcome(current, proposals);
          const pending = proposals.filter((p) => p.status === 'pending');
          return pending.length > 0 ? { ...update, events: [ingestionProposed(current, pending, update.updatedAt)] } : update;
        }
        const at = clock.now();
        const approved = proposals.map((p) => (p.status === 'pending'
          ? { ...p, status: 'approved' as const, decidedBy: job.requestedBy.keyId, decidedAt: at } : p));
        await checkpoint({ ...outcome(current, approved), state: 'running' });
        return outcome(current, await applyApproved({ ...current, proposals: approved }));
      } catch (err) {
        if (signal.aborted) throw err;
        const now = clock.now();
        const error = err instanceof IngestionFailed ? { code: err.code, message: err.message }
          : err instanceof DomainError ? { code: 'apply_failed', message: err.message } : null;
        if (!error) throw err;
        return {
          state: 'failed', proposals: job.proposals.map((p) => (p.status === 'approved' ? { ...p, status: 'pending' } : p)),
          usage: err instanceof IngestionFailed && err.usage ? { ...job.usage, ...err.usage } : job.usage,
          error, promptVersion: job.promptVersion, updatedAt: now, finishedAt: now,
        };
      }
    },

    /**
     * A person's decisions on a job waiting for review. The key that asked for the job may never decide it. Decisions
     * are saved first (over the revision read, so two reviewers cannot both apply), then the approved proposals are
     * written in one transaction; if the write is refused, the decisions are taken back and the refusal is the answer.
     */
    async review(scope: Scope, actor: Principal, id: string, input: ReviewInput): Promise<IngestionJob> {
      const job = await find(scope, id);
      if (actor.keyId === job.requestedBy.keyId) {
        throw new DomainError('PERMISSION_DENIED', 'The key that asked for an ingestion cannot review it: a person decides with another key',
          { reason: 'own_request' });
      }
      if (job.state !== 'pending_review') {
        throw new DomainError('CONFLICT', `Ingestion ${job.id} is ${job.state}, not pending_review`, { state: job.state });
      }
      const problems: FieldProblem[] = [];
      const named = new Map<string, 'approve' | 'reject'>();
      input.decisions.forEach((d, i) => {
        const p = job.proposals.find((x) => x.id === d.proposal);
        if (!p) problems.push({ field: `decisions[${i}].proposal`, reason: 'not_found', message: `no proposal ${d.proposal} in this ingestion` });
        else if (p.status !== 'pending') problems.push({ field: `decisions[${i}].proposal`, reason: 'conflict', message: `proposal ${d.proposal} is already ${p.status}` });
        else if (named.has(d.proposal)) problems.push({ field: `decisions[${i}].proposal`, reason: 'conflict', message: `proposal ${d.proposal} is named twice` });
        else named.set(d.proposal, d.decision);
      });
      if (named.size === 0 && !input.all) problems.push({ field: 'decisions', reason: 'too_few', message: 'name at least one proposal, or send `all`' });
      if (problems.length > 0) throw validationError(problems);

      const at = clock.now();
      const decided = job.proposals.map((p) => {
        const decision = p.status === 'pending' ? named.get(p.id) ?? input.all : undefined;
        return decision ? { ...p, status: decision === 'approve' ? 'approved' as const : 'rejected' as const, decidedBy: actor.keyId, decidedAt: at } : p;
      });
      const newly = decided.filter((p, i) => p.status !== job.proposals[i]!.status);
      const lease = { token: prefixedId('lease', 16), until: new Date(at.getTime() + (deps.leaseMs ?? 60_000)) };
      const conflict = () => new DomainError('CONFLICT', `Ingestion ${job.id} was changed meanwhile; read it again`);
      if (!await ingestions.saveReview(scope, job.id, job.revision, { ...outcome(job, decided), state: 'running' }, lease)) throw conflict();
      let applied: Proposal[];
      try {
        applied = await applyApproved({ ...job, proposals: decided });
      } catch (err) {
        // The write was refused: the decisions are taken back, so the person can decide again.
        await ingestions.saveReview(scope, job.id, job.revision + 1, { ...outcome(job, job.proposals) }, null);
        throw err;
      }
      const update = outcome(job, applied);
      const event = reviewDecided(job, newly.map((p) => applied.find((a) => a.id === p.id)!), actor, update.state, at);
      if (!await ingestions.saveReview(scope, job.id, job.revision + 1, { ...update, events: [event] }, null)) throw conflict();
      return { ...job, ...update, revision: job.revision + 2 };
    },
  };
}
