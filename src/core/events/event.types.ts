import type { KeyMode } from '../scope.ts';

/** Event types of the memory surfaces (G8 stream, G9 webhooks). */
export const MEMORY_EVENT_TYPES = [
  'memory.created', 'memory.updated', 'memory.deleted', 'search.performed', 'user.activity', 'system.health',
  'analytics.update', 'embedding.generated', 'memory.superseded', 'memory.proposed', 'memory.review.decided',
] as const;
export type MemoryEventType = (typeof MEMORY_EVENT_TYPES)[number];

/** Event types of the generic dispatcher (G10), published by producers with `POST /v1/events`. */
export const GENERIC_EVENT_TYPES = [
  'transfer.initiated', 'transfer.processing', 'transfer.completed', 'transfer.failed', 'transfer.reversed',
  'payment.initialized', 'payment.successful', 'payment.failed', 'payment.refunded',
  'wallet.created', 'wallet.credited', 'wallet.debited', 'wallet.frozen',
  'kyc.submitted', 'kyc.verified', 'kyc.failed',
] as const;
export type GenericEventType = (typeof GENERIC_EVENT_TYPES)[number];

/**
 * Event types of the secrets component (G11 webhooks), emitted by the secret service and API-key management
 * (core/secrets/secret-events.ts, core/api-keys/api-key-events.ts). They belong to a tenant and mode (no workspace)
 * and never carry a secret's value or an API key.
 */
export const SECURITY_EVENT_TYPES = ['secret.created', 'secret.accessed', 'apikey.rotated'] as const;
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];

/**
 * Where an event belongs. Memory events carry the full scope; G10 and G11 events a tenant and mode (no workspace);
 * system-wide events (system.health) none: they reach every subscriber that asks for them.
 */
export interface EventScope {
  tenantId: string | null;
  mode: KeyMode | null;
  workspace: string | null;
}

export interface NewEvent {
  /** `evt_…`; the same id on every delivery attempt and stream frame, so receivers can drop duplicates. */
  id: string;
  type: string;
  scope: EventScope;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** An event as committed: `seq` orders the log (stream resume, delivery order). */
export interface StoredEvent extends NewEvent {
  seq: number;
}

export const SYSTEM_SCOPE: EventScope = { tenantId: null, mode: null, workspace: null };
