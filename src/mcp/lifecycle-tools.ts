import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { Clock } from '../core/clock.ts';
import { validationError, type FieldProblem } from '../core/errors.ts';
import { RELATED_LIMIT, RELATED_MIN_SIMILARITY, type MemoryService } from '../core/memories/memory.service.ts';
import type { Memory } from '../core/memories/memory.types.ts';
import { validityAt, validityMarker, type ValidityOption } from '../core/memories/validity.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import type { Scope } from '../core/scope.ts';
import { parseTimestamp } from '../core/search/filters.ts';
import { toHistoryJson, toMemoryJson, toRelatedJson } from './mappers.ts';
import type { McpSession } from './session.ts';
import { toolCall } from './tool-call.ts';

/**
 * "Memory that stays true" over MCP (docs/memory-lifecycle.md): the validity arguments the memory tools take
 * (valid_from / valid_until on writes, as_of / include_expired on reads), the `related` answer of memory_create, and
 * the two tools of the lifecycle, memory_supersede and memory_history.
 */
export interface LifecycleToolDeps {
  memories: Pick<MemoryService, 'supersede' | 'history' | 'relatedTo'>;
  /** What "now" is for the `validity` marker of a read (the container's clock). */
  clock: Clock;
}

/** The core operation each lifecycle tool runs (part of MEMORY_TOOL_OPERATIONS). */
export const LIFECYCLE_TOOL_OPERATIONS = {
  memory_supersede: 'memory.supersede',
  memory_history: 'memory.history',
} as const satisfies Record<string, OperationName>;

const workspace = z.string().optional()
  .describe('Workspace to act in (1-64 of letters, digits, _ . : -). Default: the connection\'s workspace (X-Workspace-ID on HTTP, --workspace on stdio), else "default".');

/** valid_from / valid_until of memory_create and memory_update. */
export const VALIDITY_WRITE_ARGS = {
  valid_from: z.string().optional()
    .describe('ISO 8601 date-time from which the fact holds. Default on create: now. A past time records a fact that already held; a future one schedules it'),
  valid_until: z.string().nullable().optional()
    .describe('ISO 8601 date-time until which the fact holds (exclusive; after valid_from). Default: open-ended. On update, null reopens it. '
      + 'Past it, searches and lists leave the memory out (unless include_expired or an earlier as_of)'),
};

/** as_of / include_expired of memory_search and memory_list. */
export const VALIDITY_READ_ARGS = {
  as_of: z.string().optional()
    .describe('ISO 8601 date or date-time: answer as the workspace stood then — only memories valid at that moment (and created by then). Default: now'),
  include_expired: z.boolean().optional()
    .describe('true: also return memories that do not hold (superseded, past valid_until, or not yet valid), each marked with `validity`. Default false'),
};

const INVALID_TIME = 'must be an ISO 8601 date-time';

function timeArg(value: string | undefined, field: string, problems: FieldProblem[]): Date | undefined {
  if (value === undefined) return undefined;
  const d = parseTimestamp(value);
  if (d === null) problems.push({ field, reason: 'invalid_format', message: INVALID_TIME });
  return d ?? undefined;
}

/**
 * A write's validity bounds as the core takes them (validFrom, validUntil; null reopens). A text that is no ISO 8601
 * time becomes an invalid Date, which the core's validation names (with every other bad field of the write).
 */
export function writeValidity(a: { valid_from?: string | undefined; valid_until?: string | null | undefined }):
  { validFrom?: Date; validUntil?: Date | null } {
  const time = (text: string): Date => parseTimestamp(text) ?? new Date(Number.NaN);
  return {
    ...(a.valid_from === undefined ? {} : { validFrom: time(a.valid_from) }),
    ...(a.valid_until === undefined ? {} : { validUntil: a.valid_until === null ? null : time(a.valid_until) }),
  };
}

/**
 * A read's validity (core/memories/validity.ts) and how its results are marked: with include_expired, each memory
 * carries `validity` ("valid" | "expired" | "superseded" | "not_yet_valid") at as_of, else now; otherwise every result
 * holds, and none is marked.
 */
export function readValidity(a: { as_of?: string | undefined; include_expired?: boolean | undefined }, clock: Clock):
  { option: ValidityOption; mark: (m: Memory) => Record<string, unknown> } {
  const problems: FieldProblem[] = [];
  const asOf = timeArg(a.as_of, 'as_of', problems);
  if (problems.length > 0) throw validationError(problems);
  const option: ValidityOption = { ...(asOf ? { asOf } : {}), ...(a.include_expired ? { includeExpired: true } : {}) };
  return { option, mark: validityMarker(option, clock.now()) };
}

/** memory_create's `related`: near-duplicates of the memory just written, for the caller to judge (never superseded here). */
export async function relatedJson(deps: LifecycleToolDeps, scope: Scope, memory: Memory): Promise<Record<string, unknown>[]> {
  return (await deps.memories.relatedTo(scope, memory)).map(toRelatedJson);
}

/** The sentence memory_create's description adds: what `related` is and what to do with it. */
export const CREATE_RELATED_HELP = ` Always returns \`related\` too: up to ${RELATED_LIMIT} memories of the workspace, valid now, that read nearly the same `
  + `(calibrated similarity ≥ ${RELATED_MIN_SIMILARITY}), best first, each {id, title, similarity}. Similar is not the same fact: `
  + 'read each one. When the new memory replaces one of them (the same fact, changed: a new address, a moved date, a reversed decision), '
  + 'call memory_supersede {id: <the old one>, by: <the new one>}; when you know beforehand, pass `supersedes: [old ids]` here instead '
  + '(atomic). Never supersede merely because a memory is similar: two people\'s birthdays are similar and both stay true. '
  + 'valid_from / valid_until bound when the fact holds.';

const memoryId = (what: string) => z.string().min(1).describe(`${what}: its UUID, or an unambiguous prefix of at least 8 characters`);
const SUPERSEDE = z.object({
  id: memoryId('The memory that no longer holds (the old fact)'),
  by: memoryId('The memory that replaces it (the current fact), e.g. the one memory_create just returned'),
  workspace,
});
const HISTORY = z.object({
  id: memoryId('The memory (a deleted memory\'s full UUID still answers, with its tombstone)'),
  limit: z.number().int().min(1).max(100).default(20).describe('At most this many earlier versions (1-100)'),
  offset: z.number().int().min(0).default(0),
  workspace,
});

/** memory_supersede and memory_history, run like every memory tool (permission, workspace, tool errors). */
export function registerLifecycleTools(server: McpServer, deps: LifecycleToolDeps, session: McpSession): void {
  const call = toolCall(session);

  server.registerTool('memory_supersede', {
    title: 'Supersede a memory',
    description: 'Marks memory `id` as replaced by memory `by` (both of this workspace): the old fact stops holding where the new one '
      + 'starts (its valid_until becomes by\'s valid_from, its superseded_by names by), so searches and lists no longer return it '
      + '(include_expired, or an as_of before that moment, still do). Nothing is deleted; memory_history shows the chain. The usual '
      + 'workflow: memory_create the new fact, read its `related`, and supersede the one that stated the same fact before. Only for '
      + 'the same fact changed, never for a merely similar memory. Refused: by valid from no later than id (VALIDATION_ERROR), id '
      + 'already superseded by another memory (CONFLICT), a loop. Superseding again by the same memory changes nothing. Answers the '
      + 'old memory as it now is. Needs memories:write; counts against the memory-write quota.',
    inputSchema: SUPERSEDE,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, call(LIFECYCLE_TOOL_OPERATIONS.memory_supersede, async (a, { principal, scope }) => {
    const old = await deps.memories.supersede(scope, principal, a.id, a.by);
    return { memory: { ...toMemoryJson(old), validity: validityAt(old, deps.clock.now()) } };
  }));

  server.registerTool('memory_history', {
    title: 'Memory history',
    description: 'How a memory came to be: `versions`, its earlier states (every memory_update keeps the one it replaced), newest '
      + 'first and paged (limit, offset, total, has_more), each with who wrote it and when it was replaced; and `chain`, its '
      + 'supersession both ways: `chain.supersedes`, the memories it replaced (nearest first), and `chain.superseded_by`, those that '
      + 'replaced it (nearest first: the last one is the fact that holds now). A deleted memory answers its `tombstone` (when, by '
      + 'whom, why) and never its content. Needs memories:read.',
    inputSchema: HISTORY,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, call(LIFECYCLE_TOOL_OPERATIONS.memory_history, async (a, { scope }) => {
    const page = { limit: a.limit, offset: a.offset };
    return toHistoryJson(await deps.memories.history(scope, a.id, page), page);
  }));
}
