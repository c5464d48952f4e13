import { readFileSync, writeFileSync } from 'node:fs';
import { renderErrorTables, withErrorTables } from './error-tables.ts';

/** Writes the surfaces' error tables into docs/api.md (between the error-tables markers). */
const path = new URL('../docs/api.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withErrorTables(before, renderErrorTables());
if (after !== before) writeFileSync(path, after);
console.log(after === before ? 'docs/api.md: error tables already up to date' : 'docs/api.md: error tables rendered');
