import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/app/config.ts';
import { createContainer, type Container } from '../../src/app/container.ts';
import { warmUp } from '../../src/app/embedder.factory.ts';
import { ALL_PERMISSIONS, type Principal } from '../../src/core/api-keys/api-key.types.ts';
import type { Scope } from '../../src/core/scope.ts';
import type { SearchContext, SearchOutcome } from '../../src/core/search/search.service.ts';
import { log, phase } from '../lib/progress.ts';
import type { Conversation, Turn } from './locomo.ts';

export type EmbedderKind = 'local' | 'hashing';
export const METHODS = ['keyword', 'semantic', 'hybrid', 'hybrid-norerank'] as const;
export type Method = (typeof METHODS)[number];

export const METHOD_LABELS: Record<Method, string> = {
  keyword: 'keyword (BM25)',
  semantic: 'semantic',
  hybrid: 'hybrid, rerank true',
  'hybrid-norerank': 'hybrid, rerank false',
};

export const TENANT = 'locomo';
export const SEARCH_LIMIT = 10;
export const SEMANTIC_WEIGHT = 0.7;
export const KEYWORD_WEIGHT = 0.3;

export interface QuestionResult {
  sampleId: string;
  category: number;
  evidence: number;
  /** Per method: the found evidence among the top 5 and the top 10, and the wall time of the call. */
  found: Record<Method, { at5: number; at10: number; ms: number }>;
  /** Evidence found in the union of the keyword and the semantic top 10 (up to 20 results): a fusion ceiling. */
  union10: number;
}

export interface EmbedderRun {
  embedder: EmbedderKind;
  modelId: string;
  turns: number;
  warmupMs: number;
  ingestSeconds: number;
  results: QuestionResult[];
}

export interface EvaluateOptions {
  concurrency: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The memory one turn becomes (the protocol in BENCHMARKS.md). */
export function turnMemory(turn: Turn) {
  return {
    title: `${turn.speaker}, ${turn.sessionDate}`,
    content: `${turn.speaker}: ${turn.text}${turn.caption ? ` [image: ${turn.caption}]` : ''}`,
    metadata: { dia_id: turn.diaId, speaker: turn.speaker, session: turn.session, session_date: turn.sessionDate },
    tags: ['locomo', `session-${pad(turn.session)}`],
  };
}

/** The bench writes as an enterprise key of the scope's tenant: no write quota applies. */
const benchActor = (scope: Scope): Principal => ({
  keyId: 'bench', tenantId: scope.tenantId, userId: 'bench', tier: 'enterprise', mode: scope.mode, scopes: new Set(ALL_PERMISSIONS), expiresAt: null,
});

/** Runs `work` over `items` with at most `limit` calls in flight. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export async function ingest(container: Container, scopeOf: (c: Conversation) => Scope, conversations: readonly Conversation[],
  concurrency: number, label: string): Promise<number> {
  const jobs = conversations.flatMap((c) => c.turns.map((turn) => ({ scope: scopeOf(c), turn })));
  const bar = phase(`${label}: ingest`, jobs.length, 'turns');
  const started = performance.now();
  await pool(jobs, concurrency, async ({ scope, turn }) => {
    await container.memories.create(scope, benchActor(scope), turnMemory(turn));
    bar.increment();
  });
  const seconds = (performance.now() - started) / 1000;
  bar.stop(`${jobs.length} turns in ${seconds.toFixed(1)} s = ${Math.round(jobs.length / seconds)} turns/s`);
  return seconds;
}

const diaIdsOf = (outcome: SearchOutcome): string[] =>
  outcome.hits.map((h) => String(h.memory.metadata.dia_id ?? ''));

function count(evidence: ReadonlySet<string>, ids: readonly string[], k: number): number {
  return new Set(ids.slice(0, k).filter((id) => evidence.has(id))).size;
}

/** Ingests every conversation into its own workspace of a fresh store, then asks every question by each method. */
export async function evaluateEmbedder(embedder: EmbedderKind, conversations: readonly Conversation[],
  o: EvaluateOptions): Promise<EmbedderRun> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mnemo-quality-'));
  const config = loadConfig({ MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: embedder, MNEMO_LOG_LEVEL: 'silent' });
  const container = await createContainer(config);
  try {
    log(`\n== ${embedder} (${container.embedder.modelId}, ${container.embedder.dimensions} dims) in ${dataDir} ==`);
    const warmStarted = performance.now();
    await warmUp(container.embedder);
    const warmupMs = performance.now() - warmStarted;

    // An enterprise key, used directly: its principal gives the tenant and mode of every scope.
    const { key } = await container.apiKeys.create({ tenantId: TENANT, userId: 'bench', tier: 'enterprise', mode: 'live' });
    const principal = await container.apiKeys.authenticate(key);
    const scopeOf = (c: Conversation): Scope => ({ tenantId: principal.tenantId, mode: principal.mode, workspace: c.sampleId });

    const ingestSeconds = await ingest(container, scopeOf, conversations, o.concurrency, embedder);

    const questions = conversations.flatMap((c) => c.questions.filter((q) => q.evidence.length > 0).map((q) => ({ c, q })));
    const bar = phase(`${embedder}: search`, questions.length * METHODS.length, 'searches');
    const results: QuestionResult[] = [];
    // One search at a time, so that the latencies are those of a lone request.
    for (const { c, q } of questions) {
      const ctx: SearchContext = { scope: scopeOf(c), userId: 'bench', surface: 'bench' };
      const common = { query: q.question, limit: SEARCH_LIMIT, filter: {} };
      const calls: Record<Method, () => Promise<SearchOutcome>> = {
        keyword: () => container.search.keyword(ctx, common),
        semantic: () => container.search.semantic(ctx, { ...common, threshold: 0 }),
        // No relevance floor (threshold 0): recall of the fused ranking itself; `npm run bench:floor` measures floors.
        hybrid: () => container.search.hybrid(ctx, {
          ...common, semanticWeight: SEMANTIC_WEIGHT, keywordWeight: KEYWORD_WEIGHT, rerank: true, threshold: 0,
        }),
        'hybrid-norerank': () => container.search.hybrid(ctx, {
          ...common, semanticWeight: SEMANTIC_WEIGHT, keywordWeight: KEYWORD_WEIGHT, rerank: false, threshold: 0,
        }),
      };
      const evidence = new Set(q.evidence);
      const found = {} as QuestionResult['found'];
      const top = {} as Record<Method, string[]>;
      for (const method of METHODS) {
        const started = performance.now();
        const outcome = await calls[method]();
        const ms = performance.now() - started;
        const ids = diaIdsOf(outcome);
        top[method] = ids;
        found[method] = { at5: count(evidence, ids, 5), at10: count(evidence, ids, 10), ms };
        bar.increment();
      }
      const union10 = count(evidence, [...new Set([...top.keyword.slice(0, 10), ...top.semantic.slice(0, 10)])], 20);
      results.push({ sampleId: c.sampleId, category: q.category, evidence: evidence.size, found, union10 });
    }
    bar.stop();
    return {
      embedder, modelId: container.embedder.modelId, turns: conversations.reduce((n, c) => n + c.turns.length, 0),
      warmupMs, ingestSeconds, results,
    };
  } finally {
    await container.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
