import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DeliveryObserver } from '../../core/webhooks/delivery-observer.port.ts';
import { processMetricsRegistry } from './process-metrics.ts';

/** One answered HTTP request; `route` is the route's pattern (or `unmatched`), never the raw URL. */
export interface RequestSample {
  surface: string;
  route: string;
  method: string;
  status: number;
  seconds: number;
}

/** Gauges read on each scrape (from the store, the stream registry, the embedder), not kept up to date. */
export interface MetricSources {
  /** Webhook deliveries waiting to be attempted (pending, whether due now or later). */
  pendingDeliveries(): Promise<number>;
  /** Open stream connections of this process (SSE, WebSockets). */
  streamConnections(): number;
  /** The store's size in bytes (Storage.sizeBytes). */
  storeSizeBytes(): Promise<number>;
  /** Texts waiting for the embedding model, when the embedder queues them (the local model); else undefined. */
  embeddingQueuedTexts(): number | undefined;
}

export interface EmbeddingMetrics {
  /** Call when an embed() call starts; call the result with its outcome when it ends. */
  start(texts: number): (outcome: 'ok' | 'error') => void;
}

/** How one call of the reranker ended: answered, one of RerankError's kinds, or given up by the search's deadline. */
export type RerankOutcome = 'ok' | 'timeout' | 'unavailable' | 'refused' | 'bad_answer' | 'aborted';

export interface MnemoMetrics {
  readonly contentType: string;
  recordRequest(sample: RequestSample): void;
  readonly deliveries: DeliveryObserver;
  readonly embedding: EmbeddingMetrics;
  /** One reranker call (hybrid search's cross-encoder) and how long it took. */
  recordRerank(outcome: RerankOutcome, seconds: number): void;
  /** Names what the scrape-time gauges read; until called they read 0. */
  collectFrom(sources: MetricSources): void;
  /** The Prometheus text exposition: this container's metrics, then the process's. */
  render(): Promise<string>;
}

/** Latency buckets (seconds): from a cached read (~1 ms) to a slow search or a remote embedding call (10 s+). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The metrics of one container, in a prom-client Registry of its own (never the global default registry, so that
 * several apps in one process, as in the tests, do not share or collide on counters).
 */
export function createMetrics(options: { embeddingModel: string }): MnemoMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'mnemo_http_requests_total', help: 'HTTP requests answered, by surface, route pattern, method and status.',
    labelNames: ['surface', 'route', 'method', 'status'] as const, registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'mnemo_http_request_duration_seconds', help: 'Time from a request\'s arrival to its answer, by surface, route pattern and method.',
    labelNames: ['surface', 'route', 'method'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
  });
  const deliveries = new Counter({
    name: 'mnemo_webhook_deliveries_total',
    help: 'Webhook deliveries taken by this node\'s worker, by outcome: delivered, failed_retry, failed_final, postponed.',
    labelNames: ['outcome'] as const, registers: [registry],
  });
  // Every outcome is shown from the start (at 0), so that rate() and alerts see the series before the first event.
  for (const outcome of ['delivered', 'failed_retry', 'failed_final', 'postponed']) deliveries.labels(outcome).inc(0);
  const embedSeconds = new Histogram({
    name: 'mnemo_embedding_duration_seconds', help: 'Time of one embed() call (one or more texts), by model and outcome.',
    labelNames: ['model', 'outcome'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
  });
  const embedTexts = new Counter({
    name: 'mnemo_embedding_texts_total', help: 'Texts sent to the embedder, by model.', labelNames: ['model'] as const, registers: [registry],
  });
  const rerankSeconds = new Histogram({
    name: 'mnemo_rerank_duration_seconds',
    help: 'Time of one reranker call of hybrid search, by outcome: ok, timeout, unavailable, refused, bad_answer, aborted (every failure but aborted answered hybrid\'s own order).',
    labelNames: ['outcome'] as const, buckets: LATENCY_BUCKETS, registers: [registry],
  });
  const embedInFlight = new Gauge({
    name: 'mnemo_embedding_requests_in_flight', help: 'embed() calls started and not yet answered (waiting for or in a model call).',
    registers: [registry],
  });

  let sources: MetricSources | undefined;
  /** A source that fails (the store does not answer) reads NaN for that scrape rather than failing the whole scrape. */
  const settle = async (gauge: Gauge, read: () => number | undefined | Promise<number | undefined>): Promise<void> => {
    try {
      gauge.set((await read()) ?? 0);
    } catch {
      gauge.set(Number.NaN);
    }
  };
  new Gauge({
    name: 'mnemo_webhook_queue_depth', help: 'Webhook deliveries pending in the store (every node\'s queue: the store is shared).', registers: [registry],
    async collect() { if (sources) await settle(this, sources.pendingDeliveries); },
  });
  new Gauge({
    name: 'mnemo_stream_connections', help: 'Open stream connections of this process (SSE and WebSockets).', registers: [registry],
    collect() { if (sources) this.set(sources.streamConnections()); },
  });
  new Gauge({
    name: 'mnemo_store_size_bytes', help: 'Size of the store: the SQLite file with its WAL, or the PostgreSQL database.', registers: [registry],
    async collect() { if (sources) await settle(this, sources.storeSizeBytes); },
  });
  new Gauge({
    name: 'mnemo_embedding_queued_texts', help: 'Texts waiting for the local embedding model (0 for embedders without a queue).', registers: [registry],
    collect() { if (sources) this.set(sources.embeddingQueuedTexts() ?? 0); },
  });

  const model = options.embeddingModel;
  return {
    contentType: registry.contentType,
    recordRequest({ surface, route, method, status, seconds }) {
      requests.labels(surface, route, method, String(status)).inc();
      requestSeconds.labels(surface, route, method).observe(seconds);
    },
    deliveries: { outcome: (outcome) => deliveries.labels(outcome).inc() },
    recordRerank(outcome, seconds) {
      rerankSeconds.labels(outcome).observe(seconds);
    },
    embedding: {
      start(texts) {
        const started = process.hrtime.bigint();
        embedTexts.labels(model).inc(texts);
        embedInFlight.inc();
        let ended = false;
        return (outcome) => {
          if (ended) return;
          ended = true;
          embedInFlight.dec();
          embedSeconds.labels(model, outcome).observe(Number(process.hrtime.bigint() - started) / 1e9);
        };
      },
    },
    collectFrom(given) {
      sources = given;
    },
    async render() {
      return `${await registry.metrics()}\n${await processMetricsRegistry().metrics()}`;
    },
  };
}
