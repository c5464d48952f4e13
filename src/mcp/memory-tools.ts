import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { validationError } from '../core/errors.ts';
import type { MemoryService } from '../core/memories/memory.service.ts';
import { validityAt } from '../core/memories/validity.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import { titleFromText } from '../core/memories/title.ts';
import type { ScoredHit, SearchService } from '../core/search/search.service.ts';
import type { TopicService } from '../core/topics/topic.service.ts';
import { toMemoryJson, toSearchHitJson, toTopicJson } from './mappers.ts';
import {
  CREATE_RELATED_HELP, LIFECYCLE_TOOL_OPERATIONS, readValidity, relatedJson, VALIDITY_READ_ARGS, VALIDITY_WRITE_ARGS, writeValidity,
  type LifecycleToolDeps,
} from './lifecycle-tools.ts';
import { FORGET_TOOL_OPERATIONS } from './forget-tool.ts';
import { INGEST_TOOL_OPERATIONS } from './ingest-tools.ts';
import type { McpSession } from './session.ts';
import { toolCall } from './tool-call.ts';
import { TOOL_FILTER, toolFilter } from './tool-filter.ts';

export interface MemoryToolDeps extends LifecycleToolDeps {
  memories: Pick<MemoryService, 'create' | 'get' | 'update' | 'delete' | 'list'> & LifecycleToolDeps['memories'];
  search: Pick<SearchService, 'hybrid' | 'semantic' | 'keyword'>;
  topics: Pick<TopicService, 'list' | 'hierarchy'>;
}

const workspace = z.string().optional()
  .describe('Workspace to act in (1-64 of letters, digits, _ . : -). Default: the connection\'s workspace (X-Workspace-ID on HTTP, --workspace on stdio), else "default".');
const memoryId = z.string().min(1).describe('The memory\'s UUID, or an unambiguous prefix of at least 8 characters');
const memoryType = z.string().describe('context, project, knowledge, reference, personal, workflow, or any lowercase identifier');
const tags = z.array(z.string()).describe('Up to 100 tags of 1-100 characters');
const metadata = z.record(z.string(), z.unknown()).describe('Any JSON object (up to 64 KiB, nested at most 16 levels)');
const topicId = z.string().nullable().describe('A topic UUID of this workspace (see topic_list), or null for none');

/** Argument schemas, built once (a server instance is made per HTTP request: building zod schemas there is costly). */
const CREATE = z.object({
  content: z.string().describe('The text to remember (not blank; up to 1 MiB by default)'),
  title: z.string().optional().describe('1-255 characters; default: the first line of the content'),
  memory_type: memoryType.optional(),
  tags: tags.optional(),
  metadata: metadata.optional(),
  topic_id: topicId.optional(),
  ...VALIDITY_WRITE_ARGS,
  supersedes: z.array(z.string()).optional()
    .describe('Full UUIDs of memories (of this workspace) this one replaces, at most 100: each stops holding where this one starts, in the same write'),
  workspace,
});
const SEARCH = z.object({
  query: z.string().min(1).max(10_000).describe('What to look for, in natural language or keywords'),
  mode: z.enum(['hybrid', 'semantic', 'keyword']).default('hybrid'),
  limit: z.number().int().min(1).max(100).default(10).describe('At most this many hits (1-100)'),
  threshold: z.number().min(0).max(1).optional()
    .describe('Lowest score kept, on the calibrated scale (docs/api.md, "Scores"; default 0.7 = relevant, 0 = keep all): for semantic the similarity, for hybrid the relevance (the similarity raised by keyword coverage)'),
  semantic_weight: z.number().min(0).max(1).default(0.7).describe('Hybrid: weight of semantic similarity'),
  keyword_weight: z.number().min(0).max(1).default(0.3).describe('Hybrid: weight of keyword relevance'),
  filters: TOOL_FILTER.optional(),
  ...VALIDITY_READ_ARGS,
  workspace,
});
const GET = z.object({ id: memoryId, workspace });
const UPDATE = z.object({
  id: memoryId,
  title: z.string().optional(), content: z.string().optional(), memory_type: memoryType.optional(), tags: tags.optional(),
  metadata: metadata.optional(), topic_id: topicId.optional(), ...VALIDITY_WRITE_ARGS, workspace,
});
const DELETE = z.object({ id: memoryId, workspace });
const LIST = z.object({
  limit: z.number().int().min(1).max(100).default(20),
  offset: z.number().int().min(0).default(0),
  sort_by: z.enum(['created_at', 'updated_at', 'title']).default('created_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
  memory_type: z.string().optional().describe('Only memories of this type'),
  tags: z.array(z.string()).optional().describe('Only memories having at least one of these tags'),
  ...VALIDITY_READ_ARGS,
  workspace,
});
const TOPICS = z.object({
  limit: z.number().int().min(1).max(100).default(50),
  offset: z.number().int().min(0).default(0),
  hierarchy: z.boolean().default(false).describe('The whole tree (root topics with nested children), not paged'),
  workspace,
});

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The core operation each memory tool runs (memory_search: by its mode); test/cross/operations.test.ts lists them. */
export const MEMORY_TOOL_OPERATIONS = {
  memory_create: 'memory.create',
  memory_search: ['memory.search_hybrid', 'memory.search', 'memory.search_keyword'],
  memory_get: 'memory.read',
  memory_update: 'memory.update',
  memory_delete: 'memory.delete',
  memory_list: 'memory.list',
  topic_list: 'topic.list',
  ...LIFECYCLE_TOOL_OPERATIONS,
  ...FORGET_TOOL_OPERATIONS,
  ...INGEST_TOOL_OPERATIONS,
} as const satisfies Record<string, OperationName | readonly OperationName[]>;

const searchOperation = (a: z.infer<typeof SEARCH>): OperationName =>
  (a.mode === 'semantic' ? 'memory.search' : a.mode === 'keyword' ? 'memory.search_keyword' : 'memory.search_hybrid');

/**
 * The memory tools: G1's operations (create, get, update, delete, list), the hybrid search of G3, and the topics,
 * over the same services, scoped to the key's tenant and mode and to a workspace. Each call authenticates (stdio)
 * and counts against the key's limits as a REST request does; every failure is a tool error (`isError`), never a
 * broken session.
 */
export function registerMemoryTools(server: McpServer, deps: MemoryToolDeps, session: McpSession): void {
  /**
   * Runs one call for the session's caller, as the core operation `operationOf(args)` (its permission first), in the
   * workspace it names; failures become tool errors.
   */
  const call = toolCall(session);

  server.registerTool('memory_create', {
    title: 'Create a memory',
    description: 'Stores a memory (content, optional title, type, tags, metadata, topic) in the workspace and embeds it for search. '
      + 'Returns the stored memory with its id.' + CREATE_RELATED_HELP
      + ' Needs the memories:write scope; counts against the hourly memory-write quota.',
    inputSchema: CREATE,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  }, call(MEMORY_TOOL_OPERATIONS.memory_create, async (a, { principal, scope }) => {
    const memory = await deps.memories.create(scope, principal, {
      title: a.title ?? titleFromText(a.content) ?? '', content: a.content, memoryType: a.memory_type, tags: a.tags,
      metadata: a.metadata, topicId: a.topic_id, ...writeValidity(a), supersedes: a.supersedes,
    });
    return { memory: toMemoryJson(memory), related: await relatedJson(deps, scope, memory) };
  }));

  server.registerTool('memory_search', {
    title: 'Search memories',
    description: 'Finds memories of the workspace relevant to a query. Default mode "hybrid": calibrated semantic similarity and '
      + 'keyword coverage (the share of the query\'s words the memory holds) fused by weight, as G3 hybrid with rerank; "semantic" or "keyword" use one of them. Filters narrow by type, tags, metadata, topic and '
      + 'creation date. Returns hits best first with their scores. Only memories that hold now are searched: superseded ones '
      + '(memory_supersede) and those past their valid_until are left out; as_of answers as of another moment, and include_expired: '
      + 'true returns them too, each marked `validity` ("valid", "expired", "superseded", "not_yet_valid"). Needs memories:read.',
    inputSchema: SEARCH,
    annotations: readOnly,
  }, call(searchOperation, async (a, { principal, scope }) => {
    const filter = a.filters ? toolFilter(a.filters, 'filters') : {};
    const { option: validity, mark } = readValidity(a, deps.clock);
    const hitJson = (h: ScoredHit) => ({ ...toSearchHitJson(h), ...mark(h.memory) });
    const ctx = { scope, userId: principal.userId, surface: 'mcp', arrivedAt: performance.now() };
    const logFilters = a.filters ?? {};
    if (a.mode === 'semantic') {
      const out = await deps.search.semantic(ctx, { query: a.query, limit: a.limit, threshold: a.threshold ?? 0.7, filter, validity, logFilters });
      return { mode: a.mode, results: out.hits.map(hitJson), total: out.total };
    }
    if (a.mode === 'keyword') {
      const out = await deps.search.keyword(ctx, { query: a.query, limit: a.limit, filter, validity, logFilters });
      return { mode: a.mode, results: out.hits.map(hitJson), total: out.total };
    }
    if (a.semantic_weight === 0 && a.keyword_weight === 0) {
      const message = 'must not both be 0';
      throw validationError([{ field: 'semantic_weight', reason: 'invalid_value', message }, { field: 'keyword_weight', reason: 'invalid_value', message }]);
    }
    const out = await deps.search.hybrid(ctx, {
      query: a.query, limit: a.limit, threshold: a.threshold, filter, semanticWeight: a.semantic_weight, keywordWeight: a.keyword_weight,
      // The fusion G3 uses by default (rerank): it ranks better than either leg on the paraphrase set and on LoCoMo.
      rerank: true, validity, logFilters,
    });
    return {
      mode: a.mode, results: out.hits.map(hitJson), total: out.total,
      semantic_results: out.semanticResults, keyword_results: out.keywordResults, method: out.method,
    };
  }));

  server.registerTool('memory_get', {
    title: 'Get a memory',
    description: 'Reads one memory of the workspace by its id (or an unambiguous prefix of 8+ characters) and counts the access. Needs memories:read.',
    inputSchema: GET,
    annotations: { ...readOnly, idempotentHint: false },
  }, call(MEMORY_TOOL_OPERATIONS.memory_get, async (a, { scope }) => {
    // Any memory by its id, holding or not: `validity` says which.
    const memory = await deps.memories.get(scope, a.id);
    return { memory: { ...toMemoryJson(memory, true), validity: validityAt(memory, deps.clock.now()) } };
  }));

  server.registerTool('memory_update', {
    title: 'Update a memory',
    description: 'Changes fields of one memory (any of title, content, memory_type, tags, metadata, topic_id, valid_from, valid_until; '
      + 'at least one). Changing title or content re-embeds it. The state it replaces is kept (memory_history). To record that a fact '
      + 'changed, prefer memory_create of the new fact then memory_supersede of the old one: both stay, each valid for its time. '
      + 'Needs memories:write; counts against the memory-write quota.',
    inputSchema: UPDATE,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  }, call(MEMORY_TOOL_OPERATIONS.memory_update, async (a, { principal, scope }) => {
    const patch = {
      ...(a.title === undefined ? {} : { title: a.title }), ...(a.content === undefined ? {} : { content: a.content }),
      ...(a.memory_type === undefined ? {} : { memoryType: a.memory_type }), ...(a.tags === undefined ? {} : { tags: a.tags }),
      ...(a.metadata === undefined ? {} : { metadata: a.metadata }), ...(a.topic_id === undefined ? {} : { topicId: a.topic_id }),
      ...writeValidity(a),
    };
    if (Object.keys(patch).length === 0) {
      throw validationError([{ field: 'body', reason: 'required', message: 'name at least one field to change' }]);
    }
    return { memory: toMemoryJson(await deps.memories.update(scope, principal, a.id, patch)) };
  }));

  server.registerTool('memory_delete', {
    title: 'Delete a memory',
    description: 'Deletes one memory of the workspace permanently. Needs memories:write; counts against the memory-write quota.',
    inputSchema: DELETE,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, call(MEMORY_TOOL_OPERATIONS.memory_delete, async (a, { principal, scope }) => {
    const { id, deletedAt } = await deps.memories.delete(scope, principal, a.id);
    return { deleted: true, id, deleted_at: deletedAt.toISOString() };
  }));

  server.registerTool('memory_list', {
    title: 'List memories',
    description: 'Lists the workspace\'s memories, newest first by default, a page at a time, optionally by type or tags (any of). Only '
      + 'memories that hold now, unless as_of (those valid then) or include_expired (all, each marked `validity`). Needs memories:read.',
    inputSchema: LIST,
    annotations: readOnly,
  }, call(MEMORY_TOOL_OPERATIONS.memory_list, async (a, { scope }) => {
    const { option: validity, mark } = readValidity(a, deps.clock);
    const { items, total } = await deps.memories.list(scope, {
      filter: { types: a.memory_type === undefined ? undefined : [a.memory_type], tagsAny: a.tags && a.tags.length > 0 ? a.tags : undefined },
      limit: a.limit, offset: a.offset, sortBy: a.sort_by, sortOrder: a.sort_order,
    }, validity);
    return { memories: items.map((m) => ({ ...toMemoryJson(m), ...mark(m) })), total, limit: a.limit, offset: a.offset, has_more: a.offset + items.length < total };
  }));

  server.registerTool('topic_list', {
    title: 'List topics',
    description: 'Lists the workspace\'s topics (which group memories through topic_id), oldest first and paged, or as the whole tree '
      + 'with hierarchy: true. Needs memories:read.',
    inputSchema: TOPICS,
    annotations: readOnly,
  }, call(MEMORY_TOOL_OPERATIONS.topic_list, async (a, { scope }) => {
    if (a.hierarchy) return { topics: (await deps.topics.hierarchy(scope)).map(toTopicJson) };
    const { items, total } = await deps.topics.list(scope, { limit: a.limit, offset: a.offset });
    return { topics: items.map(toTopicJson), total, has_more: a.offset + items.length < total };
  }));
}

