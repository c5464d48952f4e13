import { z } from 'zod';
import type { AnswerSchema, ChatMessage } from '../llm/chat-model.port.ts';
import type { IngestMessage } from './ingestion.types.ts';

/**
 * Every prompt ingestion sends, in one place. PROMPT_VERSION goes up whenever a prompt or an answer schema changes,
 * and is recorded on the job and on each memory it writes (metadata `ingestion.prompt_version`), so that a memory
 * can be traced to the instructions it came from.
 */
export const PROMPT_VERSION = 'ingest-2026-11-29.1';

/** A candidate shown to the model for one fact: an existing memory of the job's scope. */
export interface CandidateMemory {
  id: string;
  content: string;
  validFrom: Date;
}

const EXTRACTION_SYSTEM = [
  'You extract durable facts worth remembering from a conversation between a user and an assistant.',
  'Write each fact as one standalone sentence that makes sense without the conversation: name people, places and',
  'things instead of using pronouns, and include dates when the conversation gives them (resolve "yesterday" or',
  '"next week" against the timestamps of the messages).',
  'Keep what the user will want remembered: facts about people, preferences, plans, decisions, events,',
  'relationships and changes to any of them. Leave out greetings, small talk, questions without answers and',
  'generic advice. Never invent a fact the conversation does not state.',
  'For each fact give `sources`: the numbers (in square brackets) of the messages it comes from.',
  'Answer only with JSON of the form {"facts": [{"content": "...", "sources": [0, 2]}]}.',
  'When nothing is worth remembering, answer {"facts": []}.',
].join(' ');

const DECISION_SYSTEM = [
  'You keep a memory store consistent. You get one new fact and the existing memories most similar to it, each',
  'with its id. Decide exactly one action:',
  '"add" when the fact is new information, even if related memories exist;',
  '"supersede" when the fact replaces or contradicts existing memories that are no longer true (a move, a changed',
  'preference, a new date): list their ids in `supersedes`;',
  '"skip" when an existing memory already states the same fact: give its id in `duplicate_of`.',
  'Use only ids from the list you are given. `reason` is one short sentence.',
  'Answer only with JSON of the form',
  '{"action": "add" | "supersede" | "skip", "supersedes": [ids], "duplicate_of": id or null, "reason": "..."}.',
].join(' ');

/**
 * The answer schemas as the model is shown them (`response_format`): structure only, no length or range keywords,
 * which strict structured-output modes reject. The bounds are checked by the validators below.
 */
export const EXTRACTION_SCHEMA: AnswerSchema = {
  name: 'extracted_facts',
  schema: {
    type: 'object',
    properties: {
      facts: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, sources: { type: 'array', items: { type: 'integer' } } },
          required: ['content', 'sources'],
          additionalProperties: false,
        },
      },
    },
    required: ['facts'],
    additionalProperties: false,
  },
};

export const DECISION_SCHEMA: AnswerSchema = {
  name: 'memory_decision',
  schema: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: ['add', 'supersede', 'skip'] },
      supersedes: { type: 'array', items: { type: 'string' } },
      duplicate_of: { type: ['string', 'null'] },
      reason: { type: 'string' },
    },
    required: ['action', 'supersedes', 'duplicate_of', 'reason'],
    additionalProperties: false,
  },
};

/** Longest fact kept (characters): a fact is one sentence or a few, never a transcript. */
export const MAX_FACT_CHARS = 2_000;
/** Most facts one extraction call may return. */
export const MAX_FACTS_PER_CALL = 40;

export const extractionAnswer = z.object({
  facts: z.array(z.object({
    content: z.string().trim().min(1).max(MAX_FACT_CHARS),
    sources: z.array(z.number().int().min(0)).max(50),
  }).strict()).max(MAX_FACTS_PER_CALL),
}).strict();
export type ExtractionAnswer = z.infer<typeof extractionAnswer>;

export const decisionAnswer = z.object({
  action: z.enum(['add', 'supersede', 'skip']),
  // Models asked for ids sometimes answer null for "none": read as an empty list.
  supersedes: z.array(z.string()).max(20).nullable().transform((ids) => ids ?? []),
  duplicate_of: z.string().nullable().optional().transform((id) => (id === undefined || id === '' ? null : id)),
  reason: z.string().max(1_000).nullable().optional(),
}).strict();
export type DecisionAnswer = z.infer<typeof decisionAnswer>;

const stamp = (at: Date | null): string => (at ? ` (${at.toISOString().slice(0, 16).replace('T', ' ')} UTC)` : '');

/** The transcript of messages `from`..`from + messages.length - 1`, each with its position in the whole conversation. */
export function extractionPrompt(messages: readonly IngestMessage[], from: number): ChatMessage[] {
  const transcript = messages.map((m, i) => `[${from + i}]${stamp(m.timestamp)} ${m.role}: ${m.content}`).join('\n');
  return [
    { role: 'system', content: EXTRACTION_SYSTEM },
    { role: 'user', content: `Conversation:\n${transcript}` },
  ];
}

export function decisionPrompt(fact: string, candidates: readonly CandidateMemory[]): ChatMessage[] {
  const listed = candidates.map((c) => `- id: ${c.id} (valid from ${c.validFrom.toISOString().slice(0, 10)}): ${c.content}`).join('\n');
  return [
    { role: 'system', content: DECISION_SYSTEM },
    { role: 'user', content: `New fact: ${fact}\n\nExisting memories:\n${listed}` },
  ];
}

/** The repair turn: the model's own answer, then what was wrong with it. */
export function repairTurn(answerText: string, problem: string): ChatMessage[] {
  return [
    { role: 'assistant', content: answerText },
    { role: 'user', content: `That answer was not valid: ${problem}\nAnswer again with only the corrected JSON.` },
  ];
}
