import { runCli } from './cli-run.ts';

/** The `mnemo` process: runs the command line (cli-run.ts) and exits with the code a failure gives. */
const code = await runCli(process.argv.slice(2));
if (code !== undefined) process.exit(code);
