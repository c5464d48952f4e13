import { parseTimeWindow, withinTimeWindow } from './time-window.ts';
import type { AutoApprove } from './mcp.types.ts';

/**
 * Whether a request by `requester` at `at` is approved without a person: auto-approval is enabled and every
 * condition given holds (the time window contains `at` in its zone; the requester is listed). Enabled without
 * conditions approves every request: the request is still recorded, with `autoApproved`.
 */
export function autoApproves(autoApprove: AutoApprove, requester: string, at: Date): boolean {
  if (!autoApprove.enabled) return false;
  const { timeWindow, requester: requesters } = autoApprove.conditions;
  if (requesters !== undefined && !requesters.includes(requester)) return false;
  if (timeWindow !== undefined) {
    const window = parseTimeWindow(timeWindow);
    // Stored windows were checked when registered; one this runtime no longer reads approves nothing.
    if (window === null || !withinTimeWindow(window, at)) return false;
  }
  return true;
}
