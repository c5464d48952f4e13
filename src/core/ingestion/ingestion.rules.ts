import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { checkMetadata, normalizeTags } from '../memories/memory.rules.ts';
import { INGEST_ROLES, type IngestMessage, type IngestRole, type IngestionMode, type IngestionPolicy } from './ingestion.types.ts';

/** The bounds of one ingestion (docs/ingestion.md "Limits"); the MNEMO_INGEST_* variables set them. */
export interface IngestionLimits {
  /** Messages per request. */
  maxMessages: number;
  /** Characters of one message's content. */
  maxMessageChars: number;
  /** Characters of all messages' contents together. */
  maxTotalChars: number;
  /** Model calls one job may make (retries, fallbacks and repairs included); a job needing more fails. */
  maxModelCalls: number;
  /** Characters of transcript per extraction call. */
  windowChars: number;
  /** Jobs of one tenant that run at once (on all nodes together); the others wait their turn. */
  tenantConcurrency: number;
  /** Jobs of one tenant queued or running at once; a request beyond it is refused (429) until one ends. */
  tenantQueue: number;
}

export const DEFAULT_INGESTION_LIMITS: IngestionLimits = {
  maxMessages: 500, maxMessageChars: 16_000, maxTotalChars: 200_000, maxModelCalls: 100, windowChars: 8_000,
  tenantConcurrency: 2, tenantQueue: 20,
};

export interface IngestRequestMessage {
  role: string;
  content: string;
  timestamp?: Date | null | undefined;
}

export interface IngestInput {
  messages: readonly IngestRequestMessage[];
  policy?: IngestionPolicy | undefined;
  mode?: IngestionMode | undefined;
  metadata?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
}

/** The request's messages checked against the limits (each problem named by its field), as stored. */
export function checkMessages(messages: readonly IngestRequestMessage[], limits: IngestionLimits): IngestMessage[] {
  const problems: FieldProblem[] = [];
  if (messages.length === 0) problems.push({ field: 'messages', reason: 'too_few', message: 'must hold at least one message' });
  if (messages.length > limits.maxMessages) {
    problems.push({ field: 'messages', reason: 'too_many', message: `must hold at most ${limits.maxMessages} messages` });
  }
  let total = 0;
  messages.slice(0, limits.maxMessages).forEach((m, i) => {
    if (!(INGEST_ROLES as readonly string[]).includes(m.role)) {
      problems.push({ field: `messages[${i}].role`, reason: 'invalid_value', message: `must be one of: ${INGEST_ROLES.join(', ')}` });
    }
    if (m.content.length > limits.maxMessageChars) {
      problems.push({ field: `messages[${i}].content`, reason: 'too_long', message: `must be at most ${limits.maxMessageChars} characters` });
    }
    total += m.content.length;
  });
  if (total > limits.maxTotalChars) {
    problems.push({ field: 'messages', reason: 'too_long', message: `contents must total at most ${limits.maxTotalChars} characters (got ${total})` });
  }
  if (problems.length === 0 && messages.every((m) => m.content.trim() === '')) {
    problems.push({ field: 'messages', reason: 'empty', message: 'at least one message must have content' });
  }
  if (problems.length > 0) throw validationError(problems.slice(0, 20));
  return messages.map((m) => ({ role: m.role as IngestRole, content: m.content, timestamp: m.timestamp ?? null }));
}

/** Tags and metadata checked as a memory's are (they go on each memory written). */
export function checkIngestExtras(tags: readonly string[] | undefined, metadata: Record<string, unknown> | undefined): string[] {
  const problems: FieldProblem[] = [];
  const clean = normalizeTags([...(tags ?? [])], problems);
  if (metadata) checkMetadata(metadata, problems);
  if (problems.length > 0) throw validationError(problems);
  return clean;
}

export const extractNeedsModel = (): DomainError => new DomainError('VALIDATION_FAILED',
  'mode "extract" needs a chat model: set MNEMO_LLM_URL and MNEMO_LLM_MODEL (and MNEMO_LLM_API_KEY if the server wants one), or send mode "raw"',
  { fields: [{ field: 'mode', reason: 'not_allowed', message: 'no chat model is configured (MNEMO_LLM_URL, MNEMO_LLM_MODEL)' }] });
