import { spawn } from 'node:child_process';
import pg from 'pg';
import { REPO_ROOT } from './server.ts';

export interface PostgresHandle {
  /** `postgres://…` for MNEMO_DATABASE_URL and for `pg`. */
  url: string;
  /**
   * Server settings that point Mnemo at it: one connection, as PGlite is a single session; and a search timeout far
   * above the default, since one PGlite search at 10,000 memories takes seconds and a 408 would end the run.
   */
  env: Record<string, string>;
  /** Gathers planner statistics (ANALYZE), which a server's autovacuum does by itself and PGlite never does. */
  analyze(): Promise<void>;
  /** What answers, for the benchmark's text: `PGlite …` or the server's `version()` and pgvector's version. */
  describe(): Promise<string>;
  stop(): Promise<void>;
  /** PGlite: the child process that is the whole database (for its CPU); a server's processes are found in /proc. */
  pid?: number;
}

/** `SELECT version()` and pgvector's installed version, as one line. */
async function describeServer(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string; vector: string | null }>(
      "SELECT version() AS version, (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector");
    return `${rows[0]!.version.split(' on ')[0]}, pgvector ${rows[0]!.vector ?? '(not installed)'}`;
  } finally {
    await client.end();
  }
}

async function analyzeAt(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

let serverDatabases = 0;

/**
 * A new database on the PostgreSQL server `url` names (its user needs CREATEDB and the right to create pgvector),
 * with the extension created; `stop` drops it unless `keep`, which leaves it for EXPLAIN and logs its URL instead.
 * Mnemo gets the deployment default of MNEMO_DATABASE_POOL_SIZE, as a real server serves sessions in parallel.
 */
export async function createServerDatabase(url: string, o: { keep?: boolean; log?: (line: string) => void } = {}): Promise<PostgresHandle> {
  const name = `mnemo_bench_${process.pid}_${++serverDatabases}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const dbUrl = target.toString();
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  } finally {
    await client.end();
  }
  return {
    url: dbUrl,
    env: { MNEMO_DATABASE_URL: dbUrl },
    analyze: () => analyzeAt(dbUrl),
    describe: () => describeServer(dbUrl),
    async stop() {
      if (o.keep) {
        o.log?.(`kept database ${dbUrl.replace(/:[^:@/]*@/, ':***@')}`);
        return;
      }
      const drop = new pg.Client({ connectionString: url });
      await drop.connect();
      try {
        await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await drop.end();
      }
    },
  };
}

/** Starts bench/lib/pglite-process.ts in a child process and resolves once it listens. */
export async function startPglite(timeoutMs = 60_000): Promise<PostgresHandle> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/lib/pglite-process.ts'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-4000); });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`PGlite did not start within ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^pglite on (\d+)$/m.exec(out);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    void exit.then(() => { clearTimeout(timer); reject(new Error(`PGlite exited during start\n${stderr}`)); });
  });
  const url = `postgres://postgres:bench@127.0.0.1:${port}/postgres`;
  return {
    url,
    env: { MNEMO_DATABASE_URL: url, MNEMO_DATABASE_POOL_SIZE: '1', MNEMO_SEARCH_TIMEOUT_MS: '120000' },
    analyze: () => analyzeAt(url),
    describe: async () => `PGlite (WebAssembly, one session), ${await describeServer(url)}`,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
