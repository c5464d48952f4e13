import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where the data lives when MNEMO_DATA_DIR is unset (docs/cli.md, "Installing the package"): `./data` in a checkout
 * of the repository, as `npm start` always did; a per-user directory for an installed package, whose own directory
 * (under node_modules, possibly global and read-only) is no place for data, nor is whatever directory it is run from.
 */

type Env = Record<string, string | undefined>;

/** The repository (or installed package) root: this file is `src/app/` in a checkout and `dist/app/` once compiled. */
const PACKAGE_ROOT = resolve(import.meta.dirname, '..', '..');

/**
 * A checkout has its TypeScript sources and their configuration beside the compiled code; the packed tarball has
 * neither (package.json "files"). scripts/build-state.js's haveSources, by which bin/mnemo.js decides whether it may
 * run the sources, asks for these and more of the configuration, which the tarball leaves out too.
 */
export function runsFromCheckout(root: string = PACKAGE_ROOT): boolean {
  return existsSync(join(root, 'src')) && existsSync(join(root, 'tsconfig.json'));
}

/**
 * The platform's per-user data directory, `mnemo` inside it: `$XDG_DATA_HOME/mnemo` (the XDG base directory spec
 * ignores a relative value) else `~/.local/share/mnemo` on Linux and other Unixes, `~/Library/Application
 * Support/mnemo` on macOS, `%LOCALAPPDATA%\mnemo` on Windows.
 */
export function perUserDataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  const set = (name: string): string | undefined => env[name]?.trim() || undefined;
  if (platform === 'win32') {
    return join(set('LOCALAPPDATA') ?? join(set('USERPROFILE') ?? homedir(), 'AppData', 'Local'), 'mnemo');
  }
  const home = set('HOME') ?? homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'mnemo');
  const xdg = set('XDG_DATA_HOME');
  return join(xdg !== undefined && xdg.startsWith('/') ? xdg : join(home, '.local', 'share'), 'mnemo');
}

/** MNEMO_DATA_DIR's default: `./data` (from the working directory) in a checkout, else the per-user directory. */
export function defaultDataDir(env: Env, checkout: boolean = runsFromCheckout()): string {
  return checkout ? resolve('data') : perUserDataDir(env);
}
