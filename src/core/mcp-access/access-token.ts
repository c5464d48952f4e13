import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

/**
 * The access token an approval issues (`mcp_at_` + 40 base62 characters, 238 random bits). It is shown once, in the
 * answer that approves, and never stored: only its SHA-256 digest, which a read looks up and compares in constant
 * time. It opens only what its approval names, for its requester, until the approval's expiresAt.
 */
const TOKEN = /^mcp_at_[0-9A-Za-z]{40}$/;

export const generateAccessToken = (): string => `mcp_at_${randomBase62(40)}`;

/** Whether the text has a token's shape (anything else is refused without a look-up). */
export const isAccessTokenText = (text: string): boolean => TOKEN.test(text);

export const digestAccessToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
