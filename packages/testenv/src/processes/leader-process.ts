/**
 * One replica for the multi-process leader election test: a Manager with leader election and a
 * controller, against the kubeconfig given. Prints one JSON line when it starts leading (the controller's
 * first reconcile) and exits as controller-runtime does when leadership is lost.
 *
 * Usage: node leader-process.ts <kubeconfig> <identity> <lease-name>
 */
import { KubeClient } from '@certkit/runtime/client/kube-client';
import { loadKubeconfig } from '@certkit/runtime/client/kubeconfig';
import { Controller } from '@certkit/runtime/manager/controller';
import { LEASE_RESOURCE, type Lease } from '@certkit/runtime/manager/leader-election';
import { Manager } from '@certkit/runtime/manager/manager';
import { MetricsRegistry } from '@certkit/runtime/manager/metrics';

const [kubeconfig, identity, leaseName] = process.argv.slice(2);
const client = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
const metrics = new MetricsRegistry();
const controller = new Controller({
  name: 'leader-demo',
  metrics,
  reconcile: () => {
    console.log(JSON.stringify({ leading: identity, at: Date.now() }));
  },
});
// Queued before leadership; reconciled only once this replica leads.
controller.enqueue({ name: 'hello' });

const manager = new Manager({
  metrics,
  metricsBindAddress: '0',
  installSignalHandlers: true,
  onLeadershipLost: 'exit',
  leaderElection: {
    client: client.resource<Lease>(LEASE_RESOURCE),
    id: leaseName,
    namespace: 'default',
    identity,
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 200,
  },
});
manager.add(controller);
console.log(JSON.stringify({ started: identity }));
await manager.start();
client.close();
