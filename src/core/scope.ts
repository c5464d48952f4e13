import type { FieldProblem } from './errors.ts';

/**
 * Who a request acts for and which slice of data it may see. Every read, list, search and prefix lookup is
 * filtered by all three fields; another tenant's record answers exactly like a missing one.
 */
export type KeyMode = 'live' | 'test';

export interface Scope {
  tenantId: string;
  mode: KeyMode;
  workspace: string;
}

export const DEFAULT_WORKSPACE = 'default';

export const sameScope = (a: Scope, b: Scope): boolean =>
  a.tenantId === b.tenantId && a.mode === b.mode && a.workspace === b.workspace;

/** Workspace names are identifiers, not paths: letters, digits, `_`, `-`, `.`, `:`, 1-64 characters. */
export const WORKSPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** What a bad workspace name is told, on every surface and transport. */
export const WORKSPACE_RULE = 'must be 1-64 characters: letters, digits, _ . : - (starting with a letter or digit)';

/** The problem of a workspace name given in `field`, or undefined when it is a valid name. */
export function workspaceProblem(value: string, field: string): FieldProblem | undefined {
  return WORKSPACE_PATTERN.test(value) ? undefined : { field, reason: 'invalid_format', message: WORKSPACE_RULE };
}
