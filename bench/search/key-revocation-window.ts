/**
 * How long another node may still accept a revoked API key (PostgreSQL, pg-api-key-cache.ts): two nodes' key
 * repositories on one database, each with its cache and LISTEN session; node A revokes a key both have cached, and
 * the window is from A's UPDATE returning (committed) to node B's cache forgetting the key (its notification handled).
 *
 * `npx tsx bench/search/key-revocation-window.ts --database-url URL [--revocations 200]`: a new database on the
 * server, dropped after. Markdown to stdout.
 */
import { loadavg } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import pg from 'pg';
import { ApiKeyCache } from '../../src/adapters/storage/postgres/pg-api-key-cache.ts';
import { listenForApiKeyChanges } from '../../src/adapters/storage/postgres/pg-api-key-listener.ts';
import { createPgApiKeyRepository } from '../../src/adapters/storage/postgres/pg-api-key.repository.ts';
import { pgPoolExecutor } from '../../src/adapters/storage/postgres/pg-executor.ts';
import { migratePostgres } from '../../src/adapters/storage/postgres/pg-migrations.ts';
import { PgOutbox } from '../../src/adapters/storage/postgres/pg-outbox.ts';
import { createServerDatabase } from '../lib/postgres.ts';
import { fmt, median, percentile } from '../lib/stats.ts';

const program = new Command('key-revocation-window')
  .requiredOption('--database-url <url>', 'a PostgreSQL server (CREATEDB): a new database on it, dropped after')
  .option('--revocations <n>', 'keys revoked one after another', (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('use a positive whole number');
    return n;
  }, 200)
  .parse();
const opts = program.opts<{ databaseUrl: string; revocations: number }>();

/** A cache that reports when it forgets a key. */
class TimedCache extends ApiKeyCache {
  readonly waiting = new Map<string, (at: number) => void>();
  override evict(id: string): void {
    super.evict(id);
    this.waiting.get(id)?.(performance.now());
  }
}

const database = await createServerDatabase(opts.databaseUrl);
const pools = [new pg.Pool({ connectionString: database.url, max: 2 }), new pg.Pool({ connectionString: database.url, max: 2 })];
try {
  await migratePostgres(pgPoolExecutor(pools[0]!));
  const nodes = pools.map((pool) => {
    const db = pgPoolExecutor(pool);
    const cache = new TimedCache();
    return { cache, listener: listenForApiKeyChanges(db, cache), keys: createPgApiKeyRepository(db, new PgOutbox(true), cache) };
  });
  await Promise.all(nodes.map((n) => n.listener.ready));
  if (!nodes.every((n) => n.cache.enabled)) throw new Error('a node\'s cache is not serving: its LISTEN probe failed');
  const [a, b] = nodes as [typeof nodes[0], typeof nodes[0]];
  const windows: number[] = [];
  for (let i = 0; i < opts.revocations; i++) {
    const id = `key_${i}`;
    const digest = i.toString(16).padStart(64, '0');
    await a.keys.insert({
      id, tenantId: 't', userId: 'u', name: id, tier: 'free', mode: 'live', scopes: ['memories:read'], displayPrefix: 'mnemo_live_x',
      digest, createdAt: new Date(), expiresAt: null, revokedAt: null, replacedBy: null,
    });
    await a.keys.findByDigest(digest);
    await b.keys.findByDigest(digest);
    const heard = new Promise<number>((resolve) => b.cache.waiting.set(id, resolve));
    await a.keys.revoke(id, new Date());
    const committed = performance.now();
    windows.push(Math.max(0, (await heard) - committed));
    b.cache.waiting.delete(id);
    if ((await b.keys.findByDigest(digest))?.revokedAt === null) throw new Error('node B still saw the key live after its notification');
  }
  await Promise.all(nodes.map((n) => n.listener.close()));
  process.stdout.write([
    `${opts.revocations} revocations on node A, node B's cache holding each key; from A's UPDATE returning to B forgetting the key (ms), ` +
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, load average ${fmt(loadavg()[0] ?? 0, 1)}:`,
    '',
    '| p50 | p99 | max |',
    '| ---: | ---: | ---: |',
    `| ${fmt(median(windows), 3)} | ${fmt(percentile(windows, 99), 3)} | ${fmt(Math.max(...windows), 3)} |`,
  ].join('\n') + '\n');
} finally {
  for (const p of pools) await p.end();
  await database.stop();
}
