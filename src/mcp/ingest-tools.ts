import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { validationError, type FieldProblem } from '../core/errors.ts';
import type { IngestionService } from '../core/ingestion/ingestion.service.ts';
import type { IngestionJob } from '../core/ingestion/ingestion.types.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import { parseTimestamp } from '../core/search/filters.ts';
import type { McpSession } from './session.ts';
import { toolCall } from './tool-call.ts';

/**
 * Ingestion over MCP (docs/ingestion.md): an agent hands over a conversation and reads how it went. There is no
 * review tool: a person decides on proposals (dashboard or REST), never the agent that asked.
 */
export interface IngestToolDeps {
  ingestion: Pick<IngestionService, 'start' | 'find'>;
}

/** The core operation each ingestion tool runs (part of MEMORY_TOOL_OPERATIONS). */
export const INGEST_TOOL_OPERATIONS = {
  memory_ingest: 'memory.ingest',
  memory_ingest_status: 'memory.ingest_read',
} as const satisfies Record<string, OperationName>;

const workspace = z.string().optional()
  .describe('Workspace to act in (1-64 of letters, digits, _ . : -). Default: the connection\'s workspace (X-Workspace-ID on HTTP, --workspace on stdio), else "default".');

const INGEST = z.object({
  messages: z.array(z.object({
    role: z.string().describe('user, assistant, system or tool; only user and assistant turns become memories'),
    content: z.string(),
    timestamp: z.string().optional().describe('ISO 8601: when it was said (resolves "yesterday")'),
  })).describe('The conversation, in order'),
  mode: z.enum(['extract', 'raw']).optional()
    .describe('extract (default): the server\'s chat model extracts standalone facts and checks each against existing memories; raw: one memory per user or assistant turn'),
  policy: z.enum(['review', 'auto']).optional()
    .describe('review: proposals wait for a person\'s approval; auto: written at once (needs the memories:auto_ingest scope). Default: auto when the key has that scope, else review'),
  metadata: z.record(z.string(), z.unknown()).optional().describe('Added to each memory\'s metadata'),
  tags: z.array(z.string()).optional().describe('Put on each memory'),
  workspace,
});

const STATUS = z.object({
  id: z.string().min(1).describe('The ingestion id memory_ingest returned (ing_…)'),
  workspace,
});

const WAITS = 'Its proposals wait for a person\'s review (dashboard, or POST /api/v1/memories/ingest/{id}/review with another key): '
  + 'nothing is written until they approve. You cannot approve them.';

/** What the agent is told next, by state. */
function noteOf(job: IngestionJob): string {
  switch (job.state) {
    case 'queued':
    case 'running':
      return job.policy === 'review'
        ? `Queued: call memory_ingest_status later. ${WAITS}`
        : 'Queued: the memories are written when it runs; call memory_ingest_status later.';
    case 'pending_review':
      return WAITS;
    case 'completed':
      return 'Done: proposals with status applied were written (memory_id).';
    case 'failed':
      return `Failed; nothing was written: ${job.error?.message ?? 'unknown reason'}`;
  }
}

const jobJson = (job: IngestionJob, withProposals: boolean) => ({
  id: job.id, state: job.state, mode: job.mode, policy: job.policy, workspace: job.scope.workspace, messages_count: job.messages.length,
  ...(withProposals ? {
    proposals: job.proposals.map((p) => ({
      id: p.id, action: p.action, content: p.content, supersedes: p.supersedes, duplicate_of: p.duplicateOf, status: p.status, memory_id: p.memoryId,
      ...(p.forgotten ? { forgotten: true } : {}),
    })),
    error: job.error,
  } : {}),
  note: noteOf(job),
});

/** memory_ingest and memory_ingest_status, run like every memory tool (permission, workspace, tool errors). */
export function registerIngestTools(server: McpServer, deps: IngestToolDeps, session: McpSession): void {
  const call = toolCall(session);

  server.registerTool('memory_ingest', {
    title: 'Ingest a conversation',
    description: 'Hands a conversation to Mnemo, which turns it into memories in the background and answers at once with the job '
      + '{id, state, policy, note}. mode "extract" (default; needs a chat model configured on the server) keeps standalone facts '
      + 'and decides for each whether it is new, replaces existing memories (supersede) or is already known (skipped); mode "raw" '
      + 'stores each user and assistant turn. With policy "review" (the default unless the key has memories:auto_ingest) the '
      + 'proposals wait for a person\'s approval and nothing is written before it; you cannot approve them. Follow the job with '
      + 'memory_ingest_status. Needs memories:write; counts one memory write against the quota.',
    inputSchema: INGEST,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  }, call(INGEST_TOOL_OPERATIONS.memory_ingest, async (a, { principal, scope }) => {
    const problems: FieldProblem[] = [];
    const messages = a.messages.map((m, i) => {
      const at = m.timestamp === undefined ? null : parseTimestamp(m.timestamp);
      if (m.timestamp !== undefined && at === null) problems.push({ field: `messages[${i}].timestamp`, reason: 'invalid_format', message: 'must be an ISO 8601 date-time' });
      return { role: m.role, content: m.content, timestamp: at };
    });
    if (problems.length > 0) throw validationError(problems.slice(0, 20));
    const job = await deps.ingestion.start(scope, principal, { messages, mode: a.mode, policy: a.policy, metadata: a.metadata, tags: a.tags });
    return jobJson(job, false);
  }));

  server.registerTool('memory_ingest_status', {
    title: 'Ingestion status',
    description: 'The state of an ingestion memory_ingest started: queued, running, pending_review (proposals wait for a person), '
      + 'completed or failed (nothing written; `error` says why), with its proposals: action (add, supersede, skip), content, '
      + 'status (pending, approved, rejected, applied with memory_id, skipped). Needs memories:read.',
    inputSchema: STATUS,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  }, call(INGEST_TOOL_OPERATIONS.memory_ingest_status, async (a, { scope }) => jobJson(await deps.ingestion.find(scope, a.id), true)));
}
