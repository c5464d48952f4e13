import { buildCli, type CliIo } from '../../src/app/cli.ts';
import { runCli } from '../../src/app/cli-run.ts';
import { cleanEnv, type MnemoRun } from './spawn-cli.ts';

/** Runs `mnemo ...args` in this process, with its own environment and captured output; a failure is returned. */
export async function mnemo(env: Record<string, string>, ...args: string[]): Promise<{ stdout: string; stderr: string; error: unknown }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { env, out: (s) => { stdout += s; }, err: (s) => { stderr += s; } };
  let error: unknown;
  try {
    await buildCli(io).parseAsync(args, { from: 'user' });
  } catch (err) {
    error = err;
  }
  return { stdout, stderr, error };
}

/**
 * `mnemo ...args` as runMnemo (spawn-cli.ts) runs it, with the same environment and the same exit code
 * (src/app/cli-run.ts is what the process runs), but in this process: no tsx start-up of a second or more per call.
 * Signals are not: a test that stops a run with one spawns it. An unexpected failure (not one the CLI reports with
 * an exit code) is thrown, as it would crash the process.
 */
export async function runMnemoInProcess(env: Record<string, string>, ...args: string[]): Promise<MnemoRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { env: cleanEnv(env), out: (s) => { stdout += s; }, err: (s) => { stderr += s; } });
  return { code: code ?? 0, signal: null, stdout, stderr };
}
