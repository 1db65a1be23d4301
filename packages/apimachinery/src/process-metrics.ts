import { setTimeout as sleep } from 'node:timers/promises';
import type { Registry } from 'prom-client';
import type { MetricsRegistry } from './metrics.ts';

/**
 * The process_* and nodejs_* metrics users of a Node.js service expect on its /metrics (CPU, resident and
 * virtual memory, open file descriptors, start time, heap spaces, event loop lag, GC durations, active
 * handles, version), exactly as prom-client's default collectors give them: dashboards for Node.js services
 * are written against these. They describe the process, not a registry, so one set is collected per process
 * (prom-client's GC observer and event loop monitor start once) and shared by every registry that serves
 * them. prom-client is imported, and its collectors started, at the first scrape: with @opentelemetry/api,
 * which it loads for its CPU counter, it is ~90 modules that an idle controller would otherwise keep from its
 * start whether or not anything scrapes it (docs/adr/1101-controller-process-setup.md). The counters read the
 * process's totals (CPU, start time, memory, descriptors), so they are the same from the first scrape on; the
 * GC histogram and the event loop lag cover the time since that scrape (the first waits 0.3 s for the event
 * loop monitor's first samples); prom-client resets the lag at every scrape anyway.
 */

/**
 * How often prom-client's event loop monitor (perf_hooks.monitorEventLoopDelay, behind the
 * nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds gauges) wakes the process to time itself.
 * prom-client's 10 ms wakes an idle controller 100 times a second, which costs it 3-4 ms of CPU each second
 * (bench:controller-idle); at 100 ms that is 0.4, and a scrape every 15 s still rests on 150 samples.
 */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

let defaults: Promise<Registry> | undefined;

function processRegistry(): Promise<Registry> {
  return (defaults ??= import('prom-client')
    .then(({ collectDefaultMetrics, Registry }) => {
      const registry = new Registry();
      collectDefaultMetrics({
        register: registry,
        eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS,
      });
      return registry;
    })
    .then(async (registry) => {
      // The event loop monitor has no samples yet: its gauges would read 0 and 2^63 ns. A few periods of it.
      await sleep(3 * EVENT_LOOP_MONITORING_PRECISION_MS);
      return registry;
    }));
}

/** Adds the process metrics to `registry`'s scrapes (once, however often it is called). */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  registry.addCollector('process', async () => (await processRegistry()).metrics());
}
