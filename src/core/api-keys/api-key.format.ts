import { createHash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62, toBase62 } from '../ids.ts';
import type { KeyMode } from '../scope.ts';

/**
 * Key text: `mnemo_<mode>_<30 base62 random chars (178 bits)><6 base62 chars of CRC32>`, as GitHub and Stripe do.
 * The checksum lets a typo or a foreign token be refused without touching storage.
 */
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const KEY_RE = /^mnemo_(live|test)_([0-9A-Za-z]{36})$/;
export const DISPLAY_PREFIX_LENGTH = 'mnemo_live_'.length + 4;

const checksum = (body: string): string => toBase62(crc32(body), CHECKSUM_LENGTH);

export function generateKeyText(mode: KeyMode): string {
  const body = `mnemo_${mode}_${randomBase62(RANDOM_LENGTH)}`;
  return body + checksum(body);
}

/** The mode of a well-formed key whose checksum holds; null for anything else. */
export function parseKeyText(text: string): { mode: KeyMode } | null {
  const m = KEY_RE.exec(text);
  if (!m) return null;
  const body = text.slice(0, text.length - CHECKSUM_LENGTH);
  if (checksum(body) !== text.slice(-CHECKSUM_LENGTH)) return null;
  return { mode: m[1] as KeyMode };
}

export const digestKey = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Constant-time comparison of two secrets (tokens, CSRF values), through their digests, so lengths leak nothing either. */
export const sameSecret = (a: string, b: string): boolean => digestsEqual(digestKey(a), digestKey(b));

export function digestsEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
