import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/mnemo.js', import.meta.url));

/** The environment a spawned `mnemo` sees: this process's, without any MNEMO_ setting, plus `env`. */
export function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MNEMO_')));
  return { ...base, ...env };
}

/** `mnemo …args` as an operator runs it: bin/mnemo.js in a child process. */
export function startMnemo(env: Record<string, string>, args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface MnemoRun { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Waits for a started `mnemo` to end; `onStderr` sees its stderr as it comes. */
export function finished(child: ChildProcess, onStderr?: (text: string) => void): Promise<MnemoRun> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); onStderr?.(c.toString()); });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export const runMnemo = (env: Record<string, string>, ...args: string[]): Promise<MnemoRun> => finished(startMnemo(env, args));
