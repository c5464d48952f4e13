import { createHash } from 'node:crypto';

/**
 * What "identical content" means for deduplication (G1 `dedupe: true`): the content after Unicode NFC
 * normalisation, with leading and trailing whitespace removed and every run of whitespace inside collapsed to one
 * space. Case, punctuation and the title are significant. Every store keeps this digest (SHA-256, hex) beside each
 * memory, written with the content, so a duplicate is found by an index lookup.
 */
export function normalizeContent(content: string): string {
  return content.normalize('NFC').trim().replace(/\s+/gu, ' ');
}

export function contentHash(content: string): string {
  return createHash('sha256').update(normalizeContent(content), 'utf8').digest('hex');
}
