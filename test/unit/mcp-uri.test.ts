import { describe, expect, it } from 'vitest';
import { covers, formatMcpUri, governingCandidates, isWildcard, parseMcpUri, resourceTypeOf } from '../../src/core/mcp-access/mcp-uri.ts';

describe('MCP resource URIs', () => {
  it('reads the six patterns of the spec and writes them back', () => {
    const cases = [
      ['svc://secrets/prod/db-password', { kind: 'secret', environment: 'prod', name: 'db-password' }, 'secret'],
      ['svc://secrets/prod/db.primary', { kind: 'secret', environment: 'prod', name: 'db.primary' }, 'secret'],
      ['svc://secrets/prod/*', { kind: 'environment-secrets', environment: 'prod' }, 'secret'],
      ['svc://secrets/*', { kind: 'all-secrets' }, 'secret'],
      ['svc://api-keys/key_AbC123', { kind: 'api-key', id: 'key_AbC123' }, 'api-key'],
      ['svc://api-keys/*', { kind: 'all-api-keys' }, 'api-key'],
      ['svc://custom/config/feature-flags.v2', { kind: 'custom', customType: 'config', id: 'feature-flags.v2' }, 'custom'],
    ] as const;
    for (const [text, parsed, type] of cases) {
      const uri = parseMcpUri(text);
      expect(uri, text).toEqual(parsed);
      expect(formatMcpUri(uri!)).toBe(text);
      expect(resourceTypeOf(uri!)).toBe(type);
      expect(isWildcard(uri!), text).toBe(text.endsWith('*'));
    }
  });

  it('refuses anything else', () => {
    for (const text of [
      '', 'svc://', 'svc://secrets', 'svc://secrets/', 'svc://secrets/prod', 'svc://secrets/prod/', 'svc://secrets/*/db', 'svc://secrets/prod/a/b',
      'svc://secrets/pr.od/db', 'svc://secrets/prod/db*', 'svc://secrets/prod/.hidden', 'svc://secrets/prod/has space', 'svc://secrets/**',
      'svc://api-keys/', 'svc://api-keys/key_1/x', 'svc://api-keys/key-1', 'svc://custom/config', 'svc://custom/config/*', 'svc://custom/*',
      'svc://custom/Config/x', 'svc://other/x', 'SVC://secrets/*', 'https://secrets/prod/db', 'svc://secrets/prod/db%2Fx', ' svc://secrets/*',
      `svc://secrets/prod/${'a'.repeat(124)}`, `svc://custom/t/${'a'.repeat(65)}`,
    ]) expect(parseMcpUri(text), text).toBeNull();
    // A secret name holds at most 128 characters, environment and dot included.
    expect(parseMcpUri(`svc://secrets/prod/${'a'.repeat(123)}`)).not.toBeNull();
  });

  it('names the registrations that may govern a URI, most specific first, and which patterns cover which URIs', () => {
    const uri = (text: string) => parseMcpUri(text)!;
    expect(governingCandidates(uri('svc://secrets/prod/db'))).toEqual(['svc://secrets/prod/db', 'svc://secrets/prod/*', 'svc://secrets/*']);
    expect(governingCandidates(uri('svc://secrets/prod/*'))).toEqual(['svc://secrets/prod/*', 'svc://secrets/*']);
    expect(governingCandidates(uri('svc://api-keys/key_1'))).toEqual(['svc://api-keys/key_1', 'svc://api-keys/*']);
    expect(governingCandidates(uri('svc://custom/t/x'))).toEqual(['svc://custom/t/x']);
    expect(covers(uri('svc://secrets/*'), uri('svc://secrets/prod/db'))).toBe(true);
    expect(covers(uri('svc://secrets/prod/*'), uri('svc://secrets/prod/db'))).toBe(true);
    expect(covers(uri('svc://secrets/prod/db'), uri('svc://secrets/prod/db'))).toBe(true);
    expect(covers(uri('svc://secrets/staging/*'), uri('svc://secrets/prod/db'))).toBe(false);
    expect(covers(uri('svc://secrets/prod/db'), uri('svc://secrets/prod/db2'))).toBe(false);
    expect(covers(uri('svc://secrets/prod/db'), uri('svc://secrets/prod/*'))).toBe(false);
    expect(covers(uri('svc://api-keys/*'), uri('svc://secrets/prod/db'))).toBe(false);
  });
});
