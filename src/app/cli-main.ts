import { CommanderError } from 'commander';
import { buildCli, CliError } from './cli.ts';
import { ConfigError } from './config.ts';
import { EmbeddingError } from '../core/embeddings/embedder.port.ts';
import { DomainError } from '../core/errors.ts';

/** The `mnemo` process: runs the command line and turns its failures into exit codes. */
try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof CliError || err instanceof ConfigError) {
    process.stderr.write(`mnemo: ${err.message}\n`);
    process.exit(1);
  }
  // Operational failures (the embeddings provider refusing or down; a conflict met while importing; a store shutting
  // down): the reason in one line, not a stack trace. Anything else is a bug, and its stack trace helps.
  if (err instanceof EmbeddingError) {
    process.stderr.write(`mnemo: ${err.message}\n`);
    process.exit(1);
  }
  if (err instanceof DomainError) {
    process.stderr.write(`mnemo: ${err.message} (${err.code})\n`);
    process.exit(1);
  }
  throw err;
}
