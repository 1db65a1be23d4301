import type { MetricsRegistry } from '@certkit/runtime';
import { ControllerMetrics, type ReconcileResult } from '@certkit/runtime/manager/metrics';

/**
 * cert-manager's per-controller counters, `certmanager_controller_sync_call_count` and
 * `certmanager_controller_sync_error_count` (label `controller`), which cert-manager dashboards and alerts
 * plot per controller. The runtime already counts the same events under controller-runtime's names
 * (controller_runtime_reconcile_total by result, controller_runtime_reconcile_errors_total): these are read
 * from those when scraped, so a reconcile updates nothing more. A sync is a reconcile, whatever its result;
 * an error is one that returned an error, as cert-manager counts a sync() that did.
 */

const RESULTS: readonly ReconcileResult[] = ['success', 'error', 'requeue', 'requeue_after'];

/** The controllers reported per registry: several controllers in one process (tests, benches) share one. */
const reported = new WeakMap<MetricsRegistry, Set<string>>();

export function registerControllerSyncMetrics(
  metrics: MetricsRegistry,
  controllers: readonly string[],
): void {
  const names = reported.get(metrics);
  if (names) {
    // Registered already: the series read the runtime's counters, which the controllers of a registry share.
    for (const name of controllers) names.add(name);
    return;
  }
  const all = new Set(controllers);
  reported.set(metrics, all);
  // The runtime's own series (get-or-create: the same metrics its controllers update).
  const reconciles = new ControllerMetrics(metrics);
  metrics.counterFunc(
    'certmanager_controller_sync_call_count',
    'The number of sync() calls made by a controller.',
    () =>
      [...all].map((controller) => [
        { controller },
        RESULTS.reduce((sum, result) => sum + reconciles.reconcileTotal.get({ controller, result }), 0),
      ]),
  );
  metrics.counterFunc(
    'certmanager_controller_sync_error_count',
    'The number of errors encountered during controller sync().',
    () => [...all].map((controller) => [{ controller }, reconciles.reconcileErrors.get({ controller })]),
  );
}
