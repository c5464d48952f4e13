import { Command, InvalidArgumentError, Option } from 'commander';
import { createApiKeyService } from '../core/api-keys/api-key.service.ts';
import { ALL_SCOPES, TIERS, type ApiKeyRecord, type Scope } from '../core/api-keys/api-key.types.ts';
import { systemClock } from '../core/clock.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createStorage } from './storage.factory.ts';
import { main as serve } from './start.ts';
import { VERSION } from './version.ts';

/** `mnemo`: the operator's command line. Every command has --help. */

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mnemo: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Key management needs only the store: no model is loaded, and it works while a server runs on the same data. */
async function withKeys<T>(fn: (keys: ReturnType<typeof createApiKeyService>) => Promise<T>): Promise<T> {
  const storage = createStorage(configOrExit());
  try {
    return await fn(createApiKeyService({ keys: storage.apiKeys, clock: systemClock }));
  } finally {
    await storage.close();
  }
}

function parseScopes(value: string): Scope[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !(ALL_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`unknown scope(s) ${unknown.join(', ')}; known: ${ALL_SCOPES.join(', ')}`);
  }
  return scopes as Scope[];
}

function parseName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/.test(value)) {
    throw new InvalidArgumentError('use 1-128 characters: letters, digits, _ . @ : -');
  }
  return value;
}

const keyJson = (r: ApiKeyRecord) => ({
  id: r.id, tenant: r.tenantId, user: r.userId, tier: r.tier, mode: r.mode, scopes: r.scopes,
  prefix: r.displayPrefix, created_at: r.createdAt.toISOString(), revoked_at: r.revokedAt?.toISOString() ?? null,
});

export function buildCli(): Command {
  const program = new Command('mnemo')
    .description('Mnemo: memory, search and secrets service for AI applications and tools')
    .version(VERSION)
    .showHelpAfterError()
    .addHelpText('after', '\nConfiguration comes from the environment (MNEMO_DATA_DIR, HOST, PORT, ...); see README.md.');

  program.command('serve')
    .description('start the HTTP server (same as npm start)')
    .action(async () => { await serve(); });

  const keys = program.command('keys').description('manage API keys');

  keys.command('create')
    .description('create an API key and print it (the key is shown only once)')
    .option('--tenant <name>', 'tenant that owns the data', parseName, 'default')
    .option('--user <id>', 'user id: the actor in audit rows and events', parseName, 'admin')
    .addOption(new Option('--tier <tier>', 'rate-limit tier').choices([...TIERS]).default('free'))
    .addOption(new Option('--mode <mode>', 'live data or the separate test sandbox').choices(['live', 'test']).default('live'))
    .option('--scopes <list>', `comma-separated scopes (default: all: ${ALL_SCOPES.join(',')})`, parseScopes)
    .option('--json', 'print one JSON object {id, key, tenant, user, tier, mode, scopes}')
    .action(async (opts: { tenant: string; user: string; tier: (typeof TIERS)[number]; mode: 'live' | 'test'; scopes?: Scope[]; json?: boolean }) => {
      const { record, key } = await withKeys((svc) => svc.create({
        tenantId: opts.tenant, userId: opts.user, tier: opts.tier, mode: opts.mode, scopes: opts.scopes,
      }));
      const out = { id: record.id, key, tenant: record.tenantId, user: record.userId, tier: record.tier, mode: record.mode, scopes: record.scopes };
      if (opts.json) process.stdout.write(`${JSON.stringify(out)}\n`);
      else {
        process.stdout.write(`Created ${out.id} (tenant ${out.tenant}, user ${out.user}, tier ${out.tier}, ${out.mode})\n`);
        process.stdout.write(`scopes: ${out.scopes.join(', ')}\n\n  ${key}\n\nStore it now: it is not shown again.\n`);
      }
    });

  keys.command('list')
    .description('list API keys (never the keys themselves)')
    .option('--tenant <name>', 'only this tenant', parseName)
    .option('--json', 'print a JSON array')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const list = (await withKeys((svc) => svc.list(opts.tenant))).map(keyJson);
      if (opts.json) process.stdout.write(`${JSON.stringify(list)}\n`);
      else for (const k of list) {
        process.stdout.write(`${k.id}  ${k.prefix}…  ${k.tenant}/${k.user}  ${k.tier} ${k.mode}${k.revoked_at ? '  revoked' : ''}\n`);
      }
    });

  keys.command('revoke')
    .description('revoke an API key by id; it stops working at once')
    .argument('<id>', 'key id (key_…)')
    .action(async (id: string) => {
      const ok = await withKeys((svc) => svc.revoke(id));
      if (!ok) {
        process.stderr.write(`mnemo: no active key ${id}\n`);
        process.exitCode = 1;
      } else process.stdout.write(`revoked ${id}\n`);
    });

  return program;
}

await buildCli().parseAsync(process.argv);
