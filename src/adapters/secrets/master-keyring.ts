import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync, constants, existsSync, fstatSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Keyring } from '../../core/secrets/envelope.ts';

/**
 * Where the master keys come from: `MNEMO_MASTER_KEY` (one key, or several separated by commas, the first sealing
 * new values), or else the file `master.key` in the data directory, created with one random key and mode 0600 on
 * first start. A key is 32 bytes written as 64 hex digits or as base64. Its id is derived from the key (a digest,
 * not the key), so every node holding the same key names it alike.
 */
export const MASTER_KEY_FILE = 'master.key';

/** A master key that is missing, malformed or exposed: the server does not start (config error). */
export class MasterKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyError';
  }
}

export const masterKeyId = (key: Buffer): string => `mk_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;

function parseKey(text: string, where: string, index: number): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t) ? Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : null;
  if (!key || key.length !== 32) {
    throw new MasterKeyError(`${where}: key ${index + 1} is not 32 bytes as 64 hex digits or base64 (generate one with \`openssl rand -base64 32\`)`);
  }
  return key;
}

export function keyringFrom(keys: readonly Buffer[]): Keyring {
  if (keys.length === 0) throw new MasterKeyError('no master key');
  const map = new Map(keys.map((k) => [masterKeyId(k), k] as const));
  return { activeId: masterKeyId(keys[0]!), keys: map };
}

/** The keyring of `MNEMO_MASTER_KEY`. */
export function keyringFromEnv(value: string): Keyring {
  const parts = value.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) throw new MasterKeyError('MNEMO_MASTER_KEY is set but empty');
  return keyringFrom(parts.map((p, i) => parseKey(p, 'MNEMO_MASTER_KEY', i)));
}

/** A new random master key, as master.key holds it (base64). */
export const generateMasterKey = (): string => randomBytes(32).toString('base64');

/** Reads `dataDir/master.key`, creating it (0600, one random key) when absent. Refuses a file others may read. */
export function keyringFromFile(dataDir: string): { keyring: Keyring; created: boolean } {
  const path = join(dataDir, MASTER_KEY_FILE);
  let created = false;
  if (!existsSync(path)) {
    // Written whole under a temporary name, then linked into place: link() fails if the file exists, so two processes
    // starting together never overwrite each other's key, and neither ever reads a half-written file.
    const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        writeSync(fd, `${generateMasterKey()}\n`);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      linkSync(temporary, path);
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new MasterKeyError(`cannot create ${path}: ${(err as Error).message}`);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  return { keyring: keyringFrom(readKeyFile(dataDir).keys), created };
}

/**
 * The keys of `dataDir/master.key`, first (active) first, as written (`lines`) and decoded (`keys`). Refuses a file
 * others may read, or one without a key.
 */
export function readKeyFile(dataDir: string): { path: string; lines: string[]; keys: Buffer[] } {
  const path = join(dataDir, MASTER_KEY_FILE);
  let text: string;
  const fd = openSync(path, 'r');
  try {
    const mode = fstatSync(fd).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new MasterKeyError(`${path} is readable by others (mode ${mode.toString(8).padStart(4, '0')}): run \`chmod 600 ${path}\``);
    }
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith('#'));
  if (lines.length === 0) throw new MasterKeyError(`${path} holds no key`);
  return { path, lines, keys: lines.map((l, i) => parseKey(l, path, i)) };
}

/**
 * Replaces `dataDir/master.key` with `lines` (one key each, the first active), atomically: written whole (0600) under
 * a temporary name, synced, then renamed over the file, so a crash leaves the old file or the new one, never half of
 * one. Each line is checked first: a key file that would not load is never written.
 */
export function writeKeyFile(dataDir: string, lines: readonly string[]): void {
  const path = join(dataDir, MASTER_KEY_FILE);
  if (lines.length === 0) throw new MasterKeyError(`${path} would hold no key`);
  lines.forEach((l, i) => parseKey(l, path, i));
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      writeSync(fd, `${lines.join('\n')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
  // The rename itself is durable once the directory is synced.
  const dir = openSync(dataDir, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
