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

/**
 * How often prom-client's event loop monitor (perf_hooks.monitorEventLoopDelay, behind the
 * nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds gauges) wakes the process to time itself.
 * prom-client's 10 ms wakes an idle controller 100 times a second, which costs it 3-4 ms of CPU each second
 * (bench:controller-idle); at 100 ms that is 0.4, and a scrape every 15 s still rests on 150 samples.
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

let defaults: Registry | undefined;

function processRegistry(): Registry {
  if (!defaults) {
    defaults = new Registry();
    collectDefaultMetrics({
      register: defaults,
      eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS,
    });
  }
  return defaults;
}

/** Adds the process metrics to `registry`'s scrapes (once, however often it is called). */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  const source = processRegistry();
  registry.addCollector('process', () => source.metrics());
}
