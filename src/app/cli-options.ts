import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ScopeFilter } from '../core/memories/memory-maintenance.ts';
import { WORKSPACE_PATTERN, WORKSPACE_RULE } from '../core/scope.ts';

/** Option parsers and option groups shared by several commands. */

export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('use a whole number of at least 1');
  return n;
}

/** Tenant and user names as keys carry them. */
export function parseName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/.test(value)) {
    throw new InvalidArgumentError('use 1-128 characters: letters, digits, _ . @ : -');
  }
  return value;
}

export function parseWorkspace(value: string): string {
  if (!WORKSPACE_PATTERN.test(value)) throw new InvalidArgumentError(`the workspace ${WORKSPACE_RULE}`);
  return value;
}

export interface ScopeFilterFlags {
  tenant?: string;
  mode?: 'live' | 'test';
  workspace?: string;
}

/** `--tenant`, `--mode`, `--workspace`: which memories an operator command covers (all when none is given). */
export const scopeFilterOptions = (command: Command): Command => command
  .option('--tenant <name>', 'only this tenant', parseName)
  .addOption(new Option('--mode <mode>', 'only live data or only the test sandbox').choices(['live', 'test']))
  .option('--workspace <name>', 'only this workspace', parseWorkspace);

export const scopeFilterOf = (flags: ScopeFilterFlags): ScopeFilter => ({
  ...(flags.tenant === undefined ? {} : { tenantId: flags.tenant }),
  ...(flags.mode === undefined ? {} : { mode: flags.mode }),
  ...(flags.workspace === undefined ? {} : { workspace: flags.workspace }),
});
