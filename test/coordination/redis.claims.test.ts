import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisClaims } from '../../src/adapters/coordination/redis.claims.ts';
import { startRedisServer, type TestRedis } from '../support/redis-server.ts';
import { claimsContract } from './claims.contract.ts';

let server: TestRedis;
beforeAll(async () => { server = await startRedisServer(); });
afterAll(async () => { await server?.stop(); });

let run = 0;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

claimsContract('Redis claims', () => {
  const keyPrefix = `test${++run}:`;
  return {
    claims: createRedisClaims({ redis: server.client(), keyPrefix }),
    peer: createRedisClaims({ redis: server.client(), keyPrefix }),
    elapse: sleep,
  };
});

describe('Redis claims across nodes', () => {
  it('holds a claim against another node, and frees it for that node on release', async () => {
    const keyPrefix = `test${++run}:`;
    const nodeA = createRedisClaims({ redis: server.client(), keyPrefix });
    const nodeB = createRedisClaims({ redis: server.client(), keyPrefix });
    const token = await nodeA.claim('periodic:system.health', 60_000);
    expect(await nodeB.claim('periodic:system.health', 60_000)).toBeNull();
    await nodeB.release('periodic:system.health', 'guessed');
    expect(await nodeB.claim('periodic:system.health', 60_000)).toBeNull();
    await nodeA.release('periodic:system.health', token!);
    expect(await nodeB.claim('periodic:system.health', 60_000)).not.toBeNull();
  });
});
