import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OAuthClient, OAuthCode, OAuthGrant, OAuthToken } from '../../src/core/oauth/oauth.types.ts';
import type { Storage } from '../../src/core/storage.port.ts';

const t0 = Date.UTC(2026, 5, 1);
const at = (seconds: number) => new Date(t0 + seconds * 1000);
const digest = () => randomBytes(32).toString('hex');

const client = (over: Partial<OAuthClient> = {}): OAuthClient => ({
  id: `mcl_${randomBytes(8).toString('hex')}`, name: 'Claude', redirectUris: ['https://claude.ai/api/mcp/auth_callback', 'http://127.0.0.1:9/cb'], createdAt: at(0), ...over,
});
const codeFor = (c: OAuthClient, over: Partial<OAuthCode['grant']> = {}): OAuthCode => ({
  digest: digest(), clientId: c.id, redirectUri: c.redirectUris[0]!, codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', resource: 'https://m.example.com/mcp',
  grant: {
    id: `ogr_${randomBytes(8).toString('hex')}`, clientId: c.id, tenantId: 't1', mode: 'live', workspace: 'default', keyId: 'key_1', userId: 'alice',
    scopes: ['memories:read', 'mcp:access'], ...over,
  },
  createdAt: at(0), expiresAt: at(60), usedAt: null,
});
const grantOf = (code: OAuthCode, createdAt = at(1)): OAuthGrant => ({ ...code.grant, createdAt, lastUsedAt: null, revokedAt: null });
const tokensOf = (grantId: string, now = at(1)): OAuthToken[] => [
  { digest: digest(), grantId, kind: 'access', createdAt: now, expiresAt: at(3600), usedAt: null },
  { digest: digest(), grantId, kind: 'refresh', createdAt: now, expiresAt: at(86_400), usedAt: null },
];

/** OAuth clients, codes, grants and tokens (core/oauth): single use of codes and refresh tokens, even under concurrency. */
export function describeOAuthContract(current: () => Storage, connections: () => Promise<Storage[]>): void {
  describe('oauth', () => {
    it('stores clients and codes, and redeems a code once with its grant and tokens', async () => {
      const repo = current().oauth;
      const c = client();
      await repo.insertClient(c);
      expect(await repo.findClient(c.id)).toEqual(c);
      expect(await repo.findClient('mcl_missing')).toBeNull();
      const code = codeFor(c);
      await repo.insertCode(code);
      expect(await repo.findCode(code.digest)).toEqual(code);
      expect(await repo.findCode(digest())).toBeNull();

      // A code is redeemed once: the grant and its tokens are stored with the first redemption only.
      const grant = grantOf(code);
      const tokens = tokensOf(grant.id);
      expect(await repo.redeemCode(code.digest, at(1), grant, tokens)).toBe(true);
      expect(await repo.redeemCode(code.digest, at(2), { ...grant, id: 'ogr_other' }, tokensOf('ogr_other'))).toBe(false);
      expect(await repo.findGrant('ogr_other')).toBeNull();
      expect((await repo.findCode(code.digest))!.usedAt).toEqual(at(1));
      expect(await repo.findGrant(grant.id)).toEqual(grant);
      expect(await repo.findToken(tokens[0]!.digest)).toEqual({ token: tokens[0], grant });
      expect(await repo.findToken(tokens[1]!.digest)).toEqual({ token: tokens[1], grant });
      expect(await repo.findToken(digest())).toBeNull();
    });

    it('lets exactly one of concurrent redemptions and refreshes win', async () => {
      const stores = await connections();
      const c = client();
      await current().oauth.insertClient(c);
      const code = codeFor(c);
      await current().oauth.insertCode(code);
      const grants = [0, 1, 2, 3].map((i) => ({ ...grantOf(code), id: `${code.grant.id}_${i}` }));
      const redeemed = await Promise.all(grants.map((g, i) => stores[i % stores.length]!.oauth.redeemCode(code.digest, at(1), g, tokensOf(g.id))));
      expect(redeemed.filter(Boolean)).toHaveLength(1);
      const winner = grants[redeemed.indexOf(true)]!;
      const stored = (await Promise.all(grants.map((g) => current().oauth.findGrant(g.id)))).filter((g) => g !== null);
      expect(stored.map((g) => g.id)).toEqual([winner.id]);

      // A second grant, redeemed with a known refresh token, which concurrent refreshes then race for.
      const spare = codeFor(c, { id: `${winner.id}_r` });
      await current().oauth.insertCode(spare);
      const first = tokensOf(spare.grant.id);
      await current().oauth.redeemCode(spare.digest, at(1), grantOf(spare), first);
      const rotated = await Promise.all([0, 1, 2, 3].map((i) =>
        stores[i % stores.length]!.oauth.rotateRefresh(first[1]!.digest, at(5), tokensOf(spare.grant.id, at(5)))));
      expect(rotated.filter(Boolean)).toHaveLength(1);
      expect((await current().oauth.findToken(first[1]!.digest))!.token.usedAt).toEqual(at(5));
      expect(await current().oauth.rotateRefresh(first[0]!.digest, at(6), tokensOf(spare.grant.id))).toBe(false);
    });

    it('touches and revokes grants, and lists an owner\'s live grants newest first with their client\'s name', async () => {
      const repo = current().oauth;
      const c = client({ name: 'ChatGPT' });
      await repo.insertClient(c);
      const made: OAuthGrant[] = [];
      const issued: OAuthToken[][] = [];
      for (const [i, over] of ([[1, {}], [2, {}], [3, { mode: 'test' }], [4, { tenantId: 't2' }]] as const).entries()) {
        const code = codeFor(c, over[1]);
        await repo.insertCode(code);
        const grant = grantOf(code, at(over[0]));
        issued[i] = tokensOf(grant.id);
        await repo.redeemCode(code.digest, at(over[0]), grant, issued[i]!);
        made[i] = grant;
      }
      await repo.touchGrant(made[0]!.id, at(100));
      expect((await repo.findGrant(made[0]!.id))!.lastUsedAt).toEqual(at(100));
      const listed = await repo.listGrants({ tenantId: 't1', mode: 'live' });
      expect(listed.map((g) => g.id)).toEqual([made[1]!.id, made[0]!.id]);
      expect(listed[0]).toEqual({ ...made[1], clientName: 'ChatGPT' });
      expect(await repo.revokeGrant(made[1]!.id, at(200))).toBe(true);
      expect(await repo.revokeGrant(made[1]!.id, at(201))).toBe(false);
      expect(await repo.revokeGrant('ogr_missing', at(201))).toBe(false);
      expect((await repo.findGrant(made[1]!.id))!.revokedAt).toEqual(at(200));
      expect((await repo.listGrants({ tenantId: 't1', mode: 'live' })).map((g) => g.id)).toEqual([made[0]!.id]);
      expect((await repo.listGrants({ tenantId: 't1', mode: 'test' })).map((g) => g.id)).toEqual([made[2]!.id]);

      // Pruning drops what expired (each grant's code at 60 s, access token at 3600 s), never a live token.
      expect(await repo.pruneExpired(at(3601))).toBe(8);
      expect(await repo.pruneExpired(at(3601))).toBe(0);
      expect(await repo.findToken(issued[0]![0]!.digest)).toBeNull();
      expect(await repo.findToken(issued[0]![1]!.digest)).toEqual({ token: issued[0]![1], grant: { ...made[0], lastUsedAt: at(100) } });
    });
  });
}
