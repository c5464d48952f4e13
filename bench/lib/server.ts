import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The repository root (bench/lib/ -> ../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const execFileAsync = promisify(execFile);

export type EmbedderKind = 'hashing' | 'local';

export interface ServerHandle {
  url: string;
  pid: number;
  dataDir: string;
  /** Spawn to the `listening on` line (includes loading the model for `local`). */
  startupMs: number;
  /** Resident set size of the server process now, from /proc (undefined where there is no /proc). */
  rssMiB(): Promise<number | undefined>;
  /** SIGTERM, then waits for the exit; throws unless the server exits with code 0 within the timeout. */
  stop(timeoutMs?: number): Promise<{ shutdownMs: number }>;
  /** Kills the process if still running and removes the data directory; safe to call twice. */
  dispose(): Promise<void>;
}

/** Keeps the last bytes of a stream for error messages. */
function tail(limit = 4000) {
  let text = '';
  return {
    push: (chunk: Buffer | string) => { text = (text + chunk.toString()).slice(-limit); },
    get: () => text.trim(),
  };
}

let built: Promise<unknown> | undefined;

/** Compiles src/ into dist/ unless it is up to date (what `npm start` does first); once per bench process. */
export function ensureBuilt(): Promise<unknown> {
  built ??= execFileAsync(process.execPath, ['scripts/build.js', '--if-stale'], { cwd: REPO_ROOT });
  return built;
}

/** `NAME=VALUE,NAME=VALUE` (a bench's settings option for the servers it starts) as an environment. */
export const envList = (list: string): Record<string, string> => Object.fromEntries(list.split(',').filter(Boolean)
  .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

/**
 * Starts the real server the way `npm start` does (the compiled dist/app/main.js) on a free loopback port with
 * a fresh data directory, and resolves once it prints `listening on http://HOST:PORT`. `env` adds settings (e.g.
 * MNEMO_SQLITE_SYNCHRONOUS); `nodeArgs` go to node before the script (e.g. --cpu-prof); `parentDir` is where the data directory goes (the file system matters for fsync).
 */
export async function startServer(
  embedder: EmbedderKind,
  options: { startTimeoutMs?: number; env?: Record<string, string>; parentDir?: string; dataDir?: string; nodeArgs?: string[] } = {},
): Promise<ServerHandle> {
  await ensureBuilt();
  // `dataDir`: restart on an existing store (a cold start); dispose() removes it as it would a fresh one.
  const dataDir = options.dataDir ?? await mkdtemp(join(options.parentDir ?? tmpdir(), `mnemo-bench-${embedder}-`));
  const env = { ...serverEnv(dataDir, embedder), ...options.env };
  const started = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), 'dist/app/main.js'], {
    cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = tail();
  const err = tail();
  child.stderr.on('data', err.push);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { exited = { code, signal }; resolve(exited); });
  });

  const dispose = async () => {
    if (!exited) {
      child.kill('SIGKILL');
      await exit;
    }
    await rm(dataDir, { recursive: true, force: true });
  };

  let url: string;
  try {
    url = await waitForListening(child, out, err, exit, options.startTimeoutMs ?? 180_000);
  } catch (e) {
    await dispose();
    throw e;
  }
  const startupMs = performance.now() - started;
  // Keep draining stdout (warn-level logs) so the pipe never fills up and blocks the server.
  child.stdout.on('data', out.push);

  return {
    url,
    pid: child.pid!,
    dataDir,
    startupMs,
    rssMiB: () => rssMiB(child.pid!),
    async stop(timeoutMs = 20_000) {
      if (exited) throw new Error(`server had already exited (${describeExit(exited)})\n${err.get()}`);
      const t0 = performance.now();
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const result = await Promise.race([
        exit,
        new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), timeoutMs); }),
      ]);
      clearTimeout(timer);
      if (result === 'timeout') {
        throw new Error(`server did not exit within ${timeoutMs} ms of SIGTERM\n${err.get()}`);
      }
      if (result.code !== 0) {
        throw new Error(`server exited with ${describeExit(result)} after SIGTERM, expected code 0\n${err.get()}`);
      }
      return { shutdownMs: performance.now() - t0 };
    },
    dispose,
  };
}

function serverEnv(dataDir: string, embedder: EmbedderKind): NodeJS.ProcessEnv {
  // Start from the caller's environment but drop every Mnemo setting so that nothing local leaks into the run.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MNEMO_') && k !== 'HOST' && k !== 'PORT') env[k] = v;
  return {
    ...env, HOST: '127.0.0.1', PORT: '0', MNEMO_DATA_DIR: dataDir, MNEMO_EMBEDDINGS: embedder, MNEMO_LOG_LEVEL: 'warn',
  };
}

function describeExit(e: { code: number | null; signal: NodeJS.Signals | null }): string {
  return e.signal ? `signal ${e.signal}` : `code ${e.code}`;
}

function waitForListening(
  child: ChildProcess,
  out: ReturnType<typeof tail>,
  err: ReturnType<typeof tail>,
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  timeoutMs: number,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      reject(new Error(`server printed no "listening on" line within ${timeoutMs} ms\nstdout: ${out.get()}\nstderr: ${err.get()}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out.push(chunk);
      buffer += chunk.toString();
      const m = /^listening on (http:\/\/\S+)$/m.exec(buffer);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    void exit.then((e) => {
      clearTimeout(timer);
      reject(new Error(`server exited during start (${describeExit(e)})\nstdout: ${out.get()}\nstderr: ${err.get()}`));
    });
  });
}

async function rssMiB(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Creates an enterprise-tier key (no rate limits) with the operator CLI, as an operator would (`env`: the server's store settings). */
export async function createEnterpriseKey(server: ServerHandle, embedder: EmbedderKind, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, ['bin/mnemo.js', 'keys', 'create', '--tier', 'enterprise', '--json'], {
    cwd: REPO_ROOT, env: { ...serverEnv(server.dataDir, embedder), ...env }, timeout: 60_000,
  });
  const parsed = JSON.parse(stdout.trim()) as { key?: unknown; tier?: unknown };
  if (typeof parsed.key !== 'string' || parsed.tier !== 'enterprise') {
    throw new Error(`unexpected output from mnemo keys create: ${stdout}`);
  }
  return parsed.key;
}
