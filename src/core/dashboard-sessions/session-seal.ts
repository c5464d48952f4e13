import { hkdfSync } from 'node:crypto';
import { decryptWithKey, encryptWithKey, masterKey, SealedValueError, type Keyring } from '../secrets/envelope.ts';

/**
 * What a shared session store (Redis) holds sealed: the API key and what must not be rewritten from outside (the
 * CSRF token, the sign-in time that bounds the session's age). The key is derived (HKDF-SHA256) from the session
 * cookie's value with a master key as salt, so opening needs both: a copy of the store alone, or with a stolen cookie
 * but not the master key, or with the master key but no cookie, shows no API key. The session id is the context.
 */
export interface SealedSessionFields {
  apiKey: string;
  csrfToken: string;
  createdAt: number;
}

const INFO = 'mnemo dashboard session v1';
const context = (idDigest: string) => ['dashboard-session', idDigest];

function sessionKey(keyring: Keyring, keyId: string, cookieValue: string): Buffer {
  return Buffer.from(hkdfSync('sha256', cookieValue, masterKey(keyring, keyId), INFO, 32));
}

/** `keyId.sealed`: the master key used is named, so sessions opened before a rotation still open while it is held. */
export function sealSession(keyring: Keyring, cookieValue: string, idDigest: string, fields: SealedSessionFields): string {
  const keyId = keyring.activeId;
  const key = sessionKey(keyring, keyId, cookieValue);
  try {
    return `${keyId}.${encryptWithKey(key, context(idDigest), JSON.stringify(fields))}`;
  } finally {
    key.fill(0);
  }
}

/** The fields, or null when the cookie, the session id, the master key or the bytes are not the sealed ones. */
export function openSession(keyring: Keyring, cookieValue: string, idDigest: string, sealed: string): SealedSessionFields | null {
  const dot = sealed.lastIndexOf('.');
  if (dot <= 0) return null;
  let key: Buffer | undefined;
  try {
    key = sessionKey(keyring, sealed.slice(0, dot), cookieValue);
    const fields = JSON.parse(decryptWithKey(key, context(idDigest), sealed.slice(dot + 1))) as Partial<SealedSessionFields>;
    const { apiKey, csrfToken, createdAt } = fields;
    if (typeof apiKey !== 'string' || typeof csrfToken !== 'string' || typeof createdAt !== 'number') return null;
    return { apiKey, csrfToken, createdAt };
  } catch (err) {
    if (err instanceof SealedValueError || err instanceof SyntaxError) return null;
    throw err;
  } finally {
    key?.fill(0);
  }
}
