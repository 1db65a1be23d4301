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

export function registerControllerSyncMetrics(
  metrics: MetricsRegistry,
  controllers: readonly string[],
): void {
  // The runtime's own series (get-or-create: the same metrics its controllers update).
  const reconciles = new ControllerMetrics(metrics);
  metrics.counterFunc(
    'certmanager_controller_sync_call_count',
    'The number of sync() calls made by a controller.',
    () =>
      controllers.map((controller) => [
        { controller },
        RESULTS.reduce((sum, result) => sum + reconciles.reconcileTotal.get({ controller, result }), 0),
      ]),
  );
  metrics.counterFunc(
    'certmanager_controller_sync_error_count',
    'The number of errors encountered during controller sync().',
    () => controllers.map((controller) => [{ controller }, reconciles.reconcileErrors.get({ controller })]),
  );
}
