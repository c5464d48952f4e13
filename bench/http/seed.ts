import { memoryGenerator } from '../lib/corpus.ts';
import { phase } from '../lib/progress.ts';
import { median, percentile } from '../lib/stats.ts';
import { keepAliveClient, MEMORIES_PATH } from './client.ts';

export interface SeedResult {
  count: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** Creates `count` memories through POST /api/v1/memories with `concurrency` requests in flight. */
export async function seedCorpus(baseUrl: string, apiKey: string, count: number, options: { concurrency: number; seed: number; label: string }):
  Promise<SeedResult> {
  const next = memoryGenerator(options.seed);
  const bodies = Array.from({ length: count }, () => JSON.stringify(next()));
  const client = keepAliveClient(baseUrl, apiKey, options.concurrency);
  const latencies: number[] = [];
  const bar = phase(options.label, count, 'memories');
  let cursor = 0;
  const started = performance.now();
  const worker = async () => {
    while (cursor < bodies.length) {
      const body = bodies[cursor++]!;
      const t0 = performance.now();
      try {
        await client.post(MEMORIES_PATH, body, 201);
      } catch (err) {
        cursor = bodies.length; // stop the other workers too
        throw err;
      }
      latencies.push(performance.now() - t0);
      bar.increment();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, count) }, worker));
  } finally {
    bar.stop();
    client.close();
  }
  const seconds = (performance.now() - started) / 1000;
  return { count, seconds, perSecond: count / seconds, p50Ms: median(latencies), p99Ms: percentile(latencies, 99) };
}
