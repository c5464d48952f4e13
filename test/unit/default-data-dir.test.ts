import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { defaultDataDir, perUserDataDir, runsFromCheckout } from '../../src/app/default-data-dir.ts';
import { repositoryRoot } from '../support/npm-start.ts';

describe('the data directory when MNEMO_DATA_DIR is unset', () => {
  const temp = mkdtempSync(join(tmpdir(), 'mnemo-data-dir-'));
  afterAll(() => rmSync(temp, { recursive: true, force: true }));

  it('is ./data in a checkout (its sources beside the code), which this test runs from', () => {
    expect(runsFromCheckout(repositoryRoot)).toBe(true);
    expect(loadConfig({}).dataDir).toBe(resolve('data'));
    expect(loadConfig({ MNEMO_DATA_DIR: '/srv/mnemo' }).databaseFile).toBe(join('/srv/mnemo', 'mnemo.db'));
  });

  it('tells an installed package (no src/ or TypeScript configuration beside it) from a checkout', () => {
    expect(runsFromCheckout(temp)).toBe(false);
    mkdirSync(join(temp, 'src'));
    expect(runsFromCheckout(temp), 'src/ alone is not a checkout').toBe(false);
    writeFileSync(join(temp, 'tsconfig.json'), '{}');
    expect(runsFromCheckout(temp)).toBe(true);
  });

  it('is the platform\'s per-user data directory for an installed package', () => {
    expect(defaultDataDir({ HOME: '/home/ann' }, false)).toBe(perUserDataDir({ HOME: '/home/ann' }));
    expect(perUserDataDir({ HOME: '/home/ann' }, 'linux')).toBe('/home/ann/.local/share/mnemo');
    expect(perUserDataDir({ HOME: '/home/ann', XDG_DATA_HOME: '/data/ann' }, 'linux')).toBe('/data/ann/mnemo');
    expect(perUserDataDir({ HOME: '/home/ann', XDG_DATA_HOME: 'relative' }, 'freebsd'), 'a relative XDG_DATA_HOME is ignored')
      .toBe('/home/ann/.local/share/mnemo');
    expect(perUserDataDir({ HOME: '/Users/ann', XDG_DATA_HOME: '/data/ann' }, 'darwin')).toBe('/Users/ann/Library/Application Support/mnemo');
    expect(perUserDataDir({ LOCALAPPDATA: 'C:\\Users\\ann\\AppData\\Local' }, 'win32')).toBe(join('C:\\Users\\ann\\AppData\\Local', 'mnemo'));
  });
});
