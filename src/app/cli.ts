import { InvalidArgumentError, Option, type Command } from 'commander';
import { StrictCommand } from './cli-command.ts';
import { registerReindexCommand } from './reindex.command.ts';
import { registerExportImportCommands } from './export-import.commands.ts';
import { parseCount as parsePositive, parseName } from './cli-options.ts';
import { DEFAULT_KEY_NAME, KEY_NAME_MAX, keyNameProblem } from '../core/api-keys/api-key.rules.ts';
import { createApiKeyService } from '../core/api-keys/api-key.service.ts';
import {
  ALL_PERMISSIONS, DEFAULT_PERMISSIONS, OPT_IN_PERMISSIONS, TIERS, type ApiKeyRecord, type Permission,
} from '../core/api-keys/api-key.types.ts';
import { systemClock } from '../core/clock.ts';
import { CONFIG_TABLE, loadConfig, shownDefault } from './config.ts';
import { CliError, withStore, type CliIo } from './cli-store.ts';
import { registerSecretsCommands } from './secrets.command.ts';
import { registerAuditCommands } from './audit.command.ts';
import { describeLocation, lineProgress, migrate, parseStoreLocation, terminalProgress, type StoreLocation } from './migrate.command.ts';
import { rotateMaster } from './rotate-master.command.ts';
import { MCP_API_KEY_ENV } from './mcp-env.ts';
import type { serveMcpStdio as ServeMcpStdio } from './mcp.command.ts';
import { VERSION } from './version.ts';
import { defaultDataDir } from './default-data-dir.ts';

/** `mnemo`: the operator's command line. Every command has --help. */

export { CliError, type CliIo } from './cli-store.ts';

/**
 * The server and the MCP server are imported when their command runs: they load most of the app (Fastify, the MCP
 * SDK), 1.5 s of CPU that every other `mnemo` command would pay at start for nothing (measured from dist/).
 */
const serve = async (): Promise<void> => (await import('./start.ts')).main();
const serveMcpStdio = async (...args: Parameters<typeof ServeMcpStdio>): Promise<void> =>
  (await import('./mcp.command.ts')).serveMcpStdio(...args);

export const processIo: CliIo = {
  env: process.env,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  terminal: true,
  outFd: 1,
};

/** Key management: the store's keys through the key service. */
const withKeys = <T>(io: CliIo, access: 'create' | 'existing', fn: (keys: ReturnType<typeof createApiKeyService>) => Promise<T>): Promise<T> =>
  withStore(io, access, (storage) => fn(createApiKeyService({ keys: storage.apiKeys, clock: systemClock })));

function parseScopes(value: string): Permission[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(ALL_PERMISSIONS as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; known: ${ALL_PERMISSIONS.join(', ')}`);
  }
  return scopes as Permission[];
}

function parseKeyName(value: string): string {
  const problem = keyNameProblem(value);
  if (problem) throw new InvalidArgumentError(`the name ${problem.message}`);
  return value.trim();
}

const keyJson = (r: ApiKeyRecord) => ({
  id: r.id, name: r.name, tenant: r.tenantId, user: r.userId, tier: r.tier, mode: r.mode, scopes: r.scopes,
  prefix: r.displayPrefix, created_at: r.createdAt.toISOString(), expires_at: r.expiresAt?.toISOString() ?? null,
  revoked_at: r.revokedAt?.toISOString() ?? null, replaced_by: r.replacedBy,
});

/** `mnemo serve --help`: every variable the server reads, with its default, from the one table of them. */
function configurationHelp(): string {
  const read = CONFIG_TABLE.filter((v) => v.parse);
  const width = Math.max(...read.map((v) => v.name.length)) + 2;
  return '\nEnvironment variables and their defaults (used when unset or blank; meanings: docs/configuration.md):\n'
    + read.map((v) => `  ${v.name.padEnd(width)}${shownDefault(v).replaceAll('`', '')}\n`).join('');
}

export function buildCli(io: CliIo = processIo): Command {
  const program = new StrictCommand('mnemo')
    .description('Mnemo: memory, search and secrets service for AI applications and tools')
    .version(VERSION)
    // `mnemo --version` is the program's; after a command name, options are that command's (`secrets get --version 2`).
    .enablePositionalOptions()
    // Set before the subcommands are added: they inherit both. Commander throws instead of exiting; cli-main.ts exits.
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s), writeErr: (s) => io.err(s) })
    .showHelpAfterError()
    .addHelpText('after', '\nConfiguration comes from the environment (MNEMO_DATA_DIR, HOST, PORT, ...): `mnemo serve --help` lists it,\n'
      + 'docs/configuration.md says what each variable means.\n'
      + 'Key commands must see the same MNEMO_DATA_DIR as the server; they print the database they use on stderr.\n'
      + 'MNEMO_DATA_DIR defaults to ./data in a checkout of the repository and to a per-user directory when installed\n'
      + `(here: ${defaultDataDir(io.env)}).`);

  program.command('serve')
    .alias('start')
    .description('start the HTTP server (same as npm start)')
    .addHelpText('after', configurationHelp())
    .action(async () => {
      // Installed, the data lands in a per-user directory nobody typed: say where, as the key commands do.
      const config = loadConfig(io.env);
      if (config.databaseUrl === null) io.err(`mnemo: database ${config.databaseFile}\n`);
      await serve();
    });

  program.command('mcp')
    .description(`serve the MCP server on stdin/stdout for an AI tool (Claude Desktop, ...); the API key comes from ${MCP_API_KEY_ENV}`)
    .option('--workspace <id>', 'the workspace of tool calls that name none (default: default)')
    .addHelpText('after', `
The MCP client starts this command and talks to it over its stdin and stdout. It opens the same store as the server
(MNEMO_DATA_DIR or MNEMO_DATABASE_URL, and the same MNEMO_EMBEDDINGS) and may run beside it. Example for Claude
Desktop (claude_desktop_config.json): {"mcpServers": {"mnemo": {"command": "npx", "args": ["mnemo", "mcp"],
"env": {"${MCP_API_KEY_ENV}": "mnemo_live_...", "MNEMO_DATA_DIR": "/path/to/data"}}}}. Over HTTP, use <server>/mcp instead.`)
    .action(async (opts: { workspace?: string }) => { await serveMcpStdio(io, opts); });

  const keys = program.command('keys').description('manage API keys, and rotate the master key');

  keys.command('create')
    .description('create an API key and print it (the key is shown only once)')
    .option('--tenant <name>', 'tenant that owns the data', parseName, 'default')
    .option('--user <id>', 'user id: the actor in audit rows and events', parseName, 'admin')
    .option('--name <label>', `a label for people (1-${KEY_NAME_MAX} characters)`, parseKeyName, DEFAULT_KEY_NAME)
    .addOption(new Option('--tier <tier>', 'rate-limit tier').choices([...TIERS]).default('free'))
    .addOption(new Option('--mode <mode>', 'live data or the separate test sandbox').choices(['live', 'test']).default('live'))
    .option('--scopes <list>', `comma-separated scopes (default: ${DEFAULT_PERMISSIONS.join(',')}; also: ${OPT_IN_PERMISSIONS.join(',')})`, parseScopes)
    .option('--json', 'print one JSON object {id, key, tenant, user, tier, mode, scopes}')
    .action(async (opts: { tenant: string; user: string; name: string; tier: (typeof TIERS)[number]; mode: 'live' | 'test'; scopes?: Permission[]; json?: boolean }) => {
      const { record, key } = await withKeys(io, 'create', (svc) => svc.create({
        tenantId: opts.tenant, userId: opts.user, name: opts.name, tier: opts.tier, mode: opts.mode, scopes: opts.scopes,
      }));
      const out = { id: record.id, key, tenant: record.tenantId, user: record.userId, tier: record.tier, mode: record.mode, scopes: record.scopes };
      if (opts.json) io.out(`${JSON.stringify(out)}\n`);
      else {
        io.out(`Created ${out.id} (tenant ${out.tenant}, user ${out.user}, tier ${out.tier}, ${out.mode})\n`);
        io.out(`scopes: ${out.scopes.join(', ')}\n\n  ${key}\n\nStore it now: it is not shown again.\n`);
      }
    });

  keys.command('list')
    .description('list API keys (never the keys themselves)')
    .option('--tenant <name>', 'only this tenant', parseName)
    .option('--json', 'print a JSON array')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const list = (await withKeys(io, 'existing', (svc) => svc.list(opts.tenant))).map(keyJson);
      if (opts.json) io.out(`${JSON.stringify(list)}\n`);
      else for (const k of list) {
        io.out(`${k.id}  ${k.prefix}…  ${k.tenant}/${k.user}  ${k.tier} ${k.mode}  ${JSON.stringify(k.name)}${k.revoked_at ? '  revoked' : ''}\n`);
      }
    });

  keys.command('revoke')
    .description('revoke an API key by id; it stops working at once')
    .argument('<id>', 'key id (key_…)')
    .action(async (id: string) => {
      const ok = await withKeys(io, 'existing', (svc) => svc.revoke(id));
      if (!ok) throw new CliError(`no active key ${id}`);
      io.out(`revoked ${id}\n`);
    });

  keys.command('rotate-master')
    .description('re-wrap every sealed value (G11 secret versions, webhook signing secrets) under a new master key, '
      + 're-sign the audit chains\' heads with it, then forget the old key: afterwards a server starts with the new key alone. Progress on stderr, a summary on '
      + 'stdout; values already under the new key are skipped, so an interrupted run is finished by running it again')
    .option('--page-size <values>', 'sealed values read per page', parsePositive, 500)
    .addHelpText('after', `
With MNEMO_MASTER_KEY (several nodes): it must list the new key first and the old one second, as every node's
already does (docs/deploy.md: add the new key second everywhere, rolling restart, make it first, rolling restart,
run this, then remove the old key everywhere). A server still sealing with the old key while this runs is detected:
the old key then stays required and the command exits 1.

Without MNEMO_MASTER_KEY (the data directory's master.key): stop the servers of this data directory first (they read
the file when they start). It writes a new key first in master.key (atomically, mode 0600), re-wraps, then leaves
only the new key in the file. A file already holding several keys is an interrupted rotation: it is finished.`)
    .action(async (opts: { pageSize: number }) => {
      const failure = await rotateMaster({ config: loadConfig(io.env), pageSize: opts.pageSize, err: (s) => io.err(s), out: (s) => io.out(s) });
      if (failure !== null) throw new CliError(failure);
    });

  registerSecretsCommands(program, io);

  registerAuditCommands(program, io);

  program.command('migrate')
    .description('copy a whole store into another (memories with vectors, topics, keys, webhooks, deliveries, events, '
      + 'idempotency keys, search log), then verify the row counts; rows already in the target are skipped, so an '
      + 'interrupted run can be started again. Stop the servers writing to the source first.')
    .requiredOption('--from <store>', 'source: sqlite:DIR (the data directory holding mnemo.db) or postgres://…', parseStoreLocation)
    .requiredOption('--to <store>', 'target: postgres://… or sqlite:DIR (created if missing)', parseStoreLocation)
    .option('--page-size <rows>', 'rows per read and per target transaction', parsePositive, 500)
    .option('--max-rows <rows>', 'stop after this many rows (copy in slices; run again to go on)', parsePositive)
    .action(async (opts: { from: StoreLocation; to: StoreLocation; pageSize: number; maxRows?: number }) => {
      io.err(`mnemo: migrate ${describeLocation(opts.from)} -> ${describeLocation(opts.to)}\n`);
      const lines = lineProgress((s) => io.err(s));
      const failure = await migrate({
        from: opts.from, to: opts.to, config: loadConfig(io.env), pageSize: opts.pageSize,
        ...(opts.maxRows === undefined ? {} : { maxRows: opts.maxRows }),
        progress: io.terminal ? await terminalProgress(lines) : lines,
        out: (s) => io.out(s),
      });
      if (failure !== null) throw new CliError(failure);
    });

  registerReindexCommand(program, io);
  registerExportImportCommands(program, io);

  return program;
}
