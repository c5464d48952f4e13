import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkStoreFiles, ExposedStoreFileError, permissionVerdict } from '../../src/adapters/storage/file-permissions.ts';
import { createWarningRelay } from '../../src/core/warning-log.ts';

/** The rule for store files (database, -wal, -shm, data directory): others may write → refuse; others may reach → warn. */
describe('store file permissions', () => {
  const dirs: string[] = [];
  const tempDir = () => { const d = mkdtempSync(join(tmpdir(), 'mnemo-perm-')); dirs.push(d); return d; };
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('refuses a mode others may write, warns on one they may read or enter, accepts the owner alone', () => {
    const verdicts = (modes: number[]) => modes.map((m) => `${m.toString(8)}:${permissionVerdict(m)}`);
    expect(verdicts([0o600, 0o700, 0o400, 0o100600, 0o040700])).toEqual(['600:ok', '700:ok', '400:ok', '100600:ok', '40700:ok']);
    expect(verdicts([0o640, 0o644, 0o604, 0o755, 0o711, 0o750])).toEqual(['640:warn', '644:warn', '604:warn', '755:warn', '711:warn', '750:warn']);
    expect(verdicts([0o620, 0o602, 0o660, 0o666, 0o777, 0o1777, 0o775])).toEqual(['620:refuse', '602:refuse', '660:refuse', '666:refuse', '777:refuse', '1777:refuse', '775:refuse']);
  });

  it.skipIf(process.platform === 'win32')('checks real files: skips missing ones, warns once per readable one, names the fix', () => {
    const dir = tempDir();
    const db = join(dir, 'mnemo.db');
    writeFileSync(db, '');
    chmodSync(db, 0o644);
    chmodSync(dir, 0o755);
    const warnings: { details: object; message: string }[] = [];
    checkStoreFiles([dir, db, `${db}-wal`], { warn: (details, message) => warnings.push({ details, message }) });
    expect(warnings).toEqual([
      { details: { file: dir, mode: '0755', fix: `chmod 700 ${dir}` }, message: `${dir} is readable by other users (mode 0755): run \`chmod 700 ${dir}\`` },
      { details: { file: db, mode: '0644', fix: `chmod 600 ${db}` }, message: `${db} is readable by other users (mode 0644): run \`chmod 600 ${db}\`` },
    ]);

    chmodSync(db, 0o666);
    expect(() => checkStoreFiles([dir, db])).toThrow(new ExposedStoreFileError(`${db} is writable by other users (mode 0666): run \`chmod 600 ${db}\``));
    const shared = join(dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(() => checkStoreFiles([shared])).toThrow(`${shared} is writable by other users (mode 1777): run \`chmod 700 ${shared}\``);
  });

  it('holds warnings made before the logger exists and gives them to it once attached', () => {
    const relay = createWarningRelay();
    relay.warn({ file: 'a' }, 'early');
    const seen: string[] = [];
    relay.attach({ warn: (_details, message) => seen.push(message) });
    relay.warn({}, 'late');
    expect(seen).toEqual(['early', 'late']);
  });
});
