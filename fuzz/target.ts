/**
 * The server under fuzz for `npm run fuzz`, in its own process so that a handler that never finishes (or keeps
 * the event loop busy) shows up as a hang on the fuzzer's side. The same app as the tests (temporary SQLite file,
 * hashing embedder); prints one JSON line `{url, keys}` once listening, and stops on SIGTERM.
 */
import { createTestApp } from '../test/support/test-app.ts';
import type { FuzzKeys } from './fixtures.ts';

const t = await createTestApp();
await t.app.listen({ host: '127.0.0.1', port: 0 });
const address = t.app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
const keys: FuzzKeys = {
  pool: await Promise.all(Array.from({ length: 20 }, () => t.key({ tenant: 'fuzz' }))),
  free: await t.key({ tenant: 'fuzz', tier: 'free' }),
  readOnly: await t.key({ tenant: 'fuzz', scopes: ['memories:read'] }),
  control: await t.key({ tenant: 'control' }),
};
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, keys })}\n`);
process.once('SIGTERM', () => {
  void t.close().finally(() => process.exit(0));
});
