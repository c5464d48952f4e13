import type { FastifyRequest } from 'fastify';
import { suppliedVectorProblems } from '../../core/embeddings/vectors.ts';
import { validationError, type FieldProblem } from '../../core/errors.ts';
import { assertContentSize, checkMemoryType, checkMetadata, normalizeTags } from '../../core/memories/memory.rules.ts';
import { CLIENT_ID_PATTERN, DEFAULT_MEMORY_TYPE, type Metadata } from '../../core/memories/memory.types.ts';
import { parseTimestamp } from '../../core/search/filters.ts';
import { schemaProblems as kitSchemaProblems, throwIfAnyProblem } from '../http-kit/field-problems.ts';
import { titleFromText } from '../../core/memories/title.ts';
import { splitMetadata } from './mappers.ts';
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

/** Metadata as the core takes it. */
export interface MetadataInput {
  memoryType: string;
  tags: string[];
  metadata: Metadata;
}

export interface CreateRequest extends MetadataInput {
  text: string;
  title: string;
  clientId: string | undefined;
  embedding: number[] | undefined;
}

export interface UpdateRequest {
  text: { text: string; title: string } | undefined;
  metadata: MetadataInput | undefined;
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
function checkText(text: unknown, problems: FieldProblem[], required: boolean): { text: string; title: string } | undefined {
  if (hasProblem(problems, 'text')) return undefined;
  if (text === undefined) {
    if (required) problems.push({ field: 'text', reason: 'required', message: MISSING_FIELD });
    return undefined;
  }
  if (typeof text !== 'string') {
    problems.push({ field: 'text', reason: 'invalid_type', message: 'must be string' });
    return undefined;
  }
  const title = titleFromText(text);
  if (title === null) {
    problems.push({ field: 'text', reason: 'empty', message: TEXT_MESSAGE });
    return undefined;
  }
  return { text, title };
}

function checkMetadataInput(raw: unknown, problems: FieldProblem[]): MetadataInput | undefined {
  if (hasProblem(problems, 'metadata') && !isObject(raw)) return undefined;
  if (!isObject(raw)) {
    problems.push({ field: 'metadata', reason: 'invalid_type', message: 'must be object' });
    return undefined;
  }
  const { memoryType, tags, rest } = splitMetadata(raw);
  let ok = !hasProblem(problems, 'metadata');
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
  return ok ? { memoryType: type, tags: cleanTags, metadata: rest } : undefined;
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
  const text = checkText(body.text, problems, true);
  const clientId = body.id;
  if (clientId !== undefined && !hasProblem(problems, 'id') && (typeof clientId !== 'string' || !CLIENT_ID_PATTERN.test(clientId))) {
    problems.push({ field: 'id', reason: 'invalid_format', message: ID_MESSAGE });
  }
  const metadata = body.metadata === undefined
    ? { memoryType: DEFAULT_MEMORY_TYPE, tags: [], metadata: {} }
    : checkMetadataInput(body.metadata, problems);
  const embedding = body.embedding === undefined ? undefined : checkEmbedding(body.embedding, problems);
  throwIfAnyProblem(problems);
  if (!text || !metadata) throw validationError([{ field: 'body', reason: 'invalid_value', message: 'is invalid' }]); // unreachable: a problem was recorded
  assertContentSize(text.text, limit);
  return { ...text, ...metadata, clientId: clientId as string | undefined, embedding };
}

/** `PUT /api/v1/memory/:id`: text and/or metadata; an embedding cannot be given. */
export function parseUpdate(body: unknown, problems: FieldProblem[], limit: ContentLimit): UpdateRequest {
  requireObject(body, problems);
  if (body.text === undefined && body.metadata === undefined) {
    problems.push({ field: 'body', reason: 'empty', message: 'must contain text or metadata (or both)' });
  }
  if (body.embedding !== undefined) {
    problems.push({ field: 'embedding', reason: 'not_allowed', message: 'cannot be updated: a changed text is re-embedded by the server' });
  }
  const text = checkText(body.text, problems, false);
  const metadata = body.metadata === undefined ? undefined : checkMetadataInput(body.metadata, problems);
  throwIfAnyProblem(problems);
  if (text) assertContentSize(text.text, limit);
  return { text, metadata };
}
