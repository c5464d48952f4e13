import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { FORGET_PREVIEW_IDS, MAX_FORGET_PER_CALL, type MemoryForget } from '../core/memories/memory-forget.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import type { McpSession } from './session.ts';
import { toolCall } from './tool-call.ts';
import { TOOL_FILTER, toolFilter } from './tool-filter.ts';

/** memory_forget: forgetting by filter (core/memories/memory-forget.ts) over MCP. */
export interface ForgetToolDeps {
  memoryForget: Pick<MemoryForget, 'forget'>;
}

/** The core operation the tool runs (part of MEMORY_TOOL_OPERATIONS): its own permission, `memories:forget`. */
export const FORGET_TOOL_OPERATIONS = {
  memory_forget: 'memory.forget',
} as const satisfies Record<string, OperationName>;

/** The filter as memory_search takes it (the same names, so an agent filters both alike). */
const FORGET = z.object({
  filter: TOOL_FILTER.describe('Which memories to forget: at least one condition (an empty filter is refused)'),
  dry_run: z.boolean().default(false).describe('true: only count them and list their ids; nothing is deleted'),
  workspace: z.string().optional()
    .describe('Workspace to act in (1-64 of letters, digits, _ . : -). Default: the connection\'s workspace (X-Workspace-ID on HTTP, --workspace on stdio), else "default".'),
});


/** memory_forget, run like every memory tool (permission, workspace, tool errors). */
export function registerForgetTool(server: McpServer, deps: ForgetToolDeps, session: McpSession): void {
  const call = toolCall(session);
  server.registerTool('memory_forget', {
    title: 'Forget memories',
    description: 'Permanently forgets every memory of the workspace that `filter` matches (type, tags, metadata, creation dates; '
      + 'superseded and expired memories too), in one step: their content is gone from search, reads, events and exports, and only '
      + 'a tombstone (id, when, who) remains. Call it with dry_run: true first and show the person the count: '
      + `it answers {count, ids} (the first ${FORGET_PREVIEW_IDS}) and deletes nothing. Then call it again without dry_run, only `
      + `if they agree; it answers {deleted, ids}. An empty filter is refused; so is a filter matching more than ${MAX_FORGET_PER_CALL} `
      + 'memories (narrow it). To remove one memory you know, use memory_delete. Needs the memories:forget scope (keys get it only when '
      + 'it is asked for); counts one memory write against the quota.',
    inputSchema: FORGET,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  }, call(FORGET_TOOL_OPERATIONS.memory_forget, async (a, { principal, scope }) => {
    const out = await deps.memoryForget.forget(scope, principal, toolFilter(a.filter, 'filter'), { dryRun: a.dry_run });
    return out.dryRun
      ? { dry_run: true, count: out.count, ids: out.ids, ids_truncated: out.idsTruncated }
      : { dry_run: false, deleted: out.deleted, ids: out.ids };
  }));
}
