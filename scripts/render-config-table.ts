import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigTable, withConfigTable } from './config-table.ts';

/**
 * Writes the configuration table into docs/configuration.md (between the config-table markers); with --check it
 * writes nothing and exits 1 when the file is stale, for CI.
 */
const path = new URL('../docs/configuration.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withConfigTable(before, renderConfigTable());
if (process.argv.includes('--check')) {
  if (after !== before) process.exitCode = 1;
  console.log(after === before ? 'docs/configuration.md: up to date' : 'docs/configuration.md: stale, run npm run docs:config');
} else {
  if (after !== before) writeFileSync(path, after);
  console.log(after === before ? 'docs/configuration.md: already up to date' : 'docs/configuration.md: configuration table rendered');
}
