import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A fresh 256-bit token, URL-safe: session ids and CSRF tokens. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** How a session id is stored: its SHA-256, so the store never holds a live cookie. */
export const sessionIdDigest = (cookieValue: string): string => createHash('sha256').update(cookieValue).digest('hex');

/** Constant-time comparison of two tokens (compared as digests, so their lengths leak nothing either). */
export function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
