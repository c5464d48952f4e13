import type { Clock } from '../../core/clock.ts';
import { createWebhookSurfaceErrorHandler } from '../http-kit/webhook-errors.ts';

/** G9's errors: the webhook envelope shared with G10 (http-kit/webhook-errors.ts). */
export function createG9ErrorHandler(_clock: Clock) {
  return createWebhookSurfaceErrorHandler();
}
