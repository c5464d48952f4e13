/**
 * The server under fuzz for `npm run fuzz`, in its own process so that a handler that never finishes (or keeps
 * the event loop busy) shows up as a hang on the fuzzer's side. The same app as the tests (temporary SQLite file,
 * hashing embedder); prints one JSON line `{url, keys}` once listening, then `{log}` for each of its log lines at
 * warn level or above, and stops on SIGTERM.
 */
import { createTestApp } from '../test/support/test-app.ts';
import { listenWithFuzzKeys } from './listening-target.ts';

const t = await createTestApp({
  server: { logLevel: 'warn', logStream: { write: (line) => { process.stdout.write(`${JSON.stringify({ log: JSON.parse(line) as unknown })}\n`); } } },
});
const { baseUrl, keys } = await listenWithFuzzKeys(t);
process.stdout.write(`${JSON.stringify({ url: baseUrl, keys })}\n`);
process.once('SIGTERM', () => {
  void t.close().finally(() => process.exit(0));
});
