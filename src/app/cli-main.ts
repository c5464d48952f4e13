import { runCli } from './cli-run.ts';

// Any command may create the store (`serve`, `mcp`, `keys create`, `import`, `migrate`): what it creates is for its
// own user alone (0700, 0600), since the store holds memories, keys and audit rows.
process.umask(0o077);

/** The `mnemo` process: runs the command line (cli-run.ts) and exits with the code a failure gives. */
const code = await runCli(process.argv.slice(2));
if (code !== undefined) process.exit(code);
