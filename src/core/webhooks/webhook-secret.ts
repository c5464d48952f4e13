import { open, seal, type Keyring } from '../secrets/envelope.ts';
import type { SealedValue } from '../secrets/secret.types.ts';
import type { WebhookRepository } from './webhook.repository.ts';
import type { StoredWebhookSecret, Webhook } from './webhook.types.ts';

/**
 * Webhook signing secrets are sealed like G11 secrets (core/secrets/envelope.ts): storage holds them encrypted under
 * the master keyring, and only the core opens them, to sign a delivery. The context binds a sealed secret to its
 * webhook's tenant, mode and id, so a sealed secret copied onto another webhook's row does not open.
 */
export const webhookSecretContext = (webhook: Pick<Webhook, 'id' | 'scope'>): string[] =>
  ['webhook-secret', webhook.scope.tenantId ?? '', webhook.scope.mode ?? '', webhook.id];

export const sealWebhookSecret = (keyring: Keyring, webhook: Pick<Webhook, 'id' | 'scope'>, secret: string): SealedValue =>
  seal(keyring, webhookSecretContext(webhook), secret);

/** The plaintext to sign with; throws SealedValueError when the keyring cannot open it. */
export function openWebhookSecret(keyring: Keyring, webhook: Pick<Webhook, 'id' | 'scope'>, stored: StoredWebhookSecret): string {
  return 'plaintext' in stored ? stored.plaintext : open(keyring, webhookSecretContext(webhook), stored.sealed);
}

/** How many rows one start-up sealing step reads and rewrites (one transaction each). */
export const WEBHOOK_SECRET_SEALING_BATCH = 200;

/**
 * The data migration behind sealed webhook secrets: seals every signing secret a row still holds in plaintext (rows
 * written before secrets were sealed), a batch per transaction. The schema migration cannot do it, as it has no key,
 * so the app runs this at every start, after the keyring was verified; with nothing left to seal it costs one
 * indexed query. Idempotent, and safe when several nodes start together: a row is replaced only while it still holds
 * the plaintext that was read, so each is sealed once. Returns how many rows this call sealed.
 */
export async function sealPlaintextWebhookSecrets(
  webhooks: Pick<WebhookRepository, 'plaintextSecrets' | 'sealSecrets'>, keyring: Keyring, batch = WEBHOOK_SECRET_SEALING_BATCH,
): Promise<number> {
  let sealed = 0;
  let unsealed: string | null = null;
  for (;;) {
    const rows = await webhooks.plaintextSecrets(batch);
    if (rows.length === 0) return sealed;
    // A row that stays plaintext after its replacement was written would be read again and again.
    if (rows[0]!.id === unsealed) throw new Error(`the signing secret of webhook ${unsealed} could not be sealed`);
    const replaced = await webhooks.sealSecrets(rows.map((r) => ({ id: r.id, plaintext: r.plaintext, sealed: sealWebhookSecret(keyring, r, r.plaintext) })));
    sealed += replaced;
    unsealed = replaced === 0 ? rows[0]!.id : null;
    // Fewer rows than asked: that was the last of them (a row another node sealed meanwhile is simply not counted).
    if (rows.length < batch) return sealed;
  }
}
