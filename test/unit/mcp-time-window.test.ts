import { describe, expect, it } from 'vitest';
import { autoApproves } from '../../src/core/mcp-access/auto-approve.ts';
import { parseTimeWindow, withinTimeWindow } from '../../src/core/mcp-access/time-window.ts';

const at = (iso: string) => new Date(iso);

describe('auto-approval time windows', () => {
  it('reads HH:MM-HH:MM <zone> and refuses anything else', () => {
    expect(parseTimeWindow('09:00-17:00 Europe/London')).toEqual({ start: 540, end: 1020, timeZone: 'Europe/London' });
    expect(parseTimeWindow('22:30-06:00 Asia/Tokyo')).toEqual({ start: 1350, end: 360, timeZone: 'Asia/Tokyo' });
    expect(parseTimeWindow('00:00-24:00 UTC')).toEqual({ start: 0, end: 1440, timeZone: 'UTC' });
    for (const text of [
      '9:00-17:00 Europe/London', '09:00-17:00', '09:00 - 17:00 Europe/London', '09:00-17:00 Mars/Olympus', '25:00-26:00 UTC',
      '09:60-10:00 UTC', '09:00-09:00 UTC', '24:00-08:00 UTC', '09:00-24:30 UTC', '09:00-17:00 Europe/London extra', '',
    ]) expect(parseTimeWindow(text), text).toBeNull();
  });

  it('follows summer time: 09:00-17:00 London is 09:00-17:00 UTC in winter and 08:00-16:00 UTC in summer', () => {
    const london = parseTimeWindow('09:00-17:00 Europe/London')!;
    // The clocks went forward on Sunday 29 March 2026 at 01:00 UTC.
    expect(withinTimeWindow(london, at('2026-03-28T08:30:00Z'))).toBe(false); // 08:30 GMT
    expect(withinTimeWindow(london, at('2026-03-28T09:00:00Z'))).toBe(true);
    expect(withinTimeWindow(london, at('2026-03-28T16:59:59Z'))).toBe(true);
    expect(withinTimeWindow(london, at('2026-03-28T17:00:00Z'))).toBe(false);
    expect(withinTimeWindow(london, at('2026-03-30T08:30:00Z'))).toBe(true); // 09:30 BST
    expect(withinTimeWindow(london, at('2026-03-30T07:59:00Z'))).toBe(false); // 08:59 BST
    expect(withinTimeWindow(london, at('2026-03-30T16:00:00Z'))).toBe(false); // 17:00 BST
    // Across the change itself: 00:59 GMT, then 02:00 BST one minute later.
    const night = parseTimeWindow('01:00-02:00 Europe/London')!;
    expect(withinTimeWindow(night, at('2026-03-29T00:59:00Z'))).toBe(false);
    expect(withinTimeWindow(night, at('2026-03-29T01:00:00Z'))).toBe(false); // 02:00 BST: the hour 01:00-02:00 did not happen
    // And back: on 25 October 2026 01:00-02:00 local happens twice.
    expect(withinTimeWindow(night, at('2026-10-25T00:30:00Z'))).toBe(true); // 01:30 BST
    expect(withinTimeWindow(night, at('2026-10-25T01:30:00Z'))).toBe(true); // 01:30 GMT
  });

  it('crosses midnight when the start is after the end', () => {
    const overnight = parseTimeWindow('22:00-06:00 America/New_York')!;
    expect(withinTimeWindow(overnight, at('2026-06-02T01:59:00Z'))).toBe(false); // 21:59 EDT
    expect(withinTimeWindow(overnight, at('2026-06-02T02:00:00Z'))).toBe(true); // 22:00 EDT
    expect(withinTimeWindow(overnight, at('2026-06-02T04:00:00Z'))).toBe(true); // 00:00 EDT
    expect(withinTimeWindow(overnight, at('2026-06-02T09:59:00Z'))).toBe(true); // 05:59 EDT
    expect(withinTimeWindow(overnight, at('2026-06-02T10:00:00Z'))).toBe(false); // 06:00 EDT
    expect(withinTimeWindow(parseTimeWindow('00:00-24:00 UTC')!, at('2026-06-02T23:59:59Z'))).toBe(true);
  });

  it('approves only when enabled and every condition given holds', () => {
    const now = at('2026-06-02T10:00:00Z');
    expect(autoApproves({ enabled: false, conditions: {} }, 'bot', now)).toBe(false);
    expect(autoApproves({ enabled: true, conditions: {} }, 'bot', now)).toBe(true);
    expect(autoApproves({ enabled: true, conditions: { requester: ['bot'] } }, 'bot', now)).toBe(true);
    expect(autoApproves({ enabled: true, conditions: { requester: ['bot'] } }, 'other', now)).toBe(false);
    expect(autoApproves({ enabled: true, conditions: { timeWindow: '09:00-17:00 UTC', requester: ['bot'] } }, 'bot', now)).toBe(true);
    expect(autoApproves({ enabled: true, conditions: { timeWindow: '11:00-17:00 UTC', requester: ['bot'] } }, 'bot', now)).toBe(false);
    expect(autoApproves({ enabled: true, conditions: { timeWindow: 'not a window' } }, 'bot', now)).toBe(false);
  });
});
