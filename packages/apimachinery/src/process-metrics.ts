import { collectDefaultMetrics, Registry } from 'prom-client';
import type { MetricsRegistry } from './metrics.ts';

/**
 * The process_* and nodejs_* metrics users of a Node.js service expect on its /metrics (CPU, resident and
 * virtual memory, open file descriptors, start time, heap spaces, event loop lag, GC durations, active
 * handles, version), exactly as prom-client's default collectors give them: dashboards for Node.js services
 * are written against these. They describe the process, not a registry, so one set is collected per process
 * (prom-client's GC observer and event loop monitor start once) and shared by every registry that serves
 * them. A separate module, so that only what serves /metrics loads prom-client.
 */

let defaults: Registry | undefined;

function processRegistry(): Registry {
  if (!defaults) {
    defaults = new Registry();
    collectDefaultMetrics({ register: defaults });
  }
  return defaults;
}

/** Adds the process metrics to `registry`'s scrapes (once, however often it is called). */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  const source = processRegistry();
  registry.addCollector('process', () => source.metrics());
}
