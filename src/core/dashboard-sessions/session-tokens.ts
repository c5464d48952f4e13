import { randomBytes } from 'node:crypto';
import { digestKey } from '../api-keys/api-key.format.ts';

/** A fresh 256-bit token, URL-safe: session ids and CSRF tokens. */
export const randomToken = (): string => randomBytes(32).toString('base64url');

/** How a session id is stored: its SHA-256 (as API keys are), so the store never holds a live cookie. */
export const sessionIdDigest = digestKey;
