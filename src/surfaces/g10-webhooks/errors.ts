import type { Clock } from '../../core/clock.ts';
import { createWebhookSurfaceErrorHandler } from '../http-kit/webhook-errors.ts';

/**
 * G10's errors: the webhook envelope shared with G9 (http-kit/webhook-errors.ts); CONFLICT 409
 * is an Idempotency-Key reused with a different body.
 */
export function createG10ErrorHandler(_clock: Clock) {
  return createWebhookSurfaceErrorHandler();
}
