import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may reach (SSRF guard). Only public unicast addresses are allowed: every range
 * ipaddr.js names (private, loopback, link-local, multicast, unspecified, broadcast, reserved, carrier-grade NAT,
 * documentation, benchmarking, unique-local, …) is refused unless it lies inside one of the operator's allow CIDRs
 * (`MNEMO_WEBHOOK_ALLOW_CIDRS`).
 *
 * IPv6 addresses that carry an IPv4 address are judged as the IPv4 address(es) they carry, because a connection to
 * them can end at that IPv4 host: IPv4-mapped `::ffff:a.b.c.d`, the deprecated IPv4-compatible `::a.b.c.d`
 * (`::/96`, except `::` and `::1`, which are their own ranges), NAT64 `64:ff9b::/96`, 6to4 `2002:AABB:CCDD::/48`
 * (IPv4 in bits 16-47) and Teredo `2001:0::/32` (server IPv4 in bits 32-63, client IPv4 in bits 96-127 inverted;
 * both must pass). Such an address is allowed when the address itself is allow-listed, or when every IPv4 it carries
 * would be allowed on its own (public unicast, or inside an IPv4 allow CIDR) — never for its own prefix, which
 * ipaddr.js files as a special range. The local-use NAT64 block `64:ff9b:1::/48` has no fixed IPv4 position, so it
 * is refused like any special range unless allow-listed; so is the IPv4-translated `::ffff:0:a.b.c.d`.
 *
 * These functions are pure (no DNS). `checkWebhookUrl` lets the management routes refuse obviously bad URLs at
 * creation and update; the decisive check happens at delivery time, on every address the host name resolves to
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

const NAT64 = ipaddr.IPv6.parse('64:ff9b::');
const SIX_TO_FOUR = ipaddr.IPv6.parse('2002::');
const TEREDO = ipaddr.IPv6.parse('2001::');

const ipv4FromWords = (high: number, low: number): ipaddr.IPv4 =>
  new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 addresses an IPv6 address carries by a translation or tunnelling convention, with the convention's name. */
function carriedIPv4(addr: ipaddr.IPv6): { form: string; ipv4s: ipaddr.IPv4[] } | null {
  const w = addr.parts;
  const zeroUpTo = (end: number) => w.slice(0, end).every((x) => x === 0);
  if (zeroUpTo(6) && !(w[6] === 0 && w[7]! <= 1)) return { form: 'IPv4-compatible', ipv4s: [ipv4FromWords(w[6]!, w[7]!)] };
  if (addr.match(NAT64, 96)) return { form: 'NAT64', ipv4s: [ipv4FromWords(w[6]!, w[7]!)] };
  if (addr.match(SIX_TO_FOUR, 16)) return { form: '6to4', ipv4s: [ipv4FromWords(w[1]!, w[2]!)] };
  if (addr.match(TEREDO, 32)) {
    return { form: 'Teredo', ipv4s: [ipv4FromWords(w[2]!, w[3]!), ipv4FromWords(~w[6]! & 0xffff, ~w[7]! & 0xffff)] };
  }
  return null;
}

/** Why an address may not be contacted, or null when it may. */
export function checkAddress(ip: string, allowCidrs: readonly string[]): string | null {
  const addr = parseAddress(ip);
  if (!addr) return `${ip} is not an IP address`;
  return checkParsed(addr, allowCidrs);
}

function checkParsed(addr: Address, allowCidrs: readonly string[]): string | null {
  if (inAllowList(addr, allowCidrs)) return null;
  if (addr.kind() === 'ipv6') {
    const carried = carriedIPv4(addr as ipaddr.IPv6);
    if (carried) {
      for (const ipv4 of carried.ipv4s) {
        const reason = checkParsed(ipv4, allowCidrs);
        if (reason !== null) return `${addr.toString()} (${carried.form}) carries ${reason}`;
      }
      return null;
    }
  }
  const range = addr.range();
  return range === 'unicast' ? null : `${addr.toString()} is a ${range} address (not allowed for webhooks; see MNEMO_WEBHOOK_ALLOW_CIDRS)`;
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
