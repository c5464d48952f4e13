// The TypeScript compiler the project builds and type-checks with: TypeScript 7's native `tsc`, the dev dependency
// `typescript-native` (docs/architecture.md, "Build and start"). Named by path, because npm links one
// `node_modules/.bin/tsc` for it and for TypeScript 6 (kept for typescript-eslint), whichever it links last.
// `node scripts/tsc.js ARGS` runs it (`npm run typecheck`); scripts/build.js imports TSC.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The package exports no bin path, only its package.json.
export const TSC = join(dirname(createRequire(import.meta.url).resolve('typescript-native/package.json')), 'bin', 'tsc');

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = spawnSync(process.execPath, [TSC, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (result.error) throw result.error;
  process.exitCode = result.status ?? 1;
}
