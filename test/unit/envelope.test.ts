import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, rewrap, seal, SealedValueError } from '../../src/core/secrets/envelope.ts';
import { keyringFrom, keyringFromEnv, masterKeyId, MasterKeyError } from '../../src/adapters/secrets/master-keyring.ts';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const context = ['secret', 'acme', 'live', 'db-password', '1'];

describe('envelope encryption (AES-256-GCM data key wrapped by the master key)', () => {
  it('opens what it sealed, and a fresh data key and nonce make every sealing different', () => {
    const keyring = keyringFrom([keyA]);
    const a = seal(keyring, context, 'hunter2');
    const b = seal(keyring, context, 'hunter2');
    expect(open(keyring, context, a)).toBe('hunter2');
    expect(a.payload).not.toBe(b.payload);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    expect(a.keyId).toBe(masterKeyId(keyA));
    expect(Buffer.from(a.payload, 'base64').includes(Buffer.from('hunter2'))).toBe(false);
  });

  it('refuses to open under another context, another master key, or with any byte changed', () => {
    const keyring = keyringFrom([keyA]);
    const sealed = seal(keyring, context, 'hunter2');
    for (const other of [['secret', 'acme', 'live', 'db-password', '2'], ['secret', 'mallory', 'live', 'db-password', '1'], ['secret', 'acme', 'test', 'db-password', '1']]) {
      expect(() => open(keyring, other, sealed)).toThrow(SealedValueError);
    }
    // Same id, other key bytes: a wrong master key never yields garbage.
    const impostor = { activeId: keyring.activeId, keys: new Map([[keyring.activeId, keyB]]) };
    expect(() => open(impostor, context, sealed)).toThrow(SealedValueError);
    expect(() => open(keyringFrom([keyB]), context, sealed)).toThrow(/not in the keyring/);
    for (const part of ['payload', 'wrappedKey'] as const) {
      const bytes = Buffer.from(sealed[part], 'base64');
      for (const at of [0, 13, bytes.length - 1]) {
        const flipped = Buffer.from(bytes);
        flipped[at]! ^= 1;
        expect(() => open(keyring, context, { ...sealed, [part]: flipped.toString('base64') }), `${part}[${at}]`).toThrow(SealedValueError);
      }
      expect(() => open(keyring, context, { ...sealed, [part]: '' })).toThrow(SealedValueError);
    }
  });

  it('re-wraps under a new active key without touching the payload; the old key is then not needed', () => {
    const old = keyringFrom([keyA]);
    const sealed = seal(old, context, 'hunter2');
    const rotating = keyringFrom([keyB, keyA]);
    const moved = rewrap(rotating, context, sealed);
    expect(moved.keyId).toBe(masterKeyId(keyB));
    expect(moved.payload).toBe(sealed.payload);
    expect(open(keyringFrom([keyB]), context, moved)).toBe('hunter2');
    expect(() => rewrap(rotating, ['secret', 'other'], sealed)).toThrow(SealedValueError);
  });
});

describe('MNEMO_MASTER_KEY', () => {
  it('takes 64 hex digits or base64 of 32 bytes, comma-separated, the first sealing', () => {
    const keyring = keyringFromEnv(`${keyB.toString('base64')}, ${keyA.toString('hex')}`);
    expect(keyring.activeId).toBe(masterKeyId(keyB));
    expect([...keyring.keys.keys()]).toEqual([masterKeyId(keyB), masterKeyId(keyA)]);
    expect(keyringFromEnv(keyA.toString('base64url')).activeId).toBe(masterKeyId(keyA));
  });

  it('refuses anything else without echoing it', () => {
    for (const bad of ['', ' , ', 'short', randomBytes(16).toString('hex'), randomBytes(31).toString('base64'), 'z'.repeat(64)]) {
      let error: unknown;
      try {
        keyringFromEnv(bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(MasterKeyError);
      if (bad.trim().length > 8) expect((error as Error).message).not.toContain(bad.trim());
    }
  });
});
