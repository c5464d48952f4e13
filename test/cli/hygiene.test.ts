import { CommanderError, type Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildCli } from '../../src/app/cli.ts';
import { mnemo, runMnemoInProcess } from '../support/cli.ts';
import { runMnemo } from '../support/spawn-cli.ts';

/** Every command path of the real CLI (`[]` is mnemo itself), found by walking the tree commander built. */
function commandPaths(): { path: string[]; command: Command }[] {
  const found: { path: string[]; command: Command }[] = [];
  const walk = (command: Command, path: string[]) => {
    found.push({ path, command });
    for (const sub of command.commands) walk(sub, [...path, sub.name()]);
  };
  walk(buildCli(), []);
  return found;
}

const exitCode = (error: unknown): number | undefined => (error instanceof CommanderError ? error.exitCode : undefined);

describe('mnemo command line hygiene: every command and subcommand', () => {
  const paths = commandPaths();

  it('finds the commands this issue adds among the rest', () => {
    const names = paths.map((p) => p.path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['serve', 'keys create', 'keys rotate-master', 'audit verify', 'migrate', 'secrets', 'reindex', 'export', 'import']));
    expect(names.length).toBeGreaterThan(12);
  });

  it('answers --help with its own usage and exit 0', async () => {
    for (const { path } of paths) {
      const { stdout, error } = await mnemo({}, ...path, '--help');
      expect(exitCode(error), path.join(' ')).toBe(0);
      expect(stdout, path.join(' ')).toContain(`Usage: ${['mnemo', ...path].join(' ')}`);
    }
  });

  it('refuses an unknown option with exit 1, saying so', async () => {
    for (const { path, command } of paths) {
      const { stderr, error } = await mnemo({}, ...path, '--no-such-option');
      expect(exitCode(error), path.join(' ')).toBe(1);
      // A command with a mandatory option reports that one first; either way it is an error, never an action.
      const mandatory = command.options.some((o) => o.mandatory);
      expect(stderr, path.join(' ')).toMatch(mandatory ? /error: (unknown option '--no-such-option'|required option)/ : /error: unknown option '--no-such-option'/);
    }
  });

  it('refuses an unknown subcommand with exit 1, with or without --help after it', async () => {
    for (const { path } of paths.filter((p) => p.command.commands.length > 0)) {
      for (const extra of [[], ['--help']]) {
        const { stderr, stdout, error } = await mnemo({}, ...path, 'no-such-command', ...extra);
        expect(exitCode(error), [...path, ...extra].join(' ')).toBe(1);
        expect(stderr).toContain("error: unknown command 'no-such-command'");
        expect(stdout).toBe('');
      }
    }
  });

  it('refuses `help` of an unknown command, saying so', async () => {
    for (const { path } of paths.filter((p) => p.command.commands.length > 0)) {
      const { stderr, error } = await mnemo({}, ...path, 'help', 'no-such-command');
      expect(exitCode(error), path.join(' ')).toBe(1);
      expect(stderr).toContain("error: unknown command 'no-such-command'");
    }
    const known = await mnemo({}, 'help', 'reindex');
    expect(exitCode(known.error)).toBe(0);
    expect(known.stdout).toContain('Usage: mnemo reindex');
  });

  it('refuses an unexpected argument to a command that takes none', async () => {
    for (const { path, command } of paths.filter((p) => p.command.commands.length === 0 && p.command.registeredArguments.length === 0)) {
      const { stderr, error } = await mnemo({}, ...path, 'stray');
      expect(exitCode(error), path.join(' ')).toBe(1);
      expect(stderr, path.join(' ')).toMatch(command.options.some((o) => o.mandatory) ? /error: / : /error: too many arguments/);
    }
  });

  it('exits with those codes as a process too', async () => {
    const cases: [string[], number, RegExp][] = [
      [['foo', '--help'], 1, /unknown command 'foo'/], [['keys', 'foo', '--help'], 1, /unknown command 'foo'/],
      [['reindex', '--bogus'], 1, /unknown option '--bogus'/], [['export', '--help'], 0, /^$/],
    ];
    // What the process exits with is what runCli returns (src/app/cli-main.ts exits with it): every case through
    // runCli in process, and one spawned (bin/mnemo.js), whose tsx start-up takes seconds, to check that wiring.
    for (const [args, code, stderr] of cases) {
      const run = await runMnemoInProcess({}, ...args);
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr, args.join(' ')).toMatch(stderr);
    }
    const [args, code, stderr] = cases[0]!;
    const spawned = await runMnemo({}, ...args);
    expect(spawned.code, args.join(' ')).toBe(code);
    expect(spawned.stderr, args.join(' ')).toMatch(stderr);
  }, 60_000);
});
