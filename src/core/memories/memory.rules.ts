import { DomainError, validationError, type FieldProblem } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { checkJsonDepth } from '../json-limits.ts';
import {
  MAX_METADATA_BYTES, MAX_TAG_LENGTH, MAX_TAGS, MAX_TITLE_LENGTH, MEMORY_TYPE_PATTERN, type Metadata,
} from './memory.types.ts';

/**
 * Domain rules for memory fields, shared by every surface that writes memories. Shape checks (types, required
 * fields) happen at the edge; these are the rules a surface cannot be trusted to repeat.
 */
export interface ContentLimits {
  /** Largest content accepted, in UTF-8 bytes. */
  maxContentBytes: number;
}

export function checkTitle(title: string, problems: FieldProblem[], field = 'title'): void {
  if (title.trim().length === 0) problems.push({ field, reason: 'empty', message: 'must not be empty' });
  else if ([...title].length > MAX_TITLE_LENGTH) {
    problems.push({ field, reason: 'too_long', message: `must be at most ${MAX_TITLE_LENGTH} characters` });
  }
}

export function checkContent(content: string, problems: FieldProblem[], field = 'content'): void {
  if (content.trim().length === 0) problems.push({ field, reason: 'empty', message: 'must not be empty' });
}

export function checkMemoryType(type: string, problems: FieldProblem[], field = 'memory_type'): void {
  if (!MEMORY_TYPE_PATTERN.test(type)) {
    problems.push({ field, reason: 'invalid_format', message: 'must be a lowercase identifier (a-z, 0-9, _ or -), at most 64 characters' });
  }
}

/** Trims, drops duplicates (first spelling wins) and checks count and length. */
export function normalizeTags(tags: readonly string[], problems: FieldProblem[], field = 'tags'): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  tags.forEach((raw, i) => {
    const tag = raw.trim();
    if (tag.length === 0) problems.push({ field: `${field}[${i}]`, reason: 'empty', message: 'must not be empty' });
    else if (tag.length > MAX_TAG_LENGTH) {
      problems.push({ field: `${field}[${i}]`, reason: 'too_long', message: `must be at most ${MAX_TAG_LENGTH} characters` });
    } else if (!seen.has(tag)) {
      seen.add(tag);
      out.push(tag);
    }
  });
  if (out.length > MAX_TAGS) problems.push({ field, reason: 'too_many', message: `at most ${MAX_TAGS} tags` });
  return out;
}

/** Depth first: measuring the size of deeply nested JSON would overflow the stack. */
export function checkMetadata(metadata: Metadata, problems: FieldProblem[], field = 'metadata'): void {
  if (checkJsonDepth(metadata, problems, field)) return;
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > MAX_METADATA_BYTES) {
    problems.push({ field, reason: 'too_long', message: `must serialize to at most ${MAX_METADATA_BYTES} bytes of JSON` });
  }
}

export function checkTopicId(topicId: string | null, problems: FieldProblem[], field = 'topic_id'): void {
  if (topicId !== null && !isUuid(topicId)) problems.push({ field, reason: 'invalid_format', message: 'must be a UUID' });
}

/** Too-large content is its own error (413), not a validation failure. */
export function assertContentSize(content: string, limits: ContentLimits): void {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > limits.maxContentBytes) {
    throw new DomainError('CONTENT_TOO_LARGE', `content is ${bytes} bytes; the limit is ${limits.maxContentBytes}`, {
      fields: [{ field: 'content', reason: 'too_long', message: `must be at most ${limits.maxContentBytes} bytes` }],
      maxBytes: limits.maxContentBytes,
    });
  }
}

export function throwIfProblems(problems: FieldProblem[]): void {
  if (problems.length > 0) throw validationError(problems);
}
