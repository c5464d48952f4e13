import { lookup } from 'node:dns/promises';
import { checkAddress, ipLiteralOf, isLocalhostName } from '../../core/webhooks/address-policy.ts';

export { checkAddress, checkWebhookUrl, parseAllowCidrs } from '../../core/webhooks/address-policy.ts';

/** Resolves a host name to all its addresses (injectable so tests can simulate any DNS answer). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

export type VettedDestination =
  | { ok: true; address: string; family: 4 | 6 }
  | { ok: false; reason: string };

/**
 * The decisive SSRF check, made at delivery time: resolve the host and refuse if ANY of its addresses is not allowed
 * (a name that also resolves to 10.0.0.1 could be picked by the connect). The caller must then connect to the
 * returned address itself, never resolve again, so a DNS answer that changes in between (rebinding) cannot matter.
 */
export async function vetDestination(
  hostname: string, allowCidrs: readonly string[], resolve: Resolver = systemResolver,
): Promise<VettedDestination> {
  const literal = ipLiteralOf(hostname);
  if (literal !== null) {
    const reason = checkAddress(literal, allowCidrs);
    return reason ? { ok: false, reason: `refused: ${reason}` } : { ok: true, address: literal, family: literal.includes(':') ? 6 : 4 };
  }
  let answers: { address: string; family: number }[];
  if (isLocalhostName(hostname)) {
    // RFC 6761: never ask a resolver about localhost; it is loopback.
    answers = [{ address: '127.0.0.1', family: 4 }];
  } else {
    try {
      answers = await resolve(hostname);
    } catch (err) {
      return { ok: false, reason: `DNS lookup of ${hostname} failed: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
  }
  if (answers.length === 0) return { ok: false, reason: `DNS lookup of ${hostname} returned no address` };
  for (const a of answers) {
    const reason = checkAddress(a.address, allowCidrs);
    if (reason) return { ok: false, reason: `refused: ${hostname} resolves to ${reason}` };
  }
  const first = answers[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}
