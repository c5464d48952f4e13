// Whether dist/ was compiled from the sources as they are now. Plain JavaScript (no build needed to run it): read by
// scripts/build.js before `npm start` and by bin/mnemo.js, so that neither runs JavaScript older than its sources.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..');
export const DIST = join(ROOT, 'dist');
export const FINGERPRINT_FILE = join(DIST, '.build-fingerprint');
/** What the compiled output depends on, besides every file under src/ and integrations/. */
const CONFIG_FILES = ['tsconfig.json', 'tsconfig.build.json', 'tsconfig.package.json'];
/** Source directories; integrations/ is compiled into dist/package/ (tsconfig.package.json). */
const SOURCE_DIRS = ['src', 'integrations'];

/** False when the sources are not here (e.g. a Docker layer that installs dependencies before copying them). */
export function haveSources() {
  return existsSync(join(ROOT, 'src')) && CONFIG_FILES.every((file) => existsSync(join(ROOT, file)));
}

/**
 * A hash of every input's path, size and modification time. Stat only, no reads: about 300 files cost a few
 * milliseconds, which every `npm start` and `npx mnemo` pays. A changed, added, removed or renamed file changes it.
 */
export function sourceFingerprint() {
  const hash = createHash('sha256');
  const files = SOURCE_DIRS.filter((dir) => existsSync(join(ROOT, dir)))
    .flatMap((dir) => readdirSync(join(ROOT, dir), { recursive: true }).map((file) => join(dir, String(file)))).sort();
  for (const file of [...CONFIG_FILES, ...files]) {
    const stat = statSync(join(ROOT, file));
    if (stat.isFile()) hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** The fingerprint the last successful build recorded, if any. */
export function builtFingerprint() {
  try {
    return readFileSync(FINGERPRINT_FILE, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function isBuildFresh() {
  return haveSources() && builtFingerprint() === sourceFingerprint();
}
