/**
 * An auto-approval time window: `HH:MM-HH:MM <zone>`, e.g. `09:00-17:00 Europe/London`, with an IANA time zone (or
 * `UTC`). A moment is inside when its wall-clock time in that zone is at or after the start and before the end, so
 * summer time is followed (Node 20 ships full ICU). A start after the end crosses midnight (`22:00-06:00` is inside
 * from 22:00 to 05:59); the end may be `24:00`; a start equal to the end is refused (all day or never? say which).
 */
export interface TimeWindow {
  /** Minutes after local midnight. */
  start: number;
  end: number;
  timeZone: string;
}

export const TIME_WINDOW_RULE = 'must be HH:MM-HH:MM followed by an IANA time zone, e.g. "09:00-17:00 Europe/London"; '
  + 'the start and the end differ (a start after the end crosses midnight; the end may be 24:00)';

const FORMAT = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]|24):([0-5]\d) ([A-Za-z][A-Za-z0-9_+\-/]{0,63})$/;

/** One formatter per zone: building one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(timeZone: string): Intl.DateTimeFormat | null {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    } catch {
      return null;
    }
    formatters.set(timeZone, f);
  }
  return f;
}

/** The window, or null when the text is not one (or names a zone this runtime does not know). */
export function parseTimeWindow(text: string): TimeWindow | null {
  const m = FORMAT.exec(text.trim());
  if (!m) return null;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  if (end > 24 * 60 || start === end || formatterOf(m[5]!) === null) return null;
  return { start, end, timeZone: m[5]! };
}

/** Minutes after midnight of `at` on the wall clock of `timeZone`. */
function localMinutes(at: Date, timeZone: string): number {
  const parts = formatterOf(timeZone)!.formatToParts(at);
  const part = (type: 'hour' | 'minute') => Number(parts.find((p) => p.type === type)?.value);
  return part('hour') * 60 + part('minute');
}

export function withinTimeWindow(window: TimeWindow, at: Date): boolean {
  const t = localMinutes(at, window.timeZone);
  return window.start < window.end ? t >= window.start && t < window.end : t >= window.start || t < window.end;
}
