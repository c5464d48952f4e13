import { createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { auditCanonicalForm, auditRowHash, GENESIS_HASH, linkAuditRow } from '../../src/core/audit/audit.hash.ts';
import {
  auditHeadCanonicalForm, createAuditHeadSigner, nextAuditHead, type SignedAuditHead, type StoredAuditHead,
} from '../../src/core/audit/audit.head.ts';
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

const MASTER = Buffer.alloc(32, 7);
const signer = createAuditHeadSigner({ activeId: 'mk_test', keys: new Map([['mk_test', MASTER]]) });
const SIGNED_AT = new Date('2026-06-02T00:00:00.000Z');

/** The signed head of each chain of `rows` (its last row), as storage keeps them. */
function headsOf(rows: AuditRow[]): SignedAuditHead[] {
  const last = new Map<string, AuditRow>();
  for (const r of rows) if ((last.get(`${r.owner.tenantId}/${r.owner.mode}`)?.seq ?? 0) < r.seq) last.set(`${r.owner.tenantId}/${r.owner.mode}`, r);
  return [...last.values()].map((r) => signer.sign(r.owner, r, SIGNED_AT));
}

/** An AuditRepository's scan and heads over rows in memory (sorted as storage sorts them); heads default to the rows' own. */
function scanOf(rows: AuditRow[], heads: StoredAuditHead[] = headsOf(rows)) {
  const key = (r: AuditPosition) => [r.tenantId, r.mode, String(r.seq).padStart(12, '0')].join('\u0000');
  const sorted = [...rows].sort((a, b) => (key({ ...a.owner, seq: a.seq }) < key({ ...b.owner, seq: b.seq }) ? -1 : 1));
  const ownerKey = (o: AuditOwner) => `${o.tenantId}\u0000${o.mode}`;
  const sortedHeads = [...heads].sort((a, b) => (ownerKey(a.owner) < ownerKey(b.owner) ? -1 : 1));
  return {
    async scan(after: AuditPosition | null, limit: number) {
      return sorted.filter((r) => after === null || key({ ...r.owner, seq: r.seq }) > key(after)).slice(0, limit);
    },
    async heads(after: AuditOwner | null, limit: number) {
      return sortedHeads.filter((h) => after === null || ownerKey(h.owner) > ownerKey(after)).slice(0, limit);
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
    const result = await verifyAuditChains(scanOf(rows), signer, { pageSize: 2 });
    expect(result).toMatchObject({ ok: true, rows: 8, broken: [] });
    expect(result.intact.map((c) => [c.owner.tenantId, c.owner.mode, c.rows, c.headSeq])).toEqual([
      ['acme', 'live', 5, 5], ['acme', 'test', 1, 1], ['zeta', 'live', 2, 2],
    ]);
    expect(result.intact[0]!.headHash).toBe(rows[6]!.hash);
    expect(await verifyAuditChains(scanOf([]), signer)).toEqual({ ok: true, rows: 0, intact: [], broken: [] });
  });

  it('finds an edited row, a deleted row, an inserted row and moved rows, in the chain they break only', async () => {
    const verify = async (tampered: AuditRow[]) => {
      // The heads as they were before the tampering: what a row-level change leaves (the head is checked after the rows).
      const result = await verifyAuditChains(scanOf([...tampered, ...chain(other, 3)], headsOf([...rows, ...chain(other, 3)])), signer, { pageSize: 3 });
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

describe('signed chain heads (core/audit/audit.head.ts)', () => {
  it('MACs the documented form under the HKDF-derived key, as an outsider computes it (vector from Python hmac + hashlib)', () => {
    const head = signer.sign(acme, { seq: 5, hash: 'ab'.repeat(32) }, SIGNED_AT);
    expect(auditHeadCanonicalForm(head)).toBe(`["mnemo-audit-head-v1","acme","live",5,"${'ab'.repeat(32)}","mk_test","2026-06-02T00:00:00.000Z"]`);
    // HKDF-SHA256 (RFC 5869) by hand in Python: extract with 32 zero bytes as the empty salt, one block of expand.
    expect(head).toEqual({ owner: acme, seq: 5, hash: 'ab'.repeat(32), keyId: 'mk_test', signedAt: SIGNED_AT, mac: 'af603f7db4847736943b7ea509053094cb5c24fe1d02e0c6f6e1e9d9446c1d3c' });
    const key = Buffer.from(hkdfSync('sha256', MASTER, Buffer.alloc(0), 'mnemo-audit-head-v1', 32));
    expect(createHmac('sha256', key).update(auditHeadCanonicalForm(head)).digest('hex')).toBe(head.mac);
    expect(signer.check(head)).toBe('valid');
    for (const changed of [{ seq: 4 }, { hash: 'cd'.repeat(32) }, { signedAt: new Date(0) }, { owner: sandbox }, { mac: 'f'.repeat(64) }]) {
      expect(signer.check({ ...head, ...changed }), JSON.stringify(changed)).toBe('forged');
    }
    expect(signer.check({ ...head, keyId: 'mk_gone' })).toBe('unknown_key');
    // Any key of the keyring checks its own heads; the active one signs.
    const rotated = createAuditHeadSigner({ activeId: 'mk_new', keys: new Map([['mk_new', Buffer.alloc(32, 9)], ['mk_test', MASTER]]) });
    expect(rotated.check(head)).toBe('valid');
    expect(rotated.sign(acme, head, SIGNED_AT).keyId).toBe('mk_new');
  });

  it('replaces a head only when it verifies and names the chain\'s end; a new chain and an unsigned head get one', () => {
    const rows = chain(acme, 3);
    const [second, third] = [rows[1]!, rows[2]!];
    const signedAt2 = signer.sign(acme, second, second.timestamp);
    const next = signer.sign(acme, third, third.timestamp);
    expect(nextAuditHead(null, null, rows[0]!, signer)).toEqual(signer.sign(acme, rows[0]!, rows[0]!.timestamp));
    expect(nextAuditHead(signedAt2, second, third, signer)).toEqual(next);
    expect(nextAuditHead({ ...signedAt2, keyId: null, signedAt: null, mac: null }, second, third, signer)).toEqual(next);
    // Rows but no head (deleted), a head past the end, a forged head: left as they are.
    expect(nextAuditHead(null, second, third, signer)).toBeNull();
    expect(nextAuditHead(signer.sign(acme, third, SIGNED_AT), second, third, signer)).toBeNull();
    expect(nextAuditHead({ ...signedAt2, mac: '0'.repeat(64) }, second, third, signer)).toBeNull();
  });
});

describe('verifyAuditChains: signed heads and heads kept elsewhere', () => {
  const rows = chain(acme, 5);
  const others = chain(other, 2);
  const verify = (scanned: AuditRow[], heads: StoredAuditHead[], since?: SignedAuditHead[]) =>
    verifyAuditChains(scanOf([...scanned, ...others], [...heads, ...headsOf(others)]), signer, { pageSize: 2, ...(since ? { since } : {}) });
  const headAt = (n: number, of = rows) => signer.sign(of[n - 1]!.owner, of[n - 1]!, SIGNED_AT);

  it('passes chains whose signed heads name their last rows, and kept heads their chains still reach', async () => {
    expect(await verify(rows, [headAt(5)], [headAt(2), headAt(5), headAt(1, others)])).toMatchObject({ ok: true, rows: 7, broken: [] });
  });

  it('names each kind of head finding, with the chain\'s last row and the head compared', async () => {
    const first = async (scanned: AuditRow[], heads: StoredAuditHead[], since?: SignedAuditHead[]) => {
      const result = await verify(scanned, heads, since);
      expect(result.ok).toBe(false);
      expect(result.intact.map((c) => c.owner.tenantId)).toEqual(['zeta']);
      expect(result.broken).toHaveLength(1);
      return result.broken[0]!;
    };
    expect(await first(rows.slice(0, 3), [headAt(5)])).toEqual({
      owner: acme, seq: 3, id: rows[2]!.id, reason: 'truncated', head: { seq: 5, hash: rows[4]!.hash },
      message: `its signed head is row 5 but the chain ends at row 3 (${rows[2]!.id}): rows 4-5 were cut from its end`,
    });
    expect(await first(rows.slice(0, 4), [headAt(5)])).toMatchObject({ reason: 'truncated', message: expect.stringContaining('row 5 was cut') });
    expect(await first(rows, [headAt(4)])).toMatchObject({ seq: 5, reason: 'head_mismatch', message: `row 5 (${rows[4]!.id}) follows its signed head (row 4): appended without the master key` });
    expect(await first(rows, [headAt(2)])).toMatchObject({ reason: 'head_mismatch', message: expect.stringContaining(`rows 3-5 (up to ${rows[4]!.id}) follow`) });
    expect(await first(rows, [])).toMatchObject({ seq: 5, id: rows[4]!.id, reason: 'head_missing' });
    expect(await first(rows, [{ ...headAt(5), keyId: null, signedAt: null, mac: null }])).toMatchObject({ reason: 'head_missing', message: expect.stringContaining('not signed yet') });
    expect(await first(rows, [{ ...headAt(5), mac: '0'.repeat(64) }])).toMatchObject({ reason: 'head_forged' });
    expect(await first([], [headAt(5)])).toEqual({
      owner: acme, seq: 0, id: null, reason: 'chain_missing', head: { seq: 5, hash: rows[4]!.hash },
      message: 'its signed head is row 5 but the chain has no rows: the whole chain was deleted',
    });
    // Rewritten from row 3 on with fresh hashes: every link holds, the head's hash does not.
    const rewritten = [...rows.slice(0, 2)];
    for (const r of rows.slice(2)) rewritten.push(linkAuditRow({ ...r, resource: 'secret:other' }, rewritten.at(-1)!));
    expect(await first(rewritten, [headAt(5)])).toMatchObject({ seq: 5, reason: 'head_mismatch', message: expect.stringContaining('the chain was rewritten') });
    // A rewritten chain with a head made for it passes alone (someone with the key), but not against a kept head.
    const rewrittenHead = headAt(5, rewritten);
    expect((await verify(rewritten, [rewrittenHead])).ok).toBe(true);
    expect(await first(rewritten, [rewrittenHead], [headAt(4)])).toMatchObject({ seq: 5, reason: 'head_mismatch', head: { seq: 4, hash: rows[3]!.hash } });
    // Rolled back (rows and head both older), deleted with its head, or against a forged kept head.
    expect(await first(rows.slice(0, 3), [headAt(3)], [headAt(5)])).toMatchObject({ seq: 3, reason: 'truncated', message: expect.stringContaining('rolled back') });
    expect(await first([], [], [headAt(5)])).toMatchObject({ seq: 0, id: null, reason: 'chain_missing', message: expect.stringContaining('the kept head is row 5') });
    expect(await first(rows, [headAt(5)], [{ ...headAt(2), seq: 3 }])).toMatchObject({ seq: 5, reason: 'head_forged', message: expect.stringContaining('the kept head of row 3 does not verify') });
    expect(await first(rows, [headAt(5)], [{ ...headAt(2), keyId: 'mk_old' }])).toMatchObject({ reason: 'head_forged', message: expect.stringContaining('mk_old, which the keyring does not hold') });
    // A broken link is the chain's first finding, before its head's.
    expect(await first(rows.filter((r) => r.seq !== 2).slice(0, 3), [headAt(5)])).toMatchObject({ seq: 3, reason: 'missing_rows' });
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
