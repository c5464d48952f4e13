import { describe, expect, it } from 'vitest';
import { attemptResult, G10_MAX_ATTEMPTS, retryDelayMs } from '../../src/core/webhooks/delivery-schedule.ts';
import { DEFAULT_G9_RETRY } from '../../src/core/webhooks/webhook.types.ts';

const g9 = (retryPolicy = DEFAULT_G9_RETRY) => ({ kind: 'g9' as const, retryPolicy });
const g10 = { kind: 'g10' as const, retryPolicy: DEFAULT_G9_RETRY };
const g11 = { kind: 'g11' as const, retryPolicy: DEFAULT_G9_RETRY };
const at = new Date(Date.UTC(2026, 0, 1));

describe('delivery schedules', () => {
  it('G9: 1 s, 2 s, 4 s, 8 s… capped at max_delay, up to max_attempts', () => {
    const policy = { maxAttempts: 12, backoffMultiplier: 2, maxDelayMs: 300_000 };
    expect(Array.from({ length: 12 }, (_, i) => retryDelayMs(g9(policy), i + 1)))
      .toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000, null]);
    expect([1, 2, 3].map((n) => retryDelayMs(g9(), n))).toEqual([1000, 2000, null]);
    expect(retryDelayMs(g9({ maxAttempts: 1, backoffMultiplier: 2, maxDelayMs: 1000 }), 1)).toBeNull();
    // Hostile numbers never make an invalid date.
    expect(retryDelayMs(g9({ maxAttempts: 5000, backoffMultiplier: 1e308, maxDelayMs: 300_000 }), 4000)).toBe(300_000);
  });

  it('G10: 1 min, 5 min, 30 min, 2 h, 8 h, 24 h, then the webhook fails', () => {
    expect(Array.from({ length: G10_MAX_ATTEMPTS }, (_, i) => retryDelayMs(g10, i + 1)))
      .toEqual([60_000, 300_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000, null]);
    expect(attemptResult(g10, 7, { status: 500, bodyExcerpt: '', durationMs: 1 }, at)).toMatchObject({ ok: false, retryAt: null, failWebhook: true });
    expect(attemptResult(g9(), 3, { status: 500, bodyExcerpt: '', durationMs: 1 }, at)).toMatchObject({ ok: false, retryAt: null, failWebhook: false });
  });

  it('G11 follows G10\'s schedule, and fails the webhook after the 7th attempt', () => {
    expect(Array.from({ length: G10_MAX_ATTEMPTS }, (_, i) => retryDelayMs(g11, i + 1)))
      .toEqual([60_000, 300_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000, null]);
    expect(attemptResult(g11, 6, { status: 503, bodyExcerpt: '', durationMs: 1 }, at)).toMatchObject({ retryAt: new Date(at.getTime() + 86_400_000), failWebhook: false });
    expect(attemptResult(g11, 7, { status: 503, bodyExcerpt: '', durationMs: 1 }, at)).toMatchObject({ ok: false, retryAt: null, failWebhook: true });
  });

  it('maps outcomes: 2xx ok, 410 gives up and fails the webhook, anything else retries', () => {
    expect(attemptResult(g9(), 1, { status: 204, bodyExcerpt: '', durationMs: 1 }, at)).toEqual({ ok: true, at, status: 204 });
    expect(attemptResult(g9(), 1, { status: 410, bodyExcerpt: '', durationMs: 1 }, at)).toMatchObject({ retryAt: null, failWebhook: true });
    expect(attemptResult(g9(), 1, { status: 302, bodyExcerpt: '', durationMs: 1 }, at))
      .toMatchObject({ error: 'HTTP 302 (redirects are not followed)', retryAt: new Date(at.getTime() + 1000), failWebhook: false });
    expect(attemptResult(g10, 1, { status: null, error: 'ECONNRESET', durationMs: 1 }, at))
      .toMatchObject({ status: null, error: 'ECONNRESET', retryAt: new Date(at.getTime() + 60_000) });
  });
});
