import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may reach (SSRF guard). Only public unicast addresses are allowed: every range
 * ipaddr.js names (private, loopback, link-local, multicast, unspecified, broadcast, reserved, carrier-grade NAT,
 * documentation, benchmarking, unique-local, 6to4/Teredo/NAT64 which embed IPv4 addresses, …) is refused unless it
 * lies inside one of the operator's allow CIDRs (`MNEMO_WEBHOOK_ALLOW_CIDRS`). IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`) are judged as the IPv4 address they carry.
 *
 * These functions are pure (no DNS). `checkWebhookUrl` lets the management routes refuse obviously bad URLs at
 * creation; the decisive check happens at delivery time, on every address the host name resolves to
 * (adapters/webhooks/address-guard.ts), because DNS answers can change after creation.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Validates and normalises allow-list entries: CIDRs (`127.0.0.0/8`, `fd00::/8`) or single addresses (taken as
 * /32 or /128). IPv4 must be written as four decimal parts. Throws an Error naming the first bad entry.
 */
export function parseAllowCidrs(entries: string | readonly string[]): string[] {
  const list = typeof entries === 'string' ? entries.split(',') : [...entries];
  const out: string[] = [];
  for (const raw of list) {
    const entry = raw.trim();
    if (entry === '') continue;
    const cidr = entry.includes('/') ? entry : `${entry}/${entry.includes(':') ? 128 : 32}`;
    const valid = cidr.includes(':') ? ipaddr.IPv6.isValidCIDR(cidr) : ipaddr.IPv4.isValidCIDRFourPartDecimal(cidr);
    if (!valid) throw new Error(`"${entry}" is not a CIDR such as 127.0.0.0/8 or fd00::/8`);
    const [net, bits] = ipaddr.parseCIDR(cidr);
    out.push(`${net.toString()}/${bits}`);
  }
  return out;
}

function parseAddress(ip: string): Address | null {
  try {
    // process(): an IPv4-mapped IPv6 address becomes the IPv4 address it carries.
    return ipaddr.process(ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip);
  } catch {
    return null;
  }
}

const inAllowList = (addr: Address, allowCidrs: readonly string[]): boolean =>
  allowCidrs.some((cidr) => {
    const [net, bits] = ipaddr.parseCIDR(cidr);
    return net.kind() === addr.kind() && addr.match(net, bits);
  });

/** Why an address may not be contacted, or null when it may. */
export function checkAddress(ip: string, allowCidrs: readonly string[]): string | null {
  const addr = parseAddress(ip);
  if (!addr) return `${ip} is not an IP address`;
  if (inAllowList(addr, allowCidrs)) return null;
  const range = addr.range();
  if (range === 'unicast') return null;
  return `${addr.toString()} is a ${range} address (not allowed for webhooks; see MNEMO_WEBHOOK_ALLOW_CIDRS)`;
}

/** An IP literal as the WHATWG URL parser leaves it (it already turned `127.1`, `0x7f.1`, `2130706433` into dotted quads). */
export function ipLiteralOf(hostname: string): string | null {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host) ? host : null;
}

/** `localhost` and `*.localhost` always mean loopback (RFC 6761), whatever a resolver says. */
export const isLocalhostName = (hostname: string): boolean => /(^|\.)localhost\.?$/i.test(hostname);

/**
 * Why a webhook URL is unacceptable, or null. Checks the scheme (http or https only) and, when the host is an IP
 * literal or a localhost name, its address. Host names are otherwise accepted here and checked at delivery.
 */
export function checkWebhookUrl(url: string, allowCidrs: readonly string[]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must use http or https';
  if (parsed.hostname === '') return 'has no host';
  const literal = ipLiteralOf(parsed.hostname);
  if (literal !== null) return checkAddress(literal, allowCidrs);
  if (isLocalhostName(parsed.hostname)) return checkAddress('127.0.0.1', allowCidrs);
  return null;
}
