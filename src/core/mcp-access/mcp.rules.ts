import type { FieldProblem } from '../errors.ts';
import { parseTimeWindow, TIME_WINDOW_RULE } from './time-window.ts';
import { MCP_OPERATIONS, type AutoApprove, type McpOperation } from './mcp.types.ts';

/** What a registration and an approval request may look like. Shapes are checked at the edge too; these are the rules. */

export const MCP_NAME_MAX = 100;
export const MCP_DESCRIPTION_MAX = 1000;
export const MCP_APPROVERS_MAX = 20;
export const MCP_REQUESTERS_MAX = 50;
/** User ids as keys carry them (`mnemo keys create --user`): 1-128 characters without control characters. */
export const USER_ID_MAX = 128;
export const MCP_REASON_MAX = 1000;
/** An approval lives from one minute to one day (default one hour): asked for, answered and used within it. */
export const MCP_TTL_MIN_SECONDS = 60;
export const MCP_TTL_MAX_SECONDS = 86_400;
export const MCP_TTL_DEFAULT_SECONDS = 3600;

const CONTROL = /\p{Cc}/u;

function textProblem(value: string, field: string, max: number, options: { allowEmpty?: boolean; allowLineBreaks?: boolean } = {}):
  FieldProblem | undefined {
  if (!options.allowEmpty && value.trim().length === 0) return { field, reason: 'empty', message: `must be 1-${max} characters, not blank` };
  if (value.length > max) return { field, reason: 'too_long', message: `must be at most ${max} characters` };
  if (CONTROL.test(options.allowLineBreaks ? value.replace(/[\r\n\t]/g, '') : value)) {
    return { field, reason: 'invalid_format', message: 'must not hold control characters' };
  }
  return undefined;
}

export const mcpNameProblem = (name: string, field = 'name') => textProblem(name, field, MCP_NAME_MAX);
/** A description may be empty, and may hold line breaks and tabs. */
export const mcpDescriptionProblem = (text: string, field = 'description') => textProblem(text, field, MCP_DESCRIPTION_MAX, { allowEmpty: true, allowLineBreaks: true });
export const mcpReasonProblem = (text: string, field = 'reason') => textProblem(text, field, MCP_REASON_MAX, { allowLineBreaks: true });
export const userIdProblem = (id: string, field: string) => textProblem(id, field, USER_ID_MAX);

export function userIdsProblems(ids: readonly string[], field: string, max: number): FieldProblem[] {
  if (ids.length > max) return [{ field, reason: 'too_many', message: `at most ${max} user ids` }];
  return ids.flatMap((id, i) => {
    const p = userIdProblem(id, `${field}[${i}]`);
    return p ? [p] : [];
  });
}

export function permissionsProblems(permissions: readonly string[], field = 'permissions'): FieldProblem[] {
  if (permissions.length === 0) return [{ field, reason: 'too_few', message: `must name at least one of: ${MCP_OPERATIONS.join(', ')}` }];
  return permissions.flatMap((p, i) => ((MCP_OPERATIONS as readonly string[]).includes(p) ? [] : [{
    field: `${field}[${i}]`, reason: 'invalid_value' as const, message: `must be one of: ${MCP_OPERATIONS.join(', ')}`,
  }]));
}

export function autoApproveProblems(autoApprove: AutoApprove, field = 'autoApprove'): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { timeWindow, requester } = autoApprove.conditions;
  if (timeWindow !== undefined && parseTimeWindow(timeWindow) === null) {
    problems.push({ field: `${field}.conditions.timeWindow`, reason: 'invalid_format', message: TIME_WINDOW_RULE });
  }
  if (requester !== undefined) {
    if (requester.length === 0) {
      problems.push({ field: `${field}.conditions.requester`, reason: 'too_few', message: 'must name at least one user id (leave it out to allow anyone)' });
    }
    problems.push(...userIdsProblems(requester, `${field}.conditions.requester`, MCP_REQUESTERS_MAX));
  }
  return problems;
}

export function ttlProblem(seconds: number, field = 'ttl'): FieldProblem | undefined {
  return Number.isSafeInteger(seconds) && seconds >= MCP_TTL_MIN_SECONDS && seconds <= MCP_TTL_MAX_SECONDS ? undefined : {
    field, reason: 'out_of_range', message: `must be a whole number of seconds from ${MCP_TTL_MIN_SECONDS} to ${MCP_TTL_MAX_SECONDS}`,
  };
}

export const isMcpOperation = (value: string): value is McpOperation => (MCP_OPERATIONS as readonly string[]).includes(value);
