import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Helpers for services that RECEIVE Mnemo's webhooks. Self-contained (node:crypto only): copy this file into a
 * receiver as it is. Always verify the raw request body exactly as received, before any JSON parsing.
 *
 * - G10 deliveries (`/v1/webhooks`) and G11 deliveries (`/v1/security/webhooks`): `X-Service-Signature:
 *   t=<unix>,v1=<hex>` — use `verifyMnemoSignature`. It is Stripe's scheme, so Stripe's own verifier accepts it too.
 * - G9 deliveries (`/api/v1/webhooks`): `X-Service-Signature: <hex>` — use `verifyMemoryEventSignature`; they
 *   also carry Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) that any
 *   Standard Webhooks library verifies, with replay protection.
 * Deliveries are at-least-once: drop a repeated event `id`.
 */

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

const hexHmac = (secret: string, text: string): string => createHmac('sha256', secret).update(text, 'utf8').digest('hex');

/** Constant-time comparison of two hex digests (different lengths are simply unequal). */
function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

const text = (payload: string | Buffer): string => (typeof payload === 'string' ? payload : payload.toString('utf8'));

/**
 * Verifies a G10 delivery. Returns true, or throws WebhookVerificationError saying why: a malformed header, a
 * timestamp more than `toleranceSeconds` (default 300) before or after `now`, or no matching `v1` signature
 * (several `v1=` values are accepted, as during a secret rotation).
 */
export function verifyMnemoSignature(input: {
  payload: string | Buffer;
  header: string | undefined;
  secret: string;
  toleranceSeconds?: number;
  now?: Date;
}): true {
  const { header, secret } = input;
  if (!header) throw new WebhookVerificationError('missing X-Service-Signature header');
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d+$/.test(value)) timestamp = Number(value);
    else if (key === 'v1') signatures.push(value);
  }
  if (timestamp === null || signatures.length === 0) {
    throw new WebhookVerificationError('malformed X-Service-Signature header (expected t=<unix>,v1=<hex>)');
  }
  const tolerance = input.toleranceSeconds ?? 300;
  const now = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(`timestamp is more than ${tolerance} s away from now`);
  }
  const expected = hexHmac(secret, `${timestamp}.${text(input.payload)}`);
  if (!signatures.some((s) => sameHex(expected, s))) throw new WebhookVerificationError('signature does not match');
  return true;
}

/**
 * Verifies a G9 delivery's `X-Service-Signature` (hex HMAC-SHA256 of the body keyed with the secret). It carries
 * no timestamp: for replay protection verify the Standard Webhooks headers, or drop event ids already seen.
 */
export function verifyMemoryEventSignature(input: { payload: string | Buffer; signature: string | undefined; secret: string }): boolean {
  if (!input.signature) return false;
  return sameHex(hexHmac(input.secret, text(input.payload)), input.signature.trim());
}
