import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { systemClock } from '../core/clock.ts';
import { isDomainError } from '../core/errors.ts';
import { verifyKeyring } from '../core/secrets/keyring-check.ts';
import { parseExpiresIn, secretNameProblem } from '../core/secrets/secret.rules.ts';
import { createSecretService, type SecretService, type SecretSummary } from '../core/secrets/secret.service.ts';
import type { SecretOwner } from '../core/secrets/secret.types.ts';
import { CliError, withStore, type CliIo } from './cli-store.ts';
import { loadKeyring } from './keyring.factory.ts';

/**
 * `mnemo secrets get|set|list`: the G11 secrets of one tenant and mode, from the operator's shell, through the same
 * service (and the same master key) as the server. Values are printed only by `get`.
 */

interface OwnerOptions { tenant: string; mode: 'live' | 'test' }

function parseSecretName(value: string): string {
  const problem = secretNameProblem(value);
  if (problem) throw new InvalidArgumentError(problem.message);
  return value;
}

function parseDuration(value: string): number {
  const parsed = parseExpiresIn(value);
  if ('problem' in parsed) throw new InvalidArgumentError(parsed.problem.message);
  return parsed.ms;
}

function parseVersion(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('use a whole number of at least 1');
  return n;
}

const parseTags = (value: string): string[] => value.split(',').map((t) => t.trim()).filter((t) => t.length > 0);

/** The secret service over the configured store, after the same master-key check the server makes at start. */
async function withSecrets<T>(io: CliIo, fn: (secrets: SecretService) => Promise<T>): Promise<T> {
  return withStore(io, 'existing', async (storage, config) => {
    const keyring = loadKeyring(config);
    await verifyKeyring(storage.secrets, keyring);
    try {
      return await fn(createSecretService({ secrets: storage.secrets, events: storage.events, keyring: () => keyring, clock: systemClock }));
    } catch (err) {
      // Not found, a conflict, a bad value: the CLI's one-line error, not a stack trace.
      if (isDomainError(err)) throw new CliError(err.message);
      throw err;
    }
  });
}

const ownerOptions = (cmd: Command): Command => cmd
  .option('--tenant <name>', 'tenant that owns the secret', 'default')
  .addOption(new Option('--mode <mode>', 'live data or the test sandbox').choices(['live', 'test']).default('live'));

const ownerOf = (o: OwnerOptions): SecretOwner => ({ tenantId: o.tenant, mode: o.mode });

const summaryJson = (s: SecretSummary) => ({
  id: s.id, name: s.name, version: s.version, tags: s.tags, createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(), expiresAt: s.expiresAt?.toISOString() ?? null,
});

export function registerSecretsCommands(program: Command, io: CliIo): void {
  const secrets = program.command('secrets')
    .description('read and write G11 secrets (needs the server\'s master key: MNEMO_MASTER_KEY or the data directory\'s master.key)');

  ownerOptions(secrets.command('get'))
    .description('print a secret\'s value (its newest version, or --version N)')
    .argument('<name>', 'secret name', parseSecretName)
    .option('--version <n>', 'a kept version', parseVersion)
    .option('--json', 'print the whole secret as JSON {id, name, value, version, tags, createdAt, updatedAt, expiresAt}')
    .option('--user <id>', 'the reader named in the secret.accessed event', 'cli')
    .action(async (name: string, opts: OwnerOptions & { version?: number; json?: boolean; user: string }) => {
      const secret = await withSecrets(io, (svc) => svc.get(ownerOf(opts), { userId: opts.user, via: 'cli' }, name, opts.version));
      io.out(opts.json ? `${JSON.stringify({ ...summaryJson(secret), value: secret.value })}\n` : `${secret.value}\n`);
    });

  ownerOptions(secrets.command('set'))
    .description('create a secret, or write a new version of an existing one')
    .argument('<name>', 'secret name', parseSecretName)
    .option('--value <text>', 'the value (visible to other users of this machine in the process list: prefer --from-file)')
    .option('--from-file <path>', 'read the value from this file (as is, trailing newline included)')
    .option('--tags <list>', 'comma-separated tags', parseTags)
    .option('--expires-in <duration>', 'time to live from now: 90m, 12h, 30d, 2w', parseDuration)
    .option('--user <id>', 'the actor recorded with the write', 'cli')
    .action(async (name: string, opts: OwnerOptions & { value?: string; fromFile?: string; tags?: string[]; expiresIn?: number; user: string }) => {
      if ((opts.value === undefined) === (opts.fromFile === undefined)) throw new CliError('give the value with exactly one of --value or --from-file');
      const value = opts.value ?? readFileSync(opts.fromFile!, 'utf8');
      const written = await withSecrets(io, async (svc) => {
        const owner = ownerOf(opts);
        const actor = { userId: opts.user, region: null };
        try {
          return await svc.create(owner, actor, { name, value, tags: opts.tags ?? [], expiresInMs: opts.expiresIn ?? null });
        } catch (err) {
          if (!isDomainError(err) || err.code !== 'CONFLICT') throw err;
          return svc.update(owner, actor, name, {
            value, ...(opts.tags ? { tags: opts.tags } : {}), ...(opts.expiresIn !== undefined ? { expiresInMs: opts.expiresIn } : {}),
          });
        }
      });
      io.out(`${written.name}: version ${written.version}${written.expiresAt ? `, expires ${written.expiresAt.toISOString()}` : ''}\n`);
    });

  ownerOptions(secrets.command('list'))
    .description('list secrets (names, versions, tags; never values)')
    .option('--tags <list>', 'only secrets carrying any of these', parseTags)
    .option('--json', 'print a JSON array')
    .action(async (opts: OwnerOptions & { tags?: string[]; json?: boolean }) => {
      const all = await withSecrets(io, async (svc) => {
        const items: SecretSummary[] = [];
        let cursor: string | null = null;
        do {
          const page = await svc.list(ownerOf(opts), { tags: opts.tags ?? [], limit: 100, cursor });
          items.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor !== null);
        return items;
      });
      if (opts.json) io.out(`${JSON.stringify(all.map(summaryJson))}\n`);
      else for (const s of all) io.out(`${s.name}  v${s.version}${s.tags.length ? `  [${s.tags.join(', ')}]` : ''}${s.expiresAt ? `  expires ${s.expiresAt.toISOString()}` : ''}\n`);
    });
}
