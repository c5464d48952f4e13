import { open, seal, SealedValueError, type Keyring } from './envelope.ts';
import type { SecretRepository } from './secret.repository.ts';
import { keyCheckContext } from './secret.types.ts';

/** The keyring cannot open what the store holds: the server must not start (it would fail every read later). */
export class KeyringMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyringMismatchError';
  }
}

const CHECK_TEXT = 'mnemo master key check';

/**
 * Proves at start-up that the keyring fits the store, so that a missing or wrong master key stops the start with a
 * clear message instead of yielding errors (or anything worse) on reads. Every master key that sealed a value still
 * stored here has a check value (rotation drops a key's check once nothing is sealed under it): each must be in the
 * keyring and open its check value. The active key's check value is written on first use, before it seals anything.
 */
export async function verifyKeyring(secrets: Pick<SecretRepository, 'keyCheck' | 'keyCheckIds' | 'putKeyCheck'>, keyring: Keyring): Promise<void> {
  const stored = await secrets.keyCheckIds();
  const missing = stored.filter((id) => !keyring.keys.has(id));
  if (missing.length > 0) {
    throw new KeyringMismatchError(
      `the store holds secrets sealed with master key ${missing.join(', ')}, which this server's keyring (${[...keyring.keys.keys()].join(', ')}) ` +
      'does not have: set MNEMO_MASTER_KEY (or the data directory\'s master.key) to the key the store was written with',
    );
  }
  for (const id of stored) {
    const check = await secrets.keyCheck(id);
    try {
      if (check === null || open(keyring, keyCheckContext(id), check) !== CHECK_TEXT) throw new SealedValueError('mismatch');
    } catch (err) {
      if (!(err instanceof SealedValueError)) throw err;
      throw new KeyringMismatchError(`master key ${id} does not open the store's check value: it is not the key the store was written with`);
    }
  }
  if (!stored.includes(keyring.activeId)) await putKeyCheckOf(secrets, keyring, keyring.activeId);
}

/** Stores the check value of `keyId`, a key of the keyring (the active one, or one rotation finds still in use). */
export async function putKeyCheckOf(secrets: Pick<SecretRepository, 'putKeyCheck'>, keyring: Keyring, keyId: string): Promise<void> {
  await secrets.putKeyCheck(keyId, seal({ activeId: keyId, keys: keyring.keys }, keyCheckContext(keyId), CHECK_TEXT));
}
