import type { FastifyRequest } from 'fastify';
import type { FieldProblem } from '../../core/errors.ts';
import { DEFAULT_WORKSPACE, workspaceProblem } from '../../core/scope.ts';

/** The header that names the workspace of a request, on every surface. */
export const WORKSPACE_HEADER = 'X-Workspace-ID';
/** The query parameter that may name it on a WebSocket upgrade (browsers cannot set headers there). */
export const WORKSPACE_QUERY = 'workspace';

/** The summary of a refused workspace (its field problem says which field and why). */
export const INVALID_WORKSPACE = 'Invalid workspace id';

/** `from`: the field that named the workspace (undefined: none did, `default`); `value`: the refused name. */
export type WorkspaceOf =
  | { ok: true; workspace: string; from: string | undefined }
  | { ok: false; value: string; problem: FieldProblem };

/**
 * The workspace a request names: `X-Workspace-ID`; else, where `query` is allowed (WebSocket upgrades),
 * `?workspace=`; else `default`. An empty value counts as absent. A bad name is a problem on the field it came
 * from, with the one message of core/scope.ts.
 */
export function workspaceOf(req: FastifyRequest, options: { query?: boolean } = {}): WorkspaceOf {
  const header = req.headers['x-workspace-id'];
  if (typeof header === 'string' && header.length > 0) return checkedWorkspace(header, WORKSPACE_HEADER);
  if (options.query) {
    const q = (req.query as Record<string, unknown> | undefined)?.[WORKSPACE_QUERY];
    if (typeof q === 'string' && q.length > 0) return checkedWorkspace(q, WORKSPACE_QUERY);
  }
  return { ok: true, workspace: DEFAULT_WORKSPACE, from: undefined };
}

/** A workspace name given in `field`, checked. */
export function checkedWorkspace(value: string, field: string): WorkspaceOf {
  const problem = workspaceProblem(value, field);
  return problem ? { ok: false, value, problem } : { ok: true, workspace: value, from: field };
}

/**
 * For what cannot refuse the request any more (activity noted after the answer, a stream whose data ignores the
 * workspace): the named workspace when valid, else `default`.
 */
export function workspaceOrDefault(req: FastifyRequest, options: { query?: boolean } = {}): string {
  const w = workspaceOf(req, options);
  return w.ok ? w.workspace : DEFAULT_WORKSPACE;
}
