import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const repositoryRoot = join(import.meta.dirname, '..', '..');

export interface StartedServer {
  child: ChildProcess;
  url: string;
  /** Everything the server printed so far (stdout and stderr): its log. */
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts the server exactly as an operator does: `npm start` (compiled dist/, rebuilt first if src/ changed) with
 * environment variables; resolves once listening.
 */
export function npmStart(env: Record<string, string>): Promise<StartedServer> {
  const child = spawn('npm', ['start'], { cwd: repositoryRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  // Generous: after an edit of src/, npm start first recompiles dist/ (10-30 s on a busy 2-core machine).
  return whenListening(child, 120_000);
}

/**
 * Starts the compiled server itself (`node dist/app/main.js`, what `npm start` runs once dist/ is fresh), not npm: a
 * SIGKILL then hits the server and nothing else gets a chance to clean up. `env` is the whole environment.
 */
export function startCompiledServer(env: NodeJS.ProcessEnv): Promise<StartedServer> {
  const child = spawn(process.execPath, ['dist/app/main.js'], { cwd: repositoryRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return whenListening(child, 60_000);
}

/** Resolves once the server prints its `listening on` line; rejects if it exits first or takes longer than `ms`. */
export function whenListening(child: ChildProcess, ms: number): Promise<StartedServer> {
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^listening on (http:\/\/\S+)$/m.exec(out);
      if (m) resolve({ child, url: m[1]!, output: () => out, exited });
    });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${out}`)));
    setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), ms).unref();
  });
}
