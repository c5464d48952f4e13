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
  stop(): Promise<void>;
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
    async analyze() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('ANALYZE');
      } finally {
        await client.end();
      }
    },
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
