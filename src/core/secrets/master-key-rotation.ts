import { createAuditHeadSigner, resignAuditHeads } from '../audit/audit.head.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Storage } from '../storage.port.ts';
import { sealPlaintextWebhookSecrets } from '../webhooks/webhook-secret.ts';
import { rewrap, SealedValueError, type Keyring } from './envelope.ts';
import { putKeyCheckOf, verifyKeyring } from './keyring-check.ts';
import type { SealedRef, SealedValue } from './secret.types.ts';

/**
 * Master-key rotation: every sealed value of the store gets its data key re-wrapped under the keyring's active key
 * (values themselves are never re-encrypted), and every audit chain head is re-signed under it (core/audit/audit.head.ts),
 * then the check values of the keys that seal nothing any more are dropped, so that a server starts without them.
 * `mnemo keys rotate-master` runs it (app/rotate-master.command.ts).
 */

/** One kind of sealed value in the store. */
export interface SealedValueSource {
  /** As progress and the summary name it. */
  name: string;
  page(after: string | null, limit: number): Promise<SealedRef[]>;
  rewrap(ref: string, sealed: SealedValue): Promise<void>;
}

/**
 * Every kind of sealed value a store holds. A new one must be listed here, or rotation would leave it under a key
 * it then retires. (The key checks are not: each stays sealed under its own key.)
 */
export function sealedValueSources(storage: Pick<Storage, 'secrets' | 'webhooks' | 'idempotentRequests' | 'mcpResources'>): SealedValueSource[] {
  return [
    { name: 'secret versions', page: (after, limit) => storage.secrets.sealedValues(after, limit), rewrap: (ref, s) => storage.secrets.rewrap(ref, s) },
    { name: 'webhook secrets', page: (after, limit) => storage.webhooks.sealedSecrets(after, limit), rewrap: (ref, s) => storage.webhooks.rewrapSecret(ref, s) },
    // The answers kept for G11 Idempotency-Key replays (core/idempotency): they may hold a secret's value or a key.
    {
      name: 'request replays',
      page: (after, limit) => storage.idempotentRequests.sealedValues(after, limit),
      rewrap: (ref, s) => storage.idempotentRequests.rewrap(ref, s),
    },
    { name: 'MCP values', page: (after, limit) => storage.mcpResources.sealedValues(after, limit), rewrap: (ref, s) => storage.mcpResources.rewrap(ref, s) },
  ];
}

export const ROTATION_PAGE_SIZE = 500;
/** How many values that do not open the summary names (it counts them all). */
const FAILURES_LISTED = 20;

/** After each page: which pass (1 re-wraps, 2 looks for values written under an old key meanwhile), and the counts so far. */
export interface RotationProgress {
  pass: 1 | 2;
  source: string;
  checked: number;
  rewrapped: number;
  failed: number;
}

export interface RotationSummary {
  activeKeyId: string;
  /** Webhook secrets a store still held in plaintext (never started since secrets were sealed), sealed by this run. */
  sealedPlaintext: number;
  /** Per kind: values seen and re-wrapped by the first pass. */
  sources: { name: string; values: number; rewrapped: number }[];
  /**
   * Audit chain heads seen and re-signed by the first pass; `unverified`: heads whose MAC did not verify, left as they
   * are (never re-signed, so a forged head stays visible to `mnemo audit verify`; they keep no key required).
   */
  auditHeads: { heads: number; resigned: number; unverified: number };
  /** Keys whose check value was dropped: nothing is sealed under them any more, a server no longer needs them. */
  retiredKeyIds: string[];
  /** Keys that must stay in the keyring: values under them did not open, or were written under them during the run. */
  keptKeyIds: string[];
  /** Values that did not open (wrong data, tampered or moved rows): counted, the first few named. They stay as they are. */
  failed: number;
  failures: { source: string; ref: string; keyId: string; error: string }[];
  /**
   * Values (and audit heads) found under an older key by the second pass: written while the first pass ran, by a
   * server that still seals with an old key. They are re-wrapped too, but that key stays required (its check is kept) until a run
   * finds none: the server may write more.
   */
  lateWrites: number;
  /** Everything is under the active key and every other key's check is gone: the old keys may be removed. */
  complete: boolean;
}

/**
 * Re-wraps every sealed value under `keyring.activeId`, in pages. Resumable: values already under the active key are
 * skipped, so a run that was interrupted is finished by running it again.
 *
 * Order matters for a crash at any point: the active key's check value is written first (verifyKeyring), so a
 * server never finds values sealed under a key the store does not name; the old keys' checks are dropped last, only
 * when nothing needs them. A second pass then looks for values written under an old key meanwhile (a server whose
 * keyring still has the old key first): if it finds any, that key's check is put back, so no server starts without
 * the key, and the run is reported incomplete.
 */
export async function rotateMasterKey(deps: {
  storage: Pick<Storage, 'secrets' | 'webhooks' | 'idempotentRequests' | 'mcpResources' | 'audit'>;
  keyring: Keyring;
  /** The time re-signed audit heads carry. */
  clock?: Clock;
  pageSize?: number;
  /** Told after each page (and awaited: a caller may act between pages). */
  progress?: (p: RotationProgress) => void | Promise<void>;
}): Promise<RotationSummary> {
  const { storage, keyring } = deps;
  const pageSize = deps.pageSize ?? ROTATION_PAGE_SIZE;
  // Throws KeyringMismatchError when the store holds values of a key this keyring lacks (they could not be re-wrapped).
  await verifyKeyring(storage.secrets, keyring);
  const sealedPlaintext = await sealPlaintextWebhookSecrets(storage.webhooks, keyring);

  const failures: RotationSummary['failures'] = [];
  const failedRefs = new Set<string>();
  const keptKeyIds = new Set<string>();

  /** One pass over a source: re-wraps what is not under the active key; returns counts and the keys it moved off. */
  async function pass(source: SealedValueSource, n: 1 | 2) {
    const counts = { checked: 0, rewrapped: 0, failed: 0 };
    const movedOff = new Set<string>();
    for (let after: string | null = null; ;) {
      const page = await source.page(after, pageSize);
      if (page.length === 0) break;
      for (const value of page) {
        counts.checked++;
        const id = `${source.name}\u0000${value.ref}`;
        if (value.sealed.keyId === keyring.activeId || failedRefs.has(id)) continue;
        try {
          await source.rewrap(value.ref, rewrap(keyring, value.context, value.sealed));
          counts.rewrapped++;
          movedOff.add(value.sealed.keyId);
        } catch (err) {
          if (!(err instanceof SealedValueError)) throw err;
          counts.failed++;
          failedRefs.add(id);
          keptKeyIds.add(value.sealed.keyId);
          if (failures.length < FAILURES_LISTED) failures.push({ source: source.name, ref: value.ref, keyId: value.sealed.keyId, error: err.message });
        }
      }
      await deps.progress?.({ pass: n, source: source.name, ...counts });
      after = page.at(-1)!.ref;
    }
    return { ...counts, movedOff };
  }

  const heads = createAuditHeadSigner(keyring);
  const clock = deps.clock ?? systemClock;
  /** One pass over the audit heads, told as a source of its own. */
  async function headsPass(n: 1 | 2) {
    const done = await resignAuditHeads(storage.audit, heads, clock.now());
    await deps.progress?.({ pass: n, source: 'audit chain heads', checked: done.heads, rewrapped: done.resigned, failed: 0 });
    return done;
  }

  const sources = sealedValueSources(storage);
  const first: RotationSummary['sources'] = [];
  for (const source of sources) {
    const done = await pass(source, 1);
    first.push({ name: source.name, values: done.checked, rewrapped: done.rewrapped });
  }
  const firstHeads = await headsPass(1);

  const retired: string[] = [];
  for (const id of await storage.secrets.keyCheckIds()) {
    if (id === keyring.activeId || keptKeyIds.has(id)) continue;
    if (await storage.secrets.deleteKeyCheck(id)) retired.push(id);
  }

  let lateWrites = 0;
  const lateKeys = new Set<string>();
  for (const source of sources) {
    const done = await pass(source, 2);
    lateWrites += done.rewrapped;
    for (const id of done.movedOff) lateKeys.add(id);
  }
  const lateHeads = await headsPass(2);
  lateWrites += lateHeads.resigned;
  for (const id of lateHeads.movedOff) lateKeys.add(id);
  for (const id of lateKeys) {
    keptKeyIds.add(id);
    // Only a key of this keyring can have sealed what was just re-wrapped, so its check can be written again.
    await putKeyCheckOf(storage.secrets, keyring, id);
  }
  const retiredKeyIds = retired.filter((id) => !keptKeyIds.has(id));
  return {
    activeKeyId: keyring.activeId,
    sealedPlaintext,
    sources: first,
    auditHeads: { heads: firstHeads.heads, resigned: firstHeads.resigned, unverified: firstHeads.unverified },
    retiredKeyIds,
    keptKeyIds: [...keptKeyIds].sort(),
    failed: failedRefs.size,
    failures,
    lateWrites,
    complete: failedRefs.size === 0 && lateKeys.size === 0,
  };
}
