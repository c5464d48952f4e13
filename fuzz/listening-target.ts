import type { TestApp } from '../test/support/test-app.ts';
import type { FuzzKeys } from './fixtures.ts';

/**
 * Puts a test app on a loopback port and makes the fuzz keys: 20 enterprise keys of the fuzz tenant (cases use them
 * in turn, so rate limits rarely answer first), a free and a read-only one, and the control tenant's.
 */
export async function listenWithFuzzKeys(t: TestApp): Promise<{ baseUrl: string; keys: FuzzKeys }> {
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const keys: FuzzKeys = {
    pool: await Promise.all(Array.from({ length: 20 }, () => t.key({ tenant: 'fuzz' }))),
    free: await t.key({ tenant: 'fuzz', tier: 'free' }),
    readOnly: await t.key({ tenant: 'fuzz', scopes: ['memories:read'] }),
    control: await t.key({ tenant: 'control' }),
  };
  return { baseUrl: `http://127.0.0.1:${port}`, keys };
}
