import { describe, expect, it } from 'vitest';
import { checkAddress, checkWebhookUrl, parseAllowCidrs, vetDestination } from '../../src/adapters/webhooks/address-guard.ts';

const hostOf = (url: string) => new URL(url).hostname;
/** The delivery-time check for a URL, with a resolver that must not be asked about IP literals. */
const vet = (url: string, allow: string[] = [], answers?: string[]) =>
  vetDestination(hostOf(url), allow, async () => {
    if (!answers) throw new Error('resolver called for an IP literal');
    return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  });

describe('webhook address guard', () => {
  const refused = [
    'http://127.0.0.1/', 'http://127.1/', 'http://0x7f.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://127.255.255.254:8080/x',
    'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://[::ffff:10.0.0.1]/',
    'http://10.1.2.3/', 'http://172.16.0.1/', 'http://172.31.255.255/', 'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/', 'http://100.64.0.1/', 'http://224.0.0.1/', 'http://0.0.0.0/', 'http://0/',
    'http://255.255.255.255/', 'http://192.0.2.1/', 'http://198.51.100.7/', 'http://203.0.113.9/', 'http://198.18.0.1/', 'http://240.0.0.1/',
    'http://[fc00::1]/', 'http://[fd12:3456::1]/', 'http://[fe80::1]/', 'http://[ff02::1]/', 'http://[::]/', 'http://[2001:db8::1]/',
    'http://[64:ff9b::a00:1]/', 'http://[2002:7f00:1::]/',
  ];

  it.each(refused)('refuses %s at creation and at delivery', async (url) => {
    expect(checkWebhookUrl(url, [])).toMatch(/address/);
    const vetted = await vet(url);
    expect(vetted.ok).toBe(false);
  });

  it('normalises odd IPv4 spellings through the URL parser to the loopback address they mean', () => {
    for (const url of ['http://127.1/', 'http://0x7f.1/', 'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f000001/']) {
      expect(hostOf(url)).toBe('127.0.0.1');
      expect(checkWebhookUrl(url, [])).toMatch(/^127\.0\.0\.1 is a loopback address/);
    }
    expect(checkAddress('::ffff:127.0.0.1', [])).toMatch(/^127\.0\.0\.1 is a loopback address/);
  });

  /** IPv6 forms that carry an IPv4 address, each judged by the IPv4 it carries (Teredo: server and inverted client). */
  const carriers = {
    'IPv4-compatible (::/96)': {
      refused: [
        ['http://[::127.0.0.1]/', /127\.0\.0\.1 is a loopback/], ['http://[::7f00:1]/', /loopback/], ['http://[0:0:0:0:0:0:127.0.0.1]/', /loopback/],
        ['http://[::10.0.0.1]:8080/x', /private/], ['http://[::169.254.169.254]/', /linkLocal/], ['http://[::0.0.0.2]/', /unspecified/],
      ],
      public: ['http://[::8.8.8.8]/'],
    },
    'NAT64 (64:ff9b::/96)': {
      refused: [
        ['http://[64:ff9b::127.0.0.1]/', /loopback/], ['http://[64:ff9b::7f00:1]/', /loopback/], ['http://[64:ff9b::a9fe:a9fe]/', /linkLocal/],
        ['http://[64:ff9b::a00:1]/', /private/], ['http://[64:FF9B:0:0:0:0:192.168.0.1]/', /private/],
      ],
      public: ['http://[64:ff9b::8.8.8.8]/', 'http://[64:ff9b::5db8:d70e]/'],
    },
    'local-use NAT64 (64:ff9b:1::/48, no fixed IPv4 position)': {
      refused: [['http://[64:ff9b:1::a00:1]/', /rfc6052/], ['http://[64:ff9b:1::808:808]/', /rfc6052/]],
      public: [],
    },
    '6to4 (2002::/16)': {
      refused: [
        ['http://[2002:7f00:1::]/', /loopback/], ['http://[2002:7f00:0001::1]/', /loopback/], ['http://[2002:a9fe:a9fe::1]/', /linkLocal/],
        ['http://[2002:c0a8:101:1::1]/', /private/], ['http://[2002:6440:1::]/', /carrierGradeNat/],
      ],
      public: ['http://[2002:808:808::1]/'],
    },
    'Teredo (2001:0::/32)': {
      refused: [
        // Server 127.0.0.1, client 8.8.8.8 (stored inverted: f7f7:f7f7).
        ['http://[2001:0:7f00:1::f7f7:f7f7]/', /loopback/],
        // Server 8.8.8.8, client 127.0.0.1 (80ff:fffe) or 10.0.0.1 (f5ff:fffe).
        ['http://[2001:0:808:808::80ff:fffe]/', /127\.0\.0\.1 is a loopback/], ['http://[2001:0:808:808:8000:ffff:f5ff:fffe]/', /10\.0\.0\.1 is a private/],
      ],
      public: ['http://[2001:0:808:808::f7f7:f7f7]/'],
    },
    'IPv4-translated (::ffff:0:0/96, refused as a range)': {
      refused: [['http://[::ffff:0:7f00:1]/', /rfc6145/], ['http://[::ffff:0:8.8.8.8]/', /rfc6145/]],
      public: [],
    },
  } as const;

  describe.each(Object.entries(carriers))('%s', (_form, { refused: carrying, public: publicOnes }) => {
    it.each(carrying.map(([url, why]) => [url, why] as const))('refuses %s at creation and at delivery, naming what it carries', async (url, why) => {
      expect(checkWebhookUrl(url, [])).toMatch(why);
      expect(await vet(url)).toMatchObject({ ok: false, reason: expect.stringMatching(why) });
      // The same address as a DNS answer for a host name.
      expect(await vet('http://hooks.example.com/', [], [hostOf(url).slice(1, -1)])).toMatchObject({ ok: false, reason: expect.stringMatching(why) });
    });

    if (publicOnes.length > 0) {
      it.each([...publicOnes])('allows %s, which carries a public IPv4 address', async (url) => {
        expect(checkWebhookUrl(url, [])).toBeNull();
        expect(await vet(url)).toMatchObject({ ok: true, family: 6 });
      });
    }
  });

  it('lets the allow list admit a carried IPv4 address, or the IPv6 address itself', async () => {
    const loopback = parseAllowCidrs('127.0.0.0/8');
    for (const url of ['http://[::127.0.0.1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://[2001:0:7f00:1::f7f7:f7f7]/']) {
      expect(checkWebhookUrl(url, loopback), url).toBeNull();
    }
    expect(await vet('http://[::127.0.0.1]:9/', loopback)).toEqual({ ok: true, address: '::7f00:1', family: 6 });
    // Teredo: both addresses must pass; allowing one of them is not enough.
    expect(checkWebhookUrl('http://[2001:0:7f00:1::f5ff:fffe]/', loopback)).toMatch(/10\.0\.0\.1 is a private/);
    expect(checkWebhookUrl('http://[64:ff9b:1::a00:1]/', parseAllowCidrs('64:ff9b:1::/48'))).toBeNull();
    expect(checkWebhookUrl('http://[::10.0.0.1]/', parseAllowCidrs('::a00:0/120'))).toBeNull();
  });

  it('refuses names that resolve to a forbidden address, and localhost without asking DNS', async () => {
    expect(await vet('http://localhost:3000/', [], [])).toMatchObject({ ok: false, reason: expect.stringMatching(/localhost resolves to 127\.0\.0\.1/) });
    expect(await vetDestination('localhost', [])).toMatchObject({ ok: false });
    expect(await vet('http://db.internal/', [], ['10.0.0.5'])).toMatchObject({ ok: false, reason: expect.stringMatching(/private/) });
    expect(await vet('http://metadata.example/', [], ['169.254.169.254'])).toMatchObject({ ok: false, reason: expect.stringMatching(/linkLocal/) });
    expect(await vet('http://mixed.example/', [], ['93.184.215.14', '::1'])).toMatchObject({ ok: false });
    expect(await vet('http://none.example/', [], [])).toMatchObject({ ok: false, reason: expect.stringMatching(/no address/) });
    expect(checkWebhookUrl('http://localhost:3000/', [])).toMatch(/loopback/);
    expect(checkWebhookUrl('http://api.localhost/', [])).toMatch(/loopback/);
  });

  it('allows what the allow CIDRs cover, IPv4-mapped addresses included', async () => {
    const allow = parseAllowCidrs('127.0.0.0/8, 10.1.0.0/16,fd00::/8');
    expect(allow).toEqual(['127.0.0.0/8', '10.1.0.0/16', 'fd00::/8']);
    for (const url of ['http://127.0.0.1:9/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://10.1.2.3/', 'http://[fd00::5]/', 'http://localhost/']) {
      expect(checkWebhookUrl(url, allow)).toBeNull();
    }
    expect(await vet('http://127.0.0.1:9/', allow)).toEqual({ ok: true, address: '127.0.0.1', family: 4 });
    expect(await vet('http://[fd00::5]/', allow)).toEqual({ ok: true, address: 'fd00::5', family: 6 });
    expect(await vet('http://hooks.corp/', allow, ['10.1.9.9'])).toEqual({ ok: true, address: '10.1.9.9', family: 4 });
    // Outside the allowed ranges: still refused.
    expect(checkWebhookUrl('http://10.2.0.1/', allow)).toMatch(/private/);
    expect(checkWebhookUrl('http://[::1]/', allow)).toMatch(/loopback/);
  });

  it('allows public addresses (checked only, never contacted) and host names until delivery', async () => {
    for (const url of ['https://93.184.215.14/hook', 'http://8.8.8.8/', 'https://[2606:4700:4700::1111]/', 'https://hooks.example.com/x']) {
      expect(checkWebhookUrl(url, [])).toBeNull();
    }
    expect(await vet('https://93.184.215.14/hook')).toEqual({ ok: true, address: '93.184.215.14', family: 4 });
    expect(await vet('https://hooks.example.com/', [], ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'])).toMatchObject({ ok: true, address: '93.184.215.14' });
  });

  it('refuses URLs that are not http(s) or not URLs', () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'ws://example.com/']) {
      expect(checkWebhookUrl(url, [])).toBe('must use http or https');
    }
    expect(checkWebhookUrl('not a url', [])).toBe('is not a valid URL');
  });

  it('validates allow-list entries', () => {
    expect(parseAllowCidrs('')).toEqual([]);
    expect(parseAllowCidrs(['192.168.0.7', '::1'])).toEqual(['192.168.0.7/32', '::1/128']);
    for (const bad of ['127.0.0.0/33', 'localhost', '127.1/8', '10.0.0.0/x', 'fe80::/129']) {
      expect(() => parseAllowCidrs(bad)).toThrow(bad);
    }
  });
});
