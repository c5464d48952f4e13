import { CommanderError } from 'commander';
import { buildCli, CliError, processIo, type CliIo } from './cli.ts';
import { ConfigError } from './config.ts';

/**
 * Runs `mnemo …argv` (the arguments after the program name) and turns its expected failures into exit codes:
 * commander's own (help, unknown command or option) with the code commander gives, and a CliError or ConfigError as
 * `mnemo: <message>` on stderr with 1. Returns the code the process must exit with at once, or undefined when the
 * command finished and the process ends by itself. Anything else is thrown. cli-main.ts is the process around it;
 * tests call it in process with their own `io`.
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number | undefined> {
  try {
    await buildCli(io).parseAsync([...argv], { from: 'user' });
    return undefined;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof CliError || err instanceof ConfigError) {
      io.err(`mnemo: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}
