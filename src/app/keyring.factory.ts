import { mkdirSync } from 'node:fs';
import { keyringFromEnv, keyringFromFile } from '../adapters/secrets/master-keyring.ts';
import { checkStoreFiles } from '../adapters/storage/file-permissions.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import type { Config } from './config.ts';

/**
 * The master keyring of this process: `MNEMO_MASTER_KEY`, else `master.key` in the data directory (created on first
 * start). Several nodes on one database must share the key: give each the same MNEMO_MASTER_KEY (docs/deploy.md).
 */
export function loadKeyring(config: Pick<Config, 'masterKey' | 'dataDir'>): Keyring {
  if (config.masterKey !== null) return keyringFromEnv(config.masterKey);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Whoever may write the directory may replace master.key with a key of their own.
  checkStoreFiles([config.dataDir]);
  return keyringFromFile(config.dataDir).keyring;
}
