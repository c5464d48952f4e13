import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedValue } from './secret.types.ts';

/**
 * Envelope encryption, as Vault and AWS KMS do it: each value is encrypted (AES-256-GCM) under its own random data
 * key, and the data key is encrypted (AES-256-GCM) under a master key of the keyring. Rotating the master key only
 * re-wraps data keys; values are never re-encrypted. Both layers authenticate the value's context (its AAD: tenant,
 * mode, name, version for a secret), so a sealed value copied to another row, or two values swapped, fail to open.
 */

/** Master keys by id; `activeId` seals new values, every key opens what it sealed. */
export interface Keyring {
  readonly activeId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

/** A value that does not open: wrong master key, tampered bytes, or moved to another context. Never garbage. */
export class SealedValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedValueError';
  }
}

const NONCE = 12;
const TAG = 16;
const KEY = 32;
const VERSION_TAG = 'mnemo-envelope-v1';

/** The authenticated context: a fixed prefix and the parts, length-prefixed so that no two lists encode alike. */
function aad(parts: readonly string[], layer: 'data' | 'wrap', keyId?: string): Buffer {
  const all = [VERSION_TAG, layer, ...(keyId === undefined ? [] : [keyId]), ...parts];
  return Buffer.from(all.map((p) => `${Buffer.byteLength(p)}:${p}`).join(''), 'utf8');
}

function encrypt(key: Buffer, plaintext: Buffer, additional: Buffer): string {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(additional);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

function decrypt(key: Buffer, sealed: string, additional: Buffer, what: string): Buffer {
  const bytes = Buffer.from(sealed, 'base64');
  if (bytes.length < NONCE + TAG) throw new SealedValueError(`${what} is truncated`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE));
    decipher.setAAD(additional);
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE, bytes.length - TAG)), decipher.final()]);
  } catch {
    throw new SealedValueError(`${what} failed authentication (wrong master key, tampered, or not this value's)`);
  }
}

/** The master key `keyId` of the keyring (32 bytes), or SealedValueError when the keyring does not hold it. */
export function masterKey(keyring: Keyring, keyId: string): Buffer {
  const key = keyring.keys.get(keyId);
  if (!key) throw new SealedValueError(`master key ${JSON.stringify(keyId)} is not in the keyring`);
  if (key.length !== KEY) throw new SealedValueError(`master key ${JSON.stringify(keyId)} is not ${KEY} bytes`);
  return key;
}

/** Encrypts `plaintext` for `context` under a fresh data key wrapped by the keyring's active master key. */
export function seal(keyring: Keyring, context: readonly string[], plaintext: string): SealedValue {
  const dataKey = randomBytes(KEY);
  try {
    const keyId = keyring.activeId;
    return {
      keyId,
      wrappedKey: encrypt(masterKey(keyring, keyId), dataKey, aad(context, 'wrap', keyId)),
      payload: encrypt(dataKey, Buffer.from(plaintext, 'utf8'), aad(context, 'data')),
    };
  } finally {
    dataKey.fill(0);
  }
}

function unwrap(keyring: Keyring, context: readonly string[], sealed: SealedValue): Buffer {
  const dataKey = decrypt(masterKey(keyring, sealed.keyId), sealed.wrappedKey, aad(context, 'wrap', sealed.keyId), 'the data key');
  if (dataKey.length !== KEY) throw new SealedValueError('the data key has the wrong length');
  return dataKey;
}

/** The plaintext of a value sealed for `context`; throws SealedValueError rather than return anything else. */
export function open(keyring: Keyring, context: readonly string[], sealed: SealedValue): string {
  const dataKey = unwrap(keyring, context, sealed);
  try {
    return decrypt(dataKey, sealed.payload, aad(context, 'data'), 'the value').toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/**
 * For a value whose key is derived elsewhere (dashboard sessions: from the session cookie and a master key): the
 * same AES-256-GCM and authenticated context as a sealed value's payload, without the wrapped data key.
 */
export function encryptWithKey(key: Buffer, context: readonly string[], plaintext: string): string {
  if (key.length !== KEY) throw new SealedValueError(`the key is not ${KEY} bytes`);
  return encrypt(key, Buffer.from(plaintext, 'utf8'), aad(context, 'data'));
}

/** The plaintext of `encryptWithKey`'s output; throws SealedValueError for a wrong key, context or tampered bytes. */
export function decryptWithKey(key: Buffer, context: readonly string[], sealed: string): string {
  if (key.length !== KEY) throw new SealedValueError(`the key is not ${KEY} bytes`);
  return decrypt(key, sealed, aad(context, 'data'), 'the value').toString('utf8');
}

/** The same value with its data key wrapped by the active master key instead (master-key rotation). */
export function rewrap(keyring: Keyring, context: readonly string[], sealed: SealedValue): SealedValue {
  if (sealed.keyId === keyring.activeId) return sealed;
  const dataKey = unwrap(keyring, context, sealed);
  try {
    // Prove the payload opens before the old wrapping is replaced.
    decrypt(dataKey, sealed.payload, aad(context, 'data'), 'the value');
    const keyId = keyring.activeId;
    return { keyId, wrappedKey: encrypt(masterKey(keyring, keyId), dataKey, aad(context, 'wrap', keyId)), payload: sealed.payload };
  } finally {
    dataKey.fill(0);
  }
}
