import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_TABLE, CONFIG_VARIABLES, loadConfig } from '../../src/app/config.ts';
import { END_MARKER, renderConfigTable, START_MARKER } from '../../scripts/config-table.ts';
import { mnemo } from '../support/cli.ts';

describe('configuration table', () => {
  it('is rendered, up to date, in docs/configuration.md (npm run docs:config)', () => {
    const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const start = doc.indexOf(START_MARKER);
    const end = doc.indexOf(END_MARKER);
    expect(start).toBeGreaterThan(0);
    expect(doc.slice(start, end + END_MARKER.length), 'stale: run npm run docs:config').toBe(renderConfigTable());
  });

  it('names each variable once, and its defaults are valid values', () => {
    const names = CONFIG_TABLE.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^(HOST|PORT|MNEMO_[A-Z0-9_]+)$/);
    expect(() => loadConfig({})).not.toThrow();
  });

  it('is what `mnemo serve --help` lists: the variables the server reads', async () => {
    const { stdout } = await mnemo({}, 'serve', '--help');
    const listed = [...stdout.matchAll(/^ {2}((?:HOST|PORT|MNEMO_)[A-Z0-9_]*) /gm)].map((m) => m[1]);
    expect(listed).toEqual([...CONFIG_VARIABLES]);
    expect(CONFIG_VARIABLES).not.toContain('MNEMO_API_KEY');
  });
});
