import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyMemoryEventSignature, verifyMnemoSignature, WebhookVerificationError } from '../../src/client/webhook-receiver.ts';

const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=';
const payload = '{"id":"evt_1","type":"transfer.completed","created_at":"2026-01-01T00:00:00.000Z","data":{}}';
const now = new Date(Date.UTC(2026, 0, 1));
const t = Math.floor(now.getTime() / 1000);
const sign = (text: string, key = secret) => createHmac('sha256', key).update(text).digest('hex');

describe('receiver helper', () => {
  it('accepts several v1 values (secret rotation) and ignores unknown schemes', () => {
    const header = `t=${t},v0=abc,v1=${sign(`${t}.${payload}`, 'old-secret')},v1=${sign(`${t}.${payload}`)}`;
    expect(verifyMnemoSignature({ payload, header, secret, now })).toBe(true);
  });

  it('rejects missing or malformed headers, and a different timestamp than the one signed', () => {
    const v1 = sign(`${t}.${payload}`);
    const fails = (header: string | undefined, pattern: RegExp) =>
      expect(() => verifyMnemoSignature({ payload, header, secret, now })).toThrow(pattern);
    fails(undefined, /missing/);
    fails('', /missing/);
    fails(`v1=${v1}`, /malformed/);
    fails(`t=${t}`, /malformed/);
    fails(`t=abc,v1=${v1}`, /malformed/);
    fails(`t=${t + 1},v1=${v1}`, /signature/);
    fails(`t=${t},v1=${v1.slice(0, -2)}`, /signature/);
    expect(() => verifyMnemoSignature({ payload, header: `t=${t},v1=${v1}`, secret, now: new Date(now.getTime() + 11_000), toleranceSeconds: 10 }))
      .toThrow(WebhookVerificationError);
  });

  it('verifies G9 hex signatures in constant time, for strings and buffers', () => {
    const signature = sign(payload);
    expect(verifyMemoryEventSignature({ payload, signature, secret })).toBe(true);
    expect(verifyMemoryEventSignature({ payload: Buffer.from(payload), signature: signature.toUpperCase(), secret })).toBe(true);
    expect(verifyMemoryEventSignature({ payload, signature: undefined, secret })).toBe(false);
    expect(verifyMemoryEventSignature({ payload, signature: 'abc', secret })).toBe(false);
    expect(verifyMemoryEventSignature({ payload, signature, secret: 'other' })).toBe(false);
  });
});
