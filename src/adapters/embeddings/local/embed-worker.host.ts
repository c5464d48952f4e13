import { Worker } from 'node:worker_threads';
import { EmbeddingError } from '../../../core/embeddings/embedder.port.ts';
import type { EmbedRequest, WorkerMessage } from './embed.worker.ts';

export interface WorkerResult {
  /** `count × dimensions` floats, vector after vector. */
  vectors: Float32Array;
  dimensions: number;
}

/**
 * One embed.worker.ts thread and its requests in flight (the worker runs them one after another, in order, but for an
 * overtaking one). Once dead
 * (crash, exit, terminate) it stays dead and rejects everything, every request in flight included; the owner starts a
 * new host.
 */
export class EmbedWorkerHost {
  /** Settles when the model is loaded (or the worker died trying). */
  readonly ready: Promise<void>;
  readonly startedAt = performance.now();
  /** Milliseconds from spawn to model loaded. */
  startupMs: number | undefined;
  private readonly worker: Worker;
  private readonly inflight = new Map<number, { resolve: (r: WorkerResult) => void; reject: (e: Error) => void }>();
  private death: EmbeddingError | undefined;
  private terminating = false;
  private nextId = 1;
  private markReady!: () => void;
  private markFailed!: (e: Error) => void;

  /** `workerModule`: the worker's module (default embed.worker beside this file; tests pass a crashing one). */
  constructor(workerModule?: URL) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
    this.ready.catch(() => {}); // observed by whoever awaits it; never an unhandled rejection
    // execArgv [] keeps the parent's loader flags (tsx CLI, vitest) out: from sources the bootstrap registers tsx once.
    this.worker = new Worker(workerUrl(workerModule), { execArgv: [], name: 'mnemo-embed' });
    this.worker.on('message', (message: WorkerMessage) => this.onMessage(message));
    this.worker.on('error', (err) => this.die(`local embedding worker crashed: ${err.message}`, err));
    this.worker.on('exit', (code) => this.die(`local embedding worker exited with code ${code}`));
  }

  get alive(): boolean {
    return this.death === undefined;
  }

  /** Alive with its model loaded: a call handed to it runs without waiting for the load. */
  get loaded(): boolean {
    return this.alive && this.startupMs !== undefined;
  }

  /** `overtake`: the worker runs it before the calls waiting there (EmbedRequest.overtake). */
  run(texts: string[], overtake = false): Promise<WorkerResult> {
    if (this.death) return Promise.reject(this.death);
    if (this.terminating) return Promise.reject(new EmbeddingError('local embedder was closed'));
    const id = this.nextId++;
    return new Promise<WorkerResult>((resolve, reject) => {
      this.inflight.set(id, { resolve, reject });
      // Referenced only while working, so an idle embedder never keeps the process alive.
      this.worker.ref();
      this.worker.postMessage({ id, texts, overtake } satisfies EmbedRequest);
    });
  }

  async terminate(): Promise<void> {
    if (this.death) return;
    this.terminating = true;
    await this.worker.terminate();
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'ready') {
      this.startupMs = performance.now() - this.startedAt;
      if (this.inflight.size === 0) this.worker.unref();
      this.markReady();
      return;
    }
    const pending = this.inflight.get(message.id);
    if (!pending) return;
    this.inflight.delete(message.id);
    if (this.inflight.size === 0) this.worker.unref();
    if (message.type === 'result') pending.resolve({ vectors: message.vectors, dimensions: message.dimensions });
    else pending.reject(new EmbeddingError(`local embedding model failed: ${message.message}`));
  }

  private die(reason: string, cause?: unknown): void {
    if (this.death) return;
    this.death = new EmbeddingError(this.terminating ? 'local embedder was closed' : reason, { cause });
    this.markFailed(this.death);
    for (const pending of this.inflight.values()) pending.reject(this.death);
    this.inflight.clear();
    // An 'error' event is followed by 'exit'; make sure a crashed worker is really gone.
    void this.worker.terminate();
  }
}

/**
 * Compiled (dist/, what `npm start` runs), the worker is a sibling .js file that Node loads as it is. From the
 * TypeScript sources (tests, `npm run start:dev`), a worker thread shares none of the parent's module loaders (neither
 * the tsx CLI's nor vitest's), so the thread starts from a tiny inline ESM module that registers tsx's loader and then
 * imports the real worker file. Specifiers are resolved here, because a data: module cannot resolve bare names.
 */
function workerUrl(module?: URL): URL {
  const compiled = import.meta.url.endsWith('.js');
  const workerFile = module ?? new URL(compiled ? './embed.worker.js' : './embed.worker.ts', import.meta.url);
  if (!workerFile.pathname.endsWith('.ts')) return workerFile;
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const source = [
    `import { register } from ${JSON.stringify(tsxApi)};`,
    'register();',
    `await import(${JSON.stringify(workerFile.href)});`,
  ].join('\n');
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}
