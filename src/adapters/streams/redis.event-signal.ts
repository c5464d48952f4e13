import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { EventSignal } from '../../core/streams/event-signal.port.ts';
import type { WarningLog } from '../../core/warning-log.ts';
import { DEFAULT_REDIS_KEY_PREFIX } from '../redis/redis-client.ts';

/**
 * Redis pub/sub on one channel: each append is announced as `{node}:{seq}`; a node ignores its own. A lost message
 * (a reconnection) costs only latency: the event hub's poll still finds the events.
 */
export function createRedisEventSignal(deps: { redis: Redis; warnings: WarningLog; keyPrefix?: string }): EventSignal {
  const { redis, warnings } = deps;
  const channel = `${deps.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX}events:appended`;
  const nodeId = randomUUID();
  const listeners = new Set<(lastSeq: number) => void>();
  // A subscribed connection can do nothing else: a second one, opened when someone first listens.
  let subscriber: Redis | null = null;

  function listen(): void {
    if (subscriber) return;
    subscriber = redis.duplicate();
    subscriber.on('error', () => { /* the main client reports outages */ });
    subscriber.on('message', (_channel: string, message: string) => {
      const cut = message.lastIndexOf(':');
      if (cut < 0 || message.slice(0, cut) === nodeId) return;
      const seq = Number(message.slice(cut + 1));
      for (const l of listeners) l(seq);
    });
    subscriber.subscribe(channel).catch((err: unknown) => warnings.warn({ err }, 'event signal subscription failed'));
  }

  return {
    announce(lastSeq) {
      redis.publish(channel, `${nodeId}:${lastSeq}`).catch(() => { /* other nodes will poll */ });
    },
    onRemote(listener) {
      listeners.add(listener);
      listen();
      return () => { listeners.delete(listener); };
    },
    async close() {
      listeners.clear();
      subscriber?.disconnect();
      subscriber = null;
    },
  };
}
