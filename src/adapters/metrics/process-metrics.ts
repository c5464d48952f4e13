import { collectDefaultMetrics, Registry } from 'prom-client';

let processRegistry: Registry | undefined;

/**
 * prom-client's default metrics (CPU, memory, heap, event-loop lag, GC, handles) describe the process, not a
 * container, and collecting them starts observers that are never stopped (a GC PerformanceObserver, an event-loop
 * histogram): so they are collected once per process, in a registry of their own, and every container's `/metrics`
 * appends them. A test process building hundreds of apps then starts those observers once, not once per app.
 */
export function processMetricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}
