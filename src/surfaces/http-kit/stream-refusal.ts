import type { StreamCap } from '../../core/streams/connection-registry.ts';
import type { RealtimeSettings } from '../../core/streams/settings.ts';

/** What a refused stream is told (G8 `error` frame data; WebSocket error message before close 1013 / 1001). */
export interface StreamRefusal {
  code: 'RATE_LIMITED' | 'CONNECTION_ERROR';
  message: string;
  /** Milliseconds, as the spec's stream errors give it. */
  retry_after: number;
}

type Caps = Pick<RealtimeSettings, 'maxConnectionsPerKey' | 'maxConnectionsPerTenant' | 'maxConnections'>;

/** The refusal for a stream cap (the spec's "too many connections": RATE_LIMITED, 60 s), naming the cap hit. */
export function streamRefusal(cap: StreamCap, caps: Caps): StreamRefusal {
  switch (cap) {
    case 'closing': return { code: 'CONNECTION_ERROR', message: 'The server is shutting down', retry_after: 5000 };
    case 'key': return tooMany(`at most ${caps.maxConnectionsPerKey} concurrent streams per API key`);
    case 'tenant': return tooMany(`at most ${caps.maxConnectionsPerTenant} concurrent streams per tenant, all its keys together`);
    case 'process': return tooMany(`this server holds at most ${caps.maxConnections} concurrent streams`);
  }
}

const tooMany = (what: string): StreamRefusal => ({ code: 'RATE_LIMITED', message: `Too many connections: ${what}`, retry_after: 60_000 });
