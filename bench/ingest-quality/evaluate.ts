import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer } from '../../src/app/container.ts';
import { warmUp } from '../../src/app/embedder.factory.ts';
import type { Principal } from '../../src/core/api-keys/api-key.types.ts';
import { DomainError } from '../../src/core/errors.ts';
import type { IngestionMode, IngestionUsage, ProposalAction } from '../../src/core/ingestion/ingestion.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { SearchContext } from '../../src/core/search/search.service.ts';
import { log, phase } from '../lib/progress.ts';
import type { IngestConversation, RoleMapping } from './sessions.ts';
import { roleOf } from './sessions.ts';

export type EmbedderKind = 'local' | 'hashing';
export const TENANT = 'locomo-ingest';
/** The same hybrid search as bench:quality's "hybrid, rerank true" row, so the two recalls can be set side by side. */
export const SEARCH_LIMIT = 10;
export const SEMANTIC_WEIGHT = 0.7;
export const KEYWORD_WEIGHT = 0.3;

export interface LlmOptions {
  url: string;
  model: string;
  apiKey: string | undefined;
}

export interface EvaluateOptions {
  mode: IngestionMode;
  embedder: EmbedderKind;
  roles: RoleMapping;
  llm: LlmOptions | null;
}

/** One session's ingestion job, as it ended. */
export interface JobResult {
  sampleId: string;
  session: number;
  jobId: string | null;
  state: string;
  error: { code: string; message: string } | null;
  messages: number;
  usage: IngestionUsage;
  proposals: Record<ProposalAction, number>;
  /** Proposals written (status `applied`). */
  written: number;
  ms: number;
  /** What the model proposed, for reading a run afterwards (the --json file only). */
  facts: { action: ProposalAction; status: string; content: string; sources: string[]; memoryId: string | null }[];
}

export interface QuestionResult {
  sampleId: string;
  category: number;
  evidence: string[];
  /** Evidence turns among the source turns of the top 10 hits' memories. */
  found: string[];
  hits: number;
  ms: number;
}

export interface ConversationResult {
  sampleId: string;
  sessions: number;
  turns: number;
  jobs: JobResult[];
  /** Distinct evidence turns of the scored questions, and those a written memory's source turns cover. */
  evidenceTurns: string[];
  coveredTurns: string[];
  /** Covered only through a fact skipped as a duplicate of an existing memory (credited to that memory). */
  coveredViaSkip: string[];
  /** Evidence turns by the role their speaker was given (`user` / `assistant`), and how many of them are covered. */
  byRole: Record<'user' | 'assistant', { evidence: number; covered: number }>;
  /** Written memories replaced by a later session's supersession (not valid at the end). */
  supersededAtEnd: number;
  questions: QuestionResult[];
  /** Wall time of the conversation's ingestion (every session, model calls and writes included). */
  ingestSeconds: number;
}

export interface Run {
  mode: IngestionMode;
  embedder: EmbedderKind;
  embedderModel: string;
  llmModel: string | null;
  roles: RoleMapping;
  conversations: ConversationResult[];
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The evidence a question names, if every turn of it was ingested (a --sessions run scores only those). */
export function scoredQuestions(c: IngestConversation) {
  const kept = new Set(c.turns.map((t) => t.diaId));
  return c.questions.filter((q) => q.evidence.length > 0 && q.evidence.every((id) => kept.has(id)));
}

/**
 * Ingests every conversation session by session (one job each, in order, drained before the next starts, so a later
 * session's facts are decided against the memories of the earlier ones), then asks every scored question by hybrid
 * search in the conversation's workspace. A fresh temp SQLite store; the real services, no HTTP.
 */
export async function evaluate(conversations: readonly IngestConversation[], o: EvaluateOptions): Promise<Run> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-ingest-quality-'));
  const env: Record<string, string> = { MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: o.embedder, MNEMO_LOG_LEVEL: 'silent' };
  // The ingestion bounds and the model timeout may be tuned from the environment, as on a server.
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && /^MNEMO_(INGEST_[A-Z_]+|LLM_TIMEOUT_MS)$/.test(k)) env[k] = v;
  }
  if (o.llm) {
    env.MNEMO_LLM_URL = o.llm.url;
    env.MNEMO_LLM_MODEL = o.llm.model;
    if (o.llm.apiKey) env.MNEMO_LLM_API_KEY = o.llm.apiKey;
  }
  const container = await createContainer(loadConfig(env));
  try {
    log(`\n== ${o.mode}${o.llm ? ` with ${o.llm.model} at ${o.llm.url}` : ''}; embedder ${container.embedder.modelId}; store ${dataDir} ==`);
    await warmUp(container.embedder);
    // A real key holding the opt-in permission that lets its ingestions write without review (policy `auto`).
    const { key } = await container.apiKeys.create({
      tenantId: TENANT, userId: 'bench', tier: 'enterprise', mode: 'live', name: 'bench:ingest-quality',
      scopes: ['memories:read', 'memories:write', 'memories:auto_ingest'],
    });
    const principal: Principal = await container.apiKeys.authenticate(key);
    const scopeOf = (c: IngestConversation): Scope => ({ tenantId: principal.tenantId, mode: principal.mode, workspace: c.sampleId });

    const sessionCount = conversations.reduce((n, c) => n + c.sessions.length, 0);
    const bar = phase(`${o.mode}: ingest`, sessionCount, 'sessions');
    const results: ConversationResult[] = [];
    const sourcesOf = new Map<IngestConversation, Map<string, Set<string>>>();
    for (const c of conversations) {
      const scope = scopeOf(c);
      /** Each written memory's source turns: its own fact's, plus those of later facts skipped as its duplicates. */
      const sources = new Map<string, Set<string>>();
      /** Turns some written memory's own fact cites (not counting skip credit). */
      const own = new Set<string>();
      const jobs: JobResult[] = [];
      const started = performance.now();
      for (const s of c.sessions) {
        const jobStarted = performance.now();
        const result: JobResult = {
          sampleId: c.sampleId, session: s.session, jobId: null, state: 'failed', error: null, messages: s.messages.length,
          usage: { model: null, modelCalls: 0, promptTokens: 0, completionTokens: 0 }, proposals: { add: 0, supersede: 0, skip: 0 },
          written: 0, ms: 0, facts: [],
        };
        try {
          const queued = await container.ingestion.start(scope, principal, {
            messages: s.messages, mode: o.mode, policy: 'auto',
            metadata: { session: s.session, session_date: s.date }, tags: ['locomo', `session-${pad(s.session)}`],
          });
          await container.ingestionWorker.drain();
          const job = await container.ingestion.find(scope, queued.id);
          Object.assign(result, { jobId: job.id, state: job.state, error: job.error, usage: job.usage });
          for (const p of job.proposals) {
            result.proposals[p.action]++;
            const turns = p.sources.map((i) => s.diaIds[i]).filter((id): id is string => id !== undefined);
            result.facts.push({ action: p.action, status: p.status, content: p.content, sources: turns, memoryId: p.memoryId });
            if (p.status === 'applied' && p.memoryId) {
              result.written++;
              sources.set(p.memoryId, new Set(turns));
              turns.forEach((t) => own.add(t));
            } else if (p.action === 'skip' && p.duplicateOf) {
              turns.forEach((t) => sources.get(p.duplicateOf!)?.add(t));
            }
          }
          if (job.state !== 'completed') {
            result.error ??= { code: job.state, message: `the job ended ${job.state}` };
          }
        } catch (err) {
          // A request the service refused (validation, quota) is a failed job of this session; anything else stops the run.
          if (!(err instanceof DomainError)) throw err;
          result.error = { code: err.code, message: err.message };
        }
        result.ms = performance.now() - jobStarted;
        if (result.error) log(`  ${c.sampleId} session ${s.session}: job ${result.state}: ${result.error.code}: ${result.error.message}`);
        jobs.push(result);
        bar.increment();
      }
      const ingestSeconds = (performance.now() - started) / 1000;

      let supersededAtEnd = 0;
      for (const id of sources.keys()) {
        const m = await container.memories.findById(scope, id);
        if (!m || m.validUntil !== null || m.supersededBy !== null) supersededAtEnd++;
      }
      const questions = scoredQuestions(c);
      const evidenceTurns = [...new Set(questions.flatMap((q) => q.evidence))];
      const allSources = new Set([...sources.values()].flatMap((set) => [...set]));
      const coveredTurns = evidenceTurns.filter((t) => allSources.has(t));
      const speakerOf = new Map(c.turns.map((t) => [t.diaId, t.speaker]));
      const byRole = { user: { evidence: 0, covered: 0 }, assistant: { evidence: 0, covered: 0 } };
      for (const t of evidenceTurns) {
        const role = roleOf(speakerOf.get(t) ?? '', c.speakers, o.roles);
        byRole[role].evidence++;
        if (allSources.has(t)) byRole[role].covered++;
      }
      sourcesOf.set(c, sources);
      results.push({
        sampleId: c.sampleId, sessions: c.sessions.length, turns: c.turns.length, jobs, evidenceTurns, coveredTurns,
        coveredViaSkip: coveredTurns.filter((t) => !own.has(t)), byRole, supersededAtEnd, questions: [], ingestSeconds,
      });
    }
    const failed = results.flatMap((r) => r.jobs).filter((j) => j.error).length;
    bar.stop(`${sessionCount} sessions${failed > 0 ? `, ${failed} failed` : ''}`);

    const asked = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
    const searchBar = phase(`${o.mode}: search`, asked, 'questions');
    for (const [i, c] of conversations.entries()) {
      const sources = sourcesOf.get(c)!;
      const ctx: SearchContext = { scope: scopeOf(c), userId: 'bench', surface: 'bench' };
      for (const q of scoredQuestions(c)) {
        const started = performance.now();
        // No relevance floor (threshold 0), as bench:quality: recall of the ranking itself.
        const outcome = await container.search.hybrid(ctx, {
          query: q.question, limit: SEARCH_LIMIT, filter: {}, semanticWeight: SEMANTIC_WEIGHT, keywordWeight: KEYWORD_WEIGHT,
          rerank: true, threshold: 0,
        });
        const ms = performance.now() - started;
        const seen = new Set(outcome.hits.flatMap((h) => [...(sources.get(h.memory.id) ?? [])]));
        results[i]!.questions.push({
          sampleId: c.sampleId, category: q.category, evidence: q.evidence, found: q.evidence.filter((t) => seen.has(t)),
          hits: outcome.hits.length, ms,
        });
        searchBar.increment();
      }
    }
    searchBar.stop();
    return {
      mode: o.mode, embedder: o.embedder, embedderModel: container.embedder.modelId, llmModel: o.llm?.model ?? null, roles: o.roles,
      conversations: results,
    };
  } finally {
    await container.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
