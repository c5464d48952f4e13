import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Principal } from '../core/api-keys/api-key.types.ts';
import { DomainError, validationError } from '../core/errors.ts';
import type { OperationName } from '../core/operations/catalog.ts';
import { authorize } from '../core/operations/runner.ts';
import { workspaceProblem, type Scope } from '../core/scope.ts';
import type { McpSession } from './session.ts';
import { toolError, toolResult } from './tool-errors.ts';

/** Who a tool call acts for, and where. */
export interface ToolCaller {
  principal: Principal;
  scope: Scope;
}

/**
 * A tool's handler for the session's caller: it runs as the core operation `operationOf(args)` (its permission
 * first), in the workspace the call names (else the connection's), and every failure becomes a tool error
 * (`isError`), never a broken session. The same steps as memory-tools.ts's own `call`.
 */
export const toolCall = (session: McpSession) =>
  <A extends { workspace?: string | undefined }>(operationOf: OperationName | ((args: A) => OperationName),
    run: (args: A, who: ToolCaller) => Promise<Record<string, unknown>>) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        const principal = await session.caller();
        authorize(typeof operationOf === 'function' ? operationOf(args) : operationOf, principal);
        const named = args.workspace ?? session.defaultWorkspace;
        const problem = workspaceProblem(named, 'workspace');
        if (problem) throw validationError([problem], 'Invalid workspace id');
        if (session.workspaceOnly !== undefined && named !== session.workspaceOnly) {
          throw new DomainError('PERMISSION_DENIED', `This access token is for workspace ${session.workspaceOnly} only`);
        }
        return toolResult(await run(args, { principal, scope: { tenantId: principal.tenantId, mode: principal.mode, workspace: named } }));
      } catch (err) {
        return toolError(err);
      }
    };
