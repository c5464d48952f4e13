/**
 * The real embedding worker, plus a crash on demand: a batch holding CRASH_TEXT ends the thread with exit code 7 before
 * the model answers, as an out-of-memory abort or a native fault inside the model would. Runs only as a worker
 * thread: the test keeps its own copy of the text (importing this file would start a worker's code in the test).
 * The worker takes a request either as a 'message' event or, when it came while the model ran, straight from the port
 * (`receiveMessageOnPort`): both are watched, the latter by wrapping the module's export before the worker imports it.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { parentPort, type receiveMessageOnPort } from 'node:worker_threads';

const CRASH_TEXT = 'crash this embedding worker now';
const crashOn = (request: { texts?: string[] } | undefined) => {
  if (request?.texts?.includes(CRASH_TEXT)) process.exit(7);
};

parentPort!.on('message', crashOn);
const threads = createRequire(import.meta.url)('node:worker_threads') as { receiveMessageOnPort: typeof receiveMessageOnPort };
const receive = threads.receiveMessageOnPort;
threads.receiveMessageOnPort = (port) => {
  const received = receive(port);
  crashOn(received?.message as { texts?: string[] } | undefined);
  return received;
};
syncBuiltinESMExports();
await import('../../src/adapters/embeddings/local/embed.worker.ts');
