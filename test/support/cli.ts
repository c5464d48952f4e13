import { buildCli, type CliIo } from '../../src/app/cli.ts';

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
