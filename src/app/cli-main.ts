import { CommanderError } from 'commander';
import { buildCli, CliError } from './cli.ts';
import { ConfigError } from './config.ts';

/** The `mnemo` process: runs the command line and turns its failures into exit codes. */
try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  if (err instanceof CliError || err instanceof ConfigError) {
    process.stderr.write(`mnemo: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}
