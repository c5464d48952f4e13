import type { FastifyRequest } from 'fastify';
import { suppliedVectorProblems } from '../../core/embeddings/vectors.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import { assertContentSize, checkMemoryType, checkMetadata, checkTitle, normalizeTags } from '../../core/memories/memory.rules.ts';
import { CLIENT_ID_PATTERN, DEFAULT_MEMORY_TYPE, type Metadata } from '../../core/memories/memory.types.ts';
import { parseTimestamp } from '../../core/search/filters.ts';
import { schemaProblems as kitSchemaProblems, throwIfAnyProblem } from '../http-kit/field-problems.ts';
import { titleFromText } from '../../core/memories/title.ts';
import { LIFECYCLE_METADATA_KEYS, splitMetadata } from './mappers.ts';
import { writeValidity } from '../http-kit/validity.ts';
import { G2_VECTOR_DIMENSIONS } from './schemas.ts';

/**
 * G2 request bodies, checked in full before anything is written or counted: the route schema's problems (attached,
 * not thrown) plus the rules the schema cannot say, all reported together. A missing required field has the
 * message `is required`; the error handler lists those as `missing_fields`.
 */

/** The message of a missing required field (as http-kit's schema problems word it). */
export const MISSING_FIELD = 'is required';
const ID_MESSAGE = 'must be 1-128 characters: letters, digits, _ . : - (starting with a letter or digit)';
const TEXT_MESSAGE = 'must contain at least one non-blank line';

export interface ContentLimit { maxContentBytes: number }

/** Metadata as the core takes it; `metadata.valid_from` / `metadata.valid_until` become the memory's validity bounds. */
export interface MetadataInput {
  memoryType: string;
  tags: string[];
  metadata: Metadata;
  validFrom?: Date;
  /** null reopens (update). */
  validUntil?: Date | null;
}

export interface CreateRequest extends MetadataInput {
  text: string;
  title: string;
  clientId: string | undefined;
  embedding: number[] | undefined;
  topicId: string | null | undefined;
  /** `metadata.supersedes`: the memories (by any G2 id) this one replaces, in the same write. */
  supersedes: string[] | undefined;
}

/**
 * The fields @lanonasis/memory-client sends beside the spec's (docs/api.md, "G2 and @lanonasis/memory-client"):
 * each overrides what `metadata` says of the same thing; summary and project_ref are kept as metadata keys.
 */
export interface ClientFields {
  memoryType: string | undefined;
  tags: string[] | undefined;
  topicId: string | null | undefined;
  /** summary / project_ref, as metadata keys (null removes one on update). */
  metadataKeys: Record<string, string | null>;
}

export interface UpdateRequest {
  /** The spec's `text`: content and the title derived from it. */
  text: { text: string; title: string } | undefined;
  metadata: MetadataInput | undefined;
  /** The client's `title` and `content` (each replaces only itself). */
  title: string | undefined;
  content: string | undefined;
  client: ClientFields;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Problems found by the route schema, with G2's wording where AJV's is obscure. */
export function schemaProblems(req: FastifyRequest): FieldProblem[] {
  return kitSchemaProblems(req).map((p) =>
    p.field === 'id' && p.reason === 'invalid_format' ? { field: 'id', reason: 'invalid_format', message: ID_MESSAGE } : p);
}

/** Whether a problem is already known for the field or anything inside it. */
const hasProblem = (problems: readonly FieldProblem[], field: string) =>
  problems.some((p) => p.field === field || p.field.startsWith(`${field}.`) || p.field.startsWith(`${field}[`));

/** Each check below relies on the schema for nothing: a field the schema already faulted is skipped. */
function checkText(text: unknown, problems: FieldProblem[], required: boolean, field = 'text'): { text: string; title: string } | undefined {
  if (hasProblem(problems, field)) return undefined;
  if (text === undefined) {
    if (required) problems.push({ field: 'text', reason: 'required', message: MISSING_FIELD });
    return undefined;
  }
  if (typeof text !== 'string') {
    problems.push({ field, reason: 'invalid_type', message: 'must be string' });
    return undefined;
  }
  const title = titleFromText(text);
  if (title === null) {
    problems.push({ field, reason: 'empty', message: TEXT_MESSAGE });
    return undefined;
  }
  return { text, title };
}

/** `text` (the spec's) or `content` (the client's), never both; which one was given. */
function textOrContent(body: Record<string, unknown>, problems: FieldProblem[], required: boolean): { text: string; title: string } | undefined {
  if (body.text !== undefined && body.content !== undefined) {
    problems.push({ field: 'content', reason: 'not_allowed', message: 'cannot be given with text (content is the same field under the client\'s name)' });
    return undefined;
  }
  return body.content !== undefined ? checkText(body.content, problems, required, 'content') : checkText(body.text, problems, required);
}

function checkGivenTitle(raw: unknown, problems: FieldProblem[]): string | undefined {
  if (raw === undefined || hasProblem(problems, 'title')) return undefined;
  if (typeof raw !== 'string') {
    problems.push({ field: 'title', reason: 'invalid_type', message: 'must be string' });
    return undefined;
  }
  const before = problems.length;
  checkTitle(raw, problems);
  return problems.length === before ? raw : undefined;
}

const CLIENT_METADATA_KEYS = ['summary', 'project_ref'] as const;
const MAX_CLIENT_KEY_LENGTH = { summary: 1000, project_ref: 100 } as const;

/** The client's memory_type, tags, topic_id, summary and project_ref, each checked. */
function clientFields(body: Record<string, unknown>, problems: FieldProblem[], nullable: boolean): ClientFields {
  const out: ClientFields = { memoryType: undefined, tags: undefined, topicId: undefined, metadataKeys: {} };
  if (body.memory_type !== undefined && !hasProblem(problems, 'memory_type')) {
    if (typeof body.memory_type !== 'string') problems.push({ field: 'memory_type', reason: 'invalid_type', message: 'must be string' });
    else {
      checkMemoryType(body.memory_type, problems);
      out.memoryType = body.memory_type;
    }
  }
  if (body.tags !== undefined && !hasProblem(problems, 'tags')) {
    if (!Array.isArray(body.tags)) problems.push({ field: 'tags', reason: 'invalid_type', message: 'must be array' });
    else out.tags = normalizeTags(body.tags as string[], problems, 'tags');
  }
  if (body.topic_id !== undefined && !hasProblem(problems, 'topic_id')) {
    if (body.topic_id === null ? !nullable : typeof body.topic_id !== 'string') {
      problems.push({ field: 'topic_id', reason: 'invalid_type', message: nullable ? 'must be a topic UUID or null' : 'must be a topic UUID' });
    } else out.topicId = body.topic_id as string | null;
  }
  for (const key of CLIENT_METADATA_KEYS) {
    const v = body[key];
    if (v === undefined || hasProblem(problems, key)) continue;
    if (v === null && nullable) out.metadataKeys[key] = null;
    else if (typeof v !== 'string') problems.push({ field: key, reason: 'invalid_type', message: 'must be string' });
    else if (v.length > MAX_CLIENT_KEY_LENGTH[key]) problems.push({ field: key, reason: 'too_long', message: `must be at most ${MAX_CLIENT_KEY_LENGTH[key]} characters` });
    else out.metadataKeys[key] = v;
  }
  return out;
}

/** Metadata with the client's keys set (a null removes the key). */
export function withClientKeys(metadata: Metadata, keys: Record<string, string | null>): Metadata {
  const out: Metadata = { ...metadata };
  for (const [k, v] of Object.entries(keys)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function checkMetadataInput(raw: unknown, problems: FieldProblem[]): MetadataInput | undefined {
  if (hasProblem(problems, 'metadata') && !isObject(raw)) return undefined;
  if (!isObject(raw)) {
    problems.push({ field: 'metadata', reason: 'invalid_type', message: 'must be object' });
    return undefined;
  }
  const { memoryType, tags, rest: given } = splitMetadata(raw);
  // The lifecycle keys are the memory's validity, never stored metadata (mappers.ts, LIFECYCLE_METADATA_KEYS).
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(given)) if (!(LIFECYCLE_METADATA_KEYS as readonly string[]).includes(k)) rest[k] = v;
  let ok = !hasProblem(problems, 'metadata');
  const beforeValidity = problems.length;
  const validity = writeValidity(given, problems, 'metadata.');
  ok &&= problems.length === beforeValidity;
  const type = memoryType ?? DEFAULT_MEMORY_TYPE;
  if (!hasProblem(problems, 'metadata.type')) {
    const before = problems.length;
    checkMemoryType(type, problems, 'metadata.type');
    ok &&= problems.length === before;
  }
  let cleanTags: string[] = [];
  if (!hasProblem(problems, 'metadata.tags') && tags) {
    const before = problems.length;
    cleanTags = normalizeTags(tags, problems, 'metadata.tags');
    ok &&= problems.length === before;
  }
  const timestamp = rest.timestamp;
  if (typeof timestamp === 'string' && !hasProblem(problems, 'metadata.timestamp') && !parseTimestamp(timestamp)) {
    problems.push({ field: 'metadata.timestamp', reason: 'invalid_format', message: 'must be an ISO 8601 date or date-time, e.g. 2026-01-31T12:00:00Z' });
    ok = false;
  }
  const before = problems.length;
  checkMetadata(rest, problems, 'metadata');
  ok &&= problems.length === before;
  return ok ? { memoryType: type, tags: cleanTags, metadata: rest, ...validity } : undefined;
}

/** `metadata.supersedes` of a create: 1-100 memory ids in any G2 form (your id, mem_<uuid>, or the UUID). */
function checkSupersedes(metadata: unknown, problems: FieldProblem[], onCreate: boolean): string[] | undefined {
  const raw = isObject(metadata) ? metadata.supersedes : undefined;
  if (raw === undefined) return undefined;
  if (!onCreate) {
    problems.push({
      field: 'metadata.supersedes', reason: 'not_allowed',
      message: 'is accepted on create only (supersede after the fact: POST /api/v1/memories/{id}/supersede)',
    });
    return undefined;
  }
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 100 || !raw.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 128)) {
    problems.push({ field: 'metadata.supersedes', reason: 'invalid_value', message: 'must be an array of 1-100 memory ids' });
    return undefined;
  }
  return raw as string[];
}

function checkEmbedding(raw: unknown, problems: FieldProblem[]): number[] | undefined {
  if (hasProblem(problems, 'embedding')) return undefined;
  // G2 stores an all-zero embedding as given (it is never found by a semantic search).
  const found = suppliedVectorProblems(raw, 'embedding', { width: G2_VECTOR_DIMENSIONS, refuseZero: false });
  problems.push(...found);
  return found.length === 0 ? raw as number[] : undefined;
}

function requireObject(body: unknown, problems: readonly FieldProblem[]): asserts body is Record<string, unknown> {
  if (isObject(body)) return;
  throwIfAnyProblem(problems);
  throw validationError([{ field: 'body', reason: 'invalid_type', message: 'must be a JSON object' }]);
}

/** `POST /api/v1/memory`: every problem at once (400); then the content size (413). */
export function parseCreate(body: unknown, problems: FieldProblem[], limit: ContentLimit): CreateRequest {
  requireObject(body, problems);
  const text = textOrContent(body, problems, true);
  const title = checkGivenTitle(body.title, problems);
  const client = clientFields(body, problems, false);
  const clientId = body.id;
  if (clientId !== undefined && !hasProblem(problems, 'id') && (typeof clientId !== 'string' || !CLIENT_ID_PATTERN.test(clientId))) {
    problems.push({ field: 'id', reason: 'invalid_format', message: ID_MESSAGE });
  }
  const metadata = body.metadata === undefined
    ? { memoryType: DEFAULT_MEMORY_TYPE, tags: [], metadata: {} }
    : checkMetadataInput(body.metadata, problems);
  const embedding = body.embedding === undefined ? undefined : checkEmbedding(body.embedding, problems);
  const supersedes = checkSupersedes(body.metadata, problems, true);
  throwIfAnyProblem(problems);
  if (!text || !metadata) throw validationError([{ field: 'body', reason: 'invalid_value', message: 'is invalid' }]); // unreachable: a problem was recorded
  assertContentSize(text.text, limit);
  return {
    text: text.text,
    title: title ?? text.title,
    memoryType: client.memoryType ?? metadata.memoryType,
    tags: client.tags ?? metadata.tags,
    metadata: withClientKeys(metadata.metadata, client.metadataKeys),
    ...(metadata.validFrom === undefined ? {} : { validFrom: metadata.validFrom }),
    ...(metadata.validUntil === undefined ? {} : { validUntil: metadata.validUntil }),
    clientId: clientId as string | undefined,
    embedding,
    topicId: client.topicId,
    supersedes,
  };
}

/** The client's `status`: memories have no states (spec), so only `active`, which every memory is, is accepted. */
function checkStatus(raw: unknown, problems: FieldProblem[]): void {
  if (raw !== undefined && raw !== 'active') {
    problems.push({ field: 'status', reason: 'invalid_value', message: 'memories have no states: only active is accepted' });
  }
}

/** `PUT /api/v1/memory/:id`: text and/or metadata; an embedding cannot be given. */
export function parseUpdate(body: unknown, problems: FieldProblem[], limit: ContentLimit): UpdateRequest {
  requireObject(body, problems);
  const fields = ['text', 'metadata', 'content', 'title', 'memory_type', 'tags', 'topic_id', ...CLIENT_METADATA_KEYS];
  if (fields.every((f) => body[f] === undefined)) {
    problems.push({ field: 'body', reason: 'empty', message: 'must contain text or metadata (or both)' });
  }
  if (body.embedding !== undefined) {
    problems.push({ field: 'embedding', reason: 'not_allowed', message: 'cannot be updated: a changed text is re-embedded by the server' });
  }
  // `text` keeps the spec's meaning (content and derived title); the client's `content` replaces the content only.
  const both = body.text !== undefined && body.content !== undefined;
  const text = body.content === undefined ? checkText(body.text, problems, false) : undefined;
  if (both) problems.push({ field: 'content', reason: 'not_allowed', message: 'cannot be given with text' });
  const content = !both && body.content !== undefined ? checkText(body.content, problems, false, 'content')?.text : undefined;
  const title = checkGivenTitle(body.title, problems);
  checkStatus(body.status, problems);
  const client = clientFields(body, problems, true);
  const metadata = body.metadata === undefined ? undefined : checkMetadataInput(body.metadata, problems);
  checkSupersedes(body.metadata, problems, false);
  throwIfAnyProblem(problems);
  if (text) assertContentSize(text.text, limit);
  if (content !== undefined) assertContentSize(content, limit);
  return { text, metadata, title, content, client };
}
