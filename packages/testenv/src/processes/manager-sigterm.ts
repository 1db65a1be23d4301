/**
 * A manager with a cache-like runnable, a controller and signal handlers, for the SIGTERM test. It prints
 * `{"url": …}` once ready and `{"stopped": true}` after a clean stop, and never calls process.exit: the
 * process ends on its own only if the manager left nothing running.
 */
import { Controller } from '@certkit/runtime/manager/controller';
import { Manager, type Runnable } from '@certkit/runtime/manager/manager';
import { MetricsRegistry } from '@certkit/runtime/manager/metrics';

const metrics = new MetricsRegistry();
const cache: Runnable = {
  start: (signal) =>
    new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
  waitForSync: async () => true,
};
const controller = new Controller({
  name: 'sigterm',
  metrics,
  log: () => {},
  reconcile: async () => ({ requeueAfter: 50 }),
});
const manager = new Manager({
  metrics,
  metricsBindAddress: '127.0.0.1:0',
  installSignalHandlers: true,
  log: () => {},
});
manager.add(cache);
manager.add(controller);
const done = manager.start();
controller.enqueue({ name: 'tick' });
const url = await manager.listening;
while (!manager.synced) await new Promise((r) => setTimeout(r, 5));
console.log(JSON.stringify({ url }));
await done;
console.log(JSON.stringify({ stopped: true }));
