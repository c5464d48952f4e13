import type { z } from 'zod';
import { ChatModelError, type AnswerSchema, type ChatMessage, type ChatModel } from '../llm/chat-model.port.ts';
import { normalizeContent } from '../memories/content-hash.ts';
import type { IngestMessage, Proposal } from './ingestion.types.ts';
import {
  DECISION_SCHEMA, EXTRACTION_SCHEMA, decisionAnswer, decisionPrompt, extractionAnswer, extractionPrompt, repairTurn,
  type CandidateMemory,
} from './prompts.ts';

/** Why a job ended without writing anything (the job's `error.code`). */
export type IngestionFailureCode =
  | 'model_unavailable' | 'model_timeout' | 'model_refused' | 'model_rejected' | 'invalid_answer' | 'model_call_limit';

export class IngestionFailed extends Error {
  /** The model calls and tokens spent before the failure, so the failed job still shows what it cost. */
  constructor(readonly code: IngestionFailureCode, message: string, readonly usage?: ModelUsage) {
    super(message);
    this.name = 'IngestionFailed';
  }
}

const FAILURE_CODE = {
  timeout: 'model_timeout', unavailable: 'model_unavailable', refused: 'model_refused', rejected: 'model_rejected',
  bad_answer: 'invalid_answer',
} as const satisfies Record<ChatModelError['failure'], IngestionFailureCode>;

export interface ModelUsage {
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
}

export interface ExtractionDeps {
  chat: ChatModel;
  /** The existing memories nearest to a fact, in the job's scope only (valid now). */
  candidatesFor: (fact: string) => Promise<CandidateMemory[]>;
  /** Model calls this job may make in all (retries, fallbacks and repairs included). */
  maxModelCalls: number;
  /** Characters of transcript per extraction call (a longer conversation is read in windows). */
  windowChars: number;
  signal?: AbortSignal | undefined;
}

/** The messages cut into consecutive windows of at most `windowChars` characters (a longer message alone in its own). */
export function windowsOf(messages: readonly IngestMessage[], windowChars: number): { from: number; messages: IngestMessage[] }[] {
  const windows: { from: number; messages: IngestMessage[] }[] = [];
  let current: IngestMessage[] = [];
  let from = 0;
  let chars = 0;
  messages.forEach((m, i) => {
    if (current.length > 0 && chars + m.content.length > windowChars) {
      windows.push({ from, messages: current });
      current = [];
      chars = 0;
      from = i;
    }
    current.push(m);
    chars += m.content.length;
  });
  if (current.length > 0) windows.push({ from, messages: current });
  return windows;
}

/**
 * Runs the model over a conversation: extracts standalone facts window by window, then asks for one decision per
 * fact that has candidates (add, supersede which of them, or skip as a duplicate of one). A fact with no candidate is
 * added without a call. Every answer is validated (schema, then meaning: sources within the conversation, ids among
 * the candidates shown); an invalid one gets one repair call showing the model its error, and a second invalid
 * answer fails the whole job (IngestionFailed): nothing of it is written.
 */
export async function extractProposals(messages: readonly IngestMessage[], deps: ExtractionDeps): Promise<{ proposals: Proposal[]; usage: ModelUsage }> {
  const usage: ModelUsage = { modelCalls: 0, promptTokens: 0, completionTokens: 0 };

  /** One validated answer: the call, and at most one repair. */
  async function ask<S extends z.ZodType>(prompt: ChatMessage[], schema: AnswerSchema, validator: S,
    meaning: (value: z.output<S>) => string | null): Promise<z.output<S>> {
    let turn = prompt;
    for (let attempt = 0; ; attempt++) {
      if (usage.modelCalls >= deps.maxModelCalls) {
        throw new IngestionFailed('model_call_limit', `The job needs more than ${deps.maxModelCalls} model calls (MNEMO_INGEST_MAX_MODEL_CALLS)`, { ...usage });
      }
      let answer: { json: unknown; text: string; calls: number; promptTokens: number; completionTokens: number; noJson?: string };
      try {
        answer = await deps.chat.complete({ messages: turn, schema, signal: deps.signal });
      } catch (err) {
        if (!(err instanceof ChatModelError)) throw err;
        // An answer holding no JSON is an invalid answer like any other: it gets its repair.
        if (err.failure !== 'bad_answer' || !err.answer) {
          usage.modelCalls += err.calls;
          throw new IngestionFailed(FAILURE_CODE[err.failure], `The model gave no usable answer: ${err.message}`, { ...usage });
        }
        answer = { json: undefined, ...err.answer, calls: err.calls, noJson: 'the answer holds no JSON value' };
      }
      usage.modelCalls += answer.calls;
      usage.promptTokens += answer.promptTokens;
      usage.completionTokens += answer.completionTokens;
      const parsed = answer.noJson === undefined ? validator.safeParse(answer.json) : null;
      const problem = parsed === null ? answer.noJson! : parsed.success ? meaning(parsed.data) : issuesText(parsed.error);
      if (problem === null) return parsed!.data as z.output<S>;
      if (attempt === 1) throw new IngestionFailed('invalid_answer', `The model's answer was invalid twice (${schema.name}): ${problem}`, { ...usage });
      turn = [...prompt, ...repairTurn(answer.text, problem)];
    }
  }

  const facts: { content: string; sources: number[] }[] = [];
  const seen = new Set<string>();
  for (const window of windowsOf(messages, deps.windowChars)) {
    const last = window.from + window.messages.length - 1;
    const answer = await ask(extractionPrompt(window.messages, window.from), EXTRACTION_SCHEMA, extractionAnswer, (value) => {
      const outside = value.facts.flatMap((f) => f.sources).find((s) => s < window.from || s > last);
      return outside === undefined ? null : `source ${outside} is not a message number shown (${window.from} to ${last})`;
    });
    for (const fact of answer.facts) {
      // The same fact said twice in one conversation is proposed once.
      const key = normalizeContent(fact.content);
      if (seen.has(key)) continue;
      seen.add(key);
      facts.push({ content: fact.content, sources: [...new Set(fact.sources)].sort((a, b) => a - b) });
    }
  }

  const proposals: Proposal[] = [];
  /** Memories an earlier fact of this job already replaces: a later fact cannot replace them again. */
  const replaced = new Set<string>();
  for (const fact of facts) {
    const candidates = (await deps.candidatesFor(fact.content)).filter((c) => !replaced.has(c.id));
    const base = {
      id: `p${proposals.length + 1}`, content: fact.content, sources: fact.sources, status: 'pending' as const,
      memoryId: null, decidedBy: null, decidedAt: null,
    };
    if (candidates.length === 0) {
      proposals.push({ ...base, action: 'add', supersedes: [], duplicateOf: null, reason: null });
      continue;
    }
    const shown = new Set(candidates.map((c) => c.id));
    const decision = await ask(decisionPrompt(fact.content, candidates), DECISION_SCHEMA, decisionAnswer, (d) => {
      const foreign = [...d.supersedes, ...(d.duplicate_of ? [d.duplicate_of] : [])].find((id) => !shown.has(id));
      if (foreign !== undefined) return `id ${JSON.stringify(foreign)} is not one of the memories listed`;
      if (d.action === 'supersede' && d.supersedes.length === 0) return 'action "supersede" needs the ids it replaces in `supersedes`';
      if (d.action === 'skip' && d.duplicate_of === null) return 'action "skip" needs the id of the memory it duplicates in `duplicate_of`';
      return null;
    });
    const reason = decision.reason?.trim() || null;
    if (decision.action === 'skip') {
      proposals.push({ ...base, action: 'skip', supersedes: [], duplicateOf: decision.duplicate_of, reason, status: 'skipped' });
    } else if (decision.action === 'supersede') {
      const ids = [...new Set(decision.supersedes)];
      ids.forEach((id) => replaced.add(id));
      proposals.push({ ...base, action: 'supersede', supersedes: ids, duplicateOf: null, reason });
    } else {
      proposals.push({ ...base, action: 'add', supersedes: [], duplicateOf: null, reason });
    }
  }
  return { proposals, usage };
}

/** Raw ingestion: each non-empty user or assistant turn becomes one proposal, as said. */
export function rawProposals(messages: readonly IngestMessage[]): Proposal[] {
  const proposals: Proposal[] = [];
  messages.forEach((m, i) => {
    if ((m.role !== 'user' && m.role !== 'assistant') || m.content.trim() === '') return;
    proposals.push({
      id: `p${proposals.length + 1}`, action: 'add', content: m.content.trim(), supersedes: [], duplicateOf: null,
      sources: [i], reason: null, status: 'pending', memoryId: null, decidedBy: null, decidedAt: null,
    });
  });
  return proposals;
}

/** A validation error as one line the model can act on. */
function issuesText(error: z.ZodError): string {
  return error.issues.slice(0, 5).map((i) => `${i.path.length ? i.path.join('.') : 'answer'}: ${i.message}`).join('; ');
}
