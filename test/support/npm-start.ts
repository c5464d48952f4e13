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
    // Generous: after an edit of src/, npm start first recompiles dist/ (10-30 s on a busy 2-core machine).
    setTimeout(() => reject(new Error(`server did not start in time:\n${out}`)), 120_000).unref();
  });
}
