import { describe, expect, it } from 'vitest';
import { auditCanonicalForm, auditRowHash, GENESIS_HASH, linkAuditRow } from '../../src/core/audit/audit.hash.ts';
import { cleanAuditMetadata, cleanAuditText } from '../../src/core/audit/audit.rules.ts';
import type { AuditEntry, AuditOwner, AuditPosition, AuditRow } from '../../src/core/audit/audit.types.ts';
import { verifyAuditChains } from '../../src/core/audit/audit.verifier.ts';
import { parse } from 'csv-parse/sync';
import { toAuditCsv } from '../../src/surfaces/g11-security/audit-mappers.ts';

const entry = (owner: AuditOwner, n: number, over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: `aud_${String(n).padStart(24, '0')}`, owner, timestamp: new Date(Date.UTC(2026, 5, 1, 12, 0, n)),
  actor: { userId: 'user-1', keyId: 'key_abc' }, action: 'secret.read', resource: `secret:s${n}`, outcome: 'success', status: 200,
  ip: '127.0.0.1', userAgent: null, region: null, requestId: `req_${n}`, metadata: {}, ...over,
});

/** A chain built the way storage builds it: each row linked to the one before. */
function chain(owner: AuditOwner, length: number): AuditRow[] {
  const rows: AuditRow[] = [];
  for (let n = 1; n <= length; n++) rows.push(linkAuditRow(entry(owner, n), rows.at(-1) ?? null));
  return rows;
}

/** An AuditRepository's scan over rows in memory (sorted as storage sorts them). */
function scanOf(rows: AuditRow[]) {
  const key = (r: AuditPosition) => [r.tenantId, r.mode, String(r.seq).padStart(12, '0')].join('\u0000');
  const sorted = [...rows].sort((a, b) => (key({ ...a.owner, seq: a.seq }) < key({ ...b.owner, seq: b.seq }) ? -1 : 1));
  return {
    async scan(after: AuditPosition | null, limit: number) {
      return sorted.filter((r) => after === null || key({ ...r.owner, seq: r.seq }) > key(after)).slice(0, limit);
    },
  };
}

const acme: AuditOwner = { tenantId: 'acme', mode: 'live' };
const sandbox: AuditOwner = { tenantId: 'acme', mode: 'test' };
const other: AuditOwner = { tenantId: 'zeta', mode: 'live' };

describe('audit hash chain (core/audit)', () => {
  it('hashes the documented canonical form, as an outsider computes it (vector from Python json + hashlib)', () => {
    const row = {
      ...entry(acme, 1, {
        id: 'aud_000000000000000000000001', timestamp: new Date('2026-06-01T12:00:00.000Z'), resource: 'secret:db-password',
        userAgent: 'curl/8 "quoted" \u00e9\u2028\t', requestId: 'req_1', metadata: { version: 2, b: true, a: 'x' },
      }),
      seq: 1, prevHash: GENESIS_HASH,
    };
    expect(auditCanonicalForm(row)).toBe('["mnemo-audit-v1","acme","live",1,"aud_000000000000000000000001","2026-06-01T12:00:00.000Z",'
      + '"user-1","key_abc","secret.read","secret:db-password","success",200,"127.0.0.1","curl/8 \\"quoted\\" \u00e9\u2028\\t",null,"req_1",'
      + `"{\\"a\\":\\"x\\",\\"b\\":true,\\"version\\":2}","${'0'.repeat(64)}"]`);
    // Computed independently: python3 -c 'json.dumps(row, separators=(",", ":"), ensure_ascii=False)' | sha256.
    expect(auditRowHash(row)).toBe('7a1705f2b50ee3cf376478482099fb99aa7a6f89f7079e2a5ca2f99f52aeca6c');
    expect(linkAuditRow(row, null)).toEqual({ ...row, hash: '7a1705f2b50ee3cf376478482099fb99aa7a6f89f7079e2a5ca2f99f52aeca6c' });
  });

  it('links each row to the one before it: seq + 1, prevHash = the previous hash', () => {
    const rows = chain(acme, 3);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(rows[0]!.prevHash).toBe(GENESIS_HASH);
    expect(rows[1]!.prevHash).toBe(rows[0]!.hash);
    expect(rows[2]!.prevHash).toBe(rows[1]!.hash);
    expect(new Set(rows.map((r) => r.hash)).size).toBe(3);
  });

  it('keeps text hashable on every store: well-formed, no NUL, bounded; metadata small scalars only', () => {
    expect(cleanAuditText('a\u0000b\uD800c\uDC00d\uD83D\uDE00', 100)).toBe('a\uFFFDb\uFFFDc\uFFFDd\uD83D\uDE00');
    // Cutting inside a surrogate pair leaves no lone half.
    expect(cleanAuditText('ab\uD83D\uDE00', 3)).toBe('ab\uFFFD');
    expect(cleanAuditMetadata({
      version: 3, ok: true, none: null, name: 'x'.repeat(500), float: 1.5, big: 2 ** 60, nested: { a: 1 }, list: [1], 'bad-key': 1,
    })).toEqual({ version: 3, ok: true, none: null, name: 'x'.repeat(128) });
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i]));
    expect(Object.keys(cleanAuditMetadata(many))).toHaveLength(16);
  });
});

describe('verifyAuditChains', () => {
  it('passes intact chains and names each head, a page at a time', async () => {
    const rows = [...chain(other, 2), ...chain(acme, 5), ...chain(sandbox, 1)];
    const result = await verifyAuditChains(scanOf(rows), { pageSize: 2 });
    expect(result).toMatchObject({ ok: true, rows: 8, broken: [] });
    expect(result.intact.map((c) => [c.owner.tenantId, c.owner.mode, c.rows, c.headSeq])).toEqual([
      ['acme', 'live', 5, 5], ['acme', 'test', 1, 1], ['zeta', 'live', 2, 2],
    ]);
    expect(result.intact[0]!.headHash).toBe(rows[6]!.hash);
    expect(await verifyAuditChains(scanOf([]))).toEqual({ ok: true, rows: 0, intact: [], broken: [] });
  });

  it('finds an edited row, a deleted row, an inserted row and moved rows, in the chain they break only', async () => {
    const verify = async (tampered: AuditRow[]) => {
      const result = await verifyAuditChains(scanOf([...tampered, ...chain(other, 3)]), { pageSize: 3 });
      expect(result.ok).toBe(false);
      expect(result.intact.map((c) => c.owner.tenantId)).toEqual(['zeta']);
      expect(result.broken).toHaveLength(1);
      return result.broken[0]!;
    };
    const rows = chain(acme, 5);

    const edited = rows.map((r) => (r.seq === 3 ? { ...r, resource: 'secret:other' } : r));
    expect(await verify(edited)).toMatchObject({ seq: 3, id: rows[2]!.id, reason: 'hash_mismatch', message: expect.stringContaining('was edited') });

    // Edited and re-hashed: the row itself holds, the next one no longer follows it.
    const rehashed = rows.map((r) => (r.seq === 3 ? { ...r, resource: 'secret:other', hash: auditRowHash({ ...r, resource: 'secret:other' }) } : r));
    expect(await verify(rehashed)).toMatchObject({ seq: 4, reason: 'prev_hash_mismatch' });

    const deleted = rows.filter((r) => r.seq !== 2);
    expect(await verify(deleted)).toMatchObject({ seq: 3, reason: 'missing_rows', message: `row 2 is missing before row 3 (${rows[2]!.id})` });
    expect(await verify(rows.filter((r) => r.seq > 2))).toMatchObject({ seq: 3, reason: 'missing_rows', message: expect.stringContaining('rows 1-2 are missing') });

    // A forged row at seq 3, properly linked to row 2: the rows after it were renumbered and no longer follow.
    const forged = linkAuditRow(entry(acme, 99, { action: 'secret.delete' }), rows[1]!);
    const inserted = [...rows.slice(0, 2), forged, ...rows.slice(2).map((r) => ({ ...r, seq: r.seq + 1 }))];
    expect(await verify(inserted)).toMatchObject({ seq: 4, id: rows[2]!.id, reason: 'prev_hash_mismatch' });

    // A forged row appended at the end, with a made-up hash.
    const appended = [...rows, { ...linkAuditRow(entry(acme, 6), rows[4]!), hash: 'f'.repeat(64) }];
    expect(await verify(appended)).toMatchObject({ seq: 6, reason: 'hash_mismatch' });

    const swapped = rows.map((r) => (r.seq === 2 ? { ...r, seq: 3 } : r.seq === 3 ? { ...r, seq: 2 } : r));
    expect(await verify(swapped)).toMatchObject({ seq: 2, id: rows[2]!.id, reason: 'prev_hash_mismatch' });

    const restarted = rows.map((r) => (r.seq === 1 ? { ...r, prevHash: 'a'.repeat(64) } : r));
    expect(await verify(restarted)).toMatchObject({ seq: 1, reason: 'prev_hash_mismatch', message: expect.stringContaining('genesis') });
  });
});

describe('audit CSV (RFC 4180)', () => {
  it('quotes what needs it, doubles quotes, leaves nulls empty and defuses formulas', () => {
    const row = { ...chain(acme, 1)[0]!, ip: null, userAgent: 'say "hi", two\r\nlines', requestId: '=HYPERLINK("x")', region: '-1' };
    const text = toAuditCsv([row]);
    expect(text).toContain(',,"say ""hi"", two\r\nlines",');
    expect(text).toContain(`,'-1,"'=HYPERLINK(""x"")",`);
    // A real CSV parser reads back every field (the defused ones with their leading ').
    const [header, parsed] = parse(toAuditCsv([row]), { relax_column_count: false }) as string[][];
    expect(parsed![header!.indexOf('userAgent')]).toBe('say "hi", two\r\nlines');
    expect(parsed![header!.indexOf('ip')]).toBe('');
    expect(parsed![header!.indexOf('requestId')]).toBe('\'=HYPERLINK("x")');
    const csv = toAuditCsv(chain(acme, 1));
    expect(csv.split('\r\n')[0]).toBe('id,seq,tenantId,mode,timestamp,userId,keyId,action,resource,outcome,status,ip,userAgent,region,requestId,metadata,prevHash,hash');
    expect(csv.endsWith('\r\n')).toBe(true);
    expect(csv.split('\r\n')).toHaveLength(3);
  });
});
