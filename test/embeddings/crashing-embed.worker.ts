/**
 * The real embedding worker, plus a crash on demand: a batch holding CRASH_TEXT ends the thread with exit code 7 before
 * the model answers, as an out-of-memory abort or a native fault inside the model would. Runs only as a worker
 * thread: the test keeps its own copy of the text (importing this file would start a worker's code in the test).
 */
import { parentPort } from 'node:worker_threads';

const CRASH_TEXT = 'crash this embedding worker now';

parentPort!.on('message', (request: { texts: string[] }) => {
  if (request.texts.includes(CRASH_TEXT)) process.exit(7);
});
await import('../../src/adapters/embeddings/local/embed.worker.ts');
