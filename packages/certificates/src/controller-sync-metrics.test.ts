/**
 * controller-sync-metrics.ts: cert-manager's sync counters per controller, read from the runtime's reconcile
 * counters when scraped.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsRegistry } from '@certkit/apimachinery';
import { ControllerMetrics } from '@certkit/runtime/manager/metrics';
import { registerControllerSyncMetrics } from './controller-sync-metrics.ts';

describe('controller sync metrics', () => {
  it('counts every reconcile as a sync and the failed ones as errors, per controller', async () => {
    const registry = new MetricsRegistry();
    // What the runtime's controllers do: bind their series, then count each reconcile by its result.
    const runtime = new ControllerMetrics(registry);
    runtime.init('certificates-issuing', 5);
    runtime.init('issuers', 5);
    registerControllerSyncMetrics(registry, ['certificates-issuing', 'issuers']);
    const issuing = runtime.forController('certificates-issuing');
    issuing.reconcileTotal.success.inc();
    issuing.reconcileTotal.requeue_after.inc();
    issuing.reconcileTotal.error.inc();
    issuing.reconcileErrors.inc();

    const text = await registry.scrape();
    assert.match(text, /^# TYPE certmanager_controller_sync_call_count counter$/m);
    assert.match(
      text,
      /^# HELP certmanager_controller_sync_call_count The number of sync\(\) calls made by a controller\.$/m,
    );
    assert.match(text, /^# TYPE certmanager_controller_sync_error_count counter$/m);
    const lines = text.split('\n').filter((l) => l.startsWith('certmanager_controller_sync_'));
    assert.deepEqual(lines.sort(), [
      'certmanager_controller_sync_call_count{controller="certificates-issuing"} 3',
      'certmanager_controller_sync_call_count{controller="issuers"} 0',
      'certmanager_controller_sync_error_count{controller="certificates-issuing"} 1',
      'certmanager_controller_sync_error_count{controller="issuers"} 0',
    ]);
  });

  it('takes a second controller set on the same registry, as two controllers in one process register', async () => {
    const registry = new MetricsRegistry();
    const runtime = new ControllerMetrics(registry);
    registerControllerSyncMetrics(registry, ['issuers']);
    registerControllerSyncMetrics(registry, ['issuers', 'orders']);
    runtime.init('orders', 5);
    runtime.forController('orders').reconcileTotal.success.inc();
    const lines = (await registry.scrape())
      .split('\n')
      .filter((l) => l.startsWith('certmanager_controller_sync_call_count'));
    assert.deepEqual(lines.sort(), [
      'certmanager_controller_sync_call_count{controller="issuers"} 0',
      'certmanager_controller_sync_call_count{controller="orders"} 1',
    ]);
  });
});
