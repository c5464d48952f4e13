import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  generateMasterKey, keyringFrom, keyringFromEnv, MASTER_KEY_FILE, MasterKeyError, masterKeyId, readKeyFile, writeKeyFile,
} from '../adapters/secrets/master-keyring.ts';
import type { Keyring } from '../core/secrets/envelope.ts';
import { KeyringMismatchError, verifyKeyring } from '../core/secrets/keyring-check.ts';
import { rotateMasterKey, type RotationProgress, type RotationSummary } from '../core/secrets/master-key-rotation.ts';
import { redactPassword, type Config } from './config.ts';
import { createStorage } from './storage.factory.ts';

/**
 * `mnemo keys rotate-master`: re-wraps every sealed value of the store under a new master key, then forgets the old
 * ones. With MNEMO_MASTER_KEY the operator lists the new key first and the old one second; with the data directory's
 * master.key the command makes the new key itself, prepends it to the file, and drops the old key from the file once
 * nothing needs it. Either way it can be run again after an interruption, and finishes the rotation.
 */
export interface RotateMasterRequest {
  config: Config;
  pageSize: number;
  /** Progress and notes (stderr). */
  err(text: string): void;
  /** The summary (stdout). */
  out(text: string): void;
}

const progressLine = (p: RotationProgress): string => (p.pass === 1
  ? `mnemo: rotate-master ${p.source}: ${p.checked} checked, ${p.rewrapped} re-wrapped${p.failed > 0 ? `, ${p.failed} did not open` : ''}\n`
  : `mnemo: rotate-master ${p.source}: second pass ${p.checked} checked${p.rewrapped > 0 ? `, ${p.rewrapped} written under an old key meanwhile, re-wrapped` : ''}\n`);

function summaryText(s: RotationSummary): string {
  const width = Math.max(...s.sources.map((x) => x.name.length));
  const lines = [`Master key ${s.activeKeyId} now wraps every value:`];
  for (const x of s.sources) lines.push(`  ${x.name.padEnd(width)}  ${x.values} values, ${x.rewrapped} re-wrapped`);
  const h = s.auditHeads;
  lines.push(`  audit chain heads: ${h.heads}, ${h.resigned} re-signed${h.unverified > 0 ? `, ${h.unverified} that did not verify left as they are (mnemo audit verify names them)` : ''}`);
  if (s.sealedPlaintext > 0) lines.push(`  plaintext webhook secrets sealed: ${s.sealedPlaintext}`);
  if (s.lateWrites > 0) lines.push(`  written under an old key during the run, then re-wrapped: ${s.lateWrites}`);
  if (s.failed > 0) {
    lines[0] = `Master key ${s.activeKeyId} wraps every value but ${s.failed} that did not open:`;
    for (const f of s.failures) lines.push(`  ${f.source} ${f.ref} (under ${f.keyId}): ${f.error}`);
    if (s.failed > s.failures.length) lines.push(`  … and ${s.failed - s.failures.length} more`);
  }
  lines.push(`Retired keys (no server needs them any more): ${s.retiredKeyIds.length > 0 ? s.retiredKeyIds.join(', ') : 'none'}`);
  if (s.keptKeyIds.length > 0) lines.push(`Keys still needed: ${s.keptKeyIds.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/** What stops the run: a message for the operator (exit 1), or null when the rotation is complete. */
export async function rotateMaster(req: RotateMasterRequest): Promise<string | null> {
  const { config } = req;
  if (config.databaseUrl === null && !existsSync(config.databaseFile)) {
    return `no database at ${config.databaseFile}: point MNEMO_DATA_DIR at the server's data directory`;
  }
  const fromFile = config.masterKey === null;
  const keyFile = join(config.dataDir, MASTER_KEY_FILE);
  if (fromFile && !existsSync(keyFile)) {
    return `no master key: MNEMO_MASTER_KEY is unset and ${keyFile} does not exist (a server creates it at its first start)`;
  }
  req.err(`mnemo: database ${config.databaseUrl === null ? config.databaseFile : redactPassword(config.databaseUrl)}\n`);
  try {
    const storage = await createStorage(config);
    try {
      let keyring: Keyring;
      if (fromFile) {
        let file = readKeyFile(config.dataDir);
        if (file.lines.length === 1) {
          // The file's key must be the store's before another is put in front of it.
          await verifyKeyring(storage.secrets, keyringFrom(file.keys));
          writeKeyFile(config.dataDir, [generateMasterKey(), ...file.lines]);
          file = readKeyFile(config.dataDir);
          req.err(`mnemo: new master key ${masterKeyId(file.keys[0]!)} written first in ${keyFile}; the old one stays until nothing needs it\n`);
        } else {
          req.err(`mnemo: ${keyFile} holds ${file.lines.length} keys: finishing the rotation to its first, ${masterKeyId(file.keys[0]!)}\n`);
        }
        keyring = keyringFrom(file.keys);
      } else {
        keyring = keyringFromEnv(config.masterKey!);
        req.err(`mnemo: MNEMO_MASTER_KEY holds ${[...keyring.keys.keys()].join(', ')}; re-wrapping under the first, ${keyring.activeId}\n`);
      }

      const summary = await rotateMasterKey({ storage, keyring, pageSize: req.pageSize, progress: (p) => req.err(progressLine(p)) });
      req.out(summaryText(summary));
      if (summary.lateWrites > 0) {
        const running = `values were written under ${summary.keptKeyIds.join(', ')} while the rotation ran: a server still seals with the old key`;
        return fromFile
          ? `${running}. Stop the servers of this data directory (they read master.key when they start), then run this again`
          : `${running}. Put ${summary.activeKeyId} first in every node's MNEMO_MASTER_KEY, restart them, and run this again before removing the old key`;
      }
      if (!summary.complete) {
        return `${summary.failed} values did not open and stay under ${summary.keptKeyIds.join(', ')}, which the store still needs`;
      }
      if (fromFile) {
        const first = readKeyFile(config.dataDir).lines[0]!;
        writeKeyFile(config.dataDir, [first]);
        req.out(`${keyFile} now holds only ${summary.activeKeyId}.\n`);
      } else if (keyring.keys.size > 1) {
        req.out(`Remove the other keys from MNEMO_MASTER_KEY on every node (keep ${summary.activeKeyId}) and restart them one at a time.\n`);
      }
      return null;
    } finally {
      await storage.close();
    }
  } catch (err) {
    if (err instanceof MasterKeyError || err instanceof KeyringMismatchError) return err.message;
    throw err;
  }
}
