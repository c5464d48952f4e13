import { CommanderError } from 'commander';
import { buildCli, CliError, processIo, type CliIo } from './cli.ts';
import { ConfigError } from './config.ts';
import { ExposedStoreFileError } from '../adapters/storage/file-permissions.ts';
import { EmbeddingError } from '../core/embeddings/embedder.port.ts';
import { DomainError } from '../core/errors.ts';

/**
 * Runs `mnemo …argv` (the arguments after the program name) and turns its expected failures into exit codes:
 * commander's own (help, unknown command or option) with the code commander gives, and the rest as one
 * `mnemo: <message>` line on stderr with 1. Returns the code the process must exit with at once, or undefined when the
 * command finished and the process ends by itself. Anything else is thrown. cli-main.ts is the process around it;
 * tests call it in process with their own `io`.
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number | undefined> {
  try {
    await buildCli(io).parseAsync([...argv], { from: 'user' });
    return undefined;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    // Usage and configuration errors, and operational failures (the embeddings provider refusing or down; a conflict
    // met while importing; a store shutting down; a store file others can write): the reason in one line, not a stack
    // trace. Anything else is a bug, and its stack trace helps.
    if (err instanceof CliError || err instanceof ConfigError || err instanceof EmbeddingError || err instanceof ExposedStoreFileError) {
      io.err(`mnemo: ${err.message}\n`);
      return 1;
    }
    if (err instanceof DomainError) {
      io.err(`mnemo: ${err.message} (${err.code})\n`);
      return 1;
    }
    throw err;
  }
}
