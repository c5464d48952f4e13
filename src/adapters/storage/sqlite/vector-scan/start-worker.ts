import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker module of the vector cache in a thread. Compiled, `compiled` is plain JavaScript beside the caller.
 * From TypeScript sources (tsx, vitest) the worker's modules are bundled once per process into one CommonJS script with
 * esbuild (tsx's own compiler), so a worker starts in milliseconds instead of loading tsx's loader and compiling on its
 * own: on two cores, two workers doing that at start starved the event loop for a second. Packages named in
 * `external` (native ones: better-sqlite3) are required from where this file resolves them, not bundled.
 */
export function startWorker(source: URL, compiled: URL, options: WorkerOptions & { external?: string[] } = {}): Worker {
  const { external = [], ...workerOptions } = options;
  if (!import.meta.url.endsWith('.ts')) return new Worker(compiled, workerOptions);
  const entry = fileURLToPath(source);
  let script = bundles.get(entry);
  if (script === undefined) {
    script = bundle(entry, external);
    bundles.set(entry, script);
  }
  return new Worker(script, { ...workerOptions, eval: true });
}

const bundles = new Map<string, string>();

function bundle(entry: string, external: string[]): string {
  const require = createRequire(import.meta.url);
  const esbuild = require('esbuild') as { buildSync(o: object): { outputFiles: { text: string }[] } };
  // An eval'd worker resolves bare names from the working directory: external packages are pinned to absolute paths.
  const alias = Object.fromEntries(external.map((name) => [name, require.resolve(name)]));
  return esbuild.buildSync({
    entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', target: 'node20', write: false,
    alias, external: Object.values(alias),
  }).outputFiles[0]!.text;
}
