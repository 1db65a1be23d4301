import { readFileSync, writeFileSync } from 'node:fs';
import { defaultRegistry, KubeClient, loadKubeconfig, MetricsRegistry, silentLogger } from '@certkit/runtime';
import { clientRequestMetrics, startCertificateController } from '../packages/certificates/src/controller.ts';
import type { SecretCache } from '../packages/certificates/src/secrets/split-cache.ts';
import { parseClusterFlags } from '../packages/cli/src/cluster-flags.ts';
import { CONTROLLER_FLAG_OPTIONS, controllerFlags } from '../packages/cli/src/commands/controller-flags.ts';

/**
 * The certificate controller as `certkit controller` runs it (same flags, same client settings, same
 * startCertificateController), in a process of its own for bench/memory.ts and bench/issuance.ts, plus what
 * the benches need to see inside it, over the IPC channel the parent opens:
 *
 *   { cmd: 'measure' }      heap after forced GCs have settled, VmRSS and VmHWM (needs --expose-gc)
 *   { cmd: 'reset-peak' }   VmHWM back to the current RSS (/proc/self/clear_refs), to time a peak
 *   { cmd: 'metrics' }      the /metrics text, with certkit_client_requests_total wired to the client, and
 *                           the controllers' own (workqueue_*, controller_runtime_*): they register in the
 *                           runtime's default registry, which the manager does not serve when given another
 *   { cmd: 'seen', key, resourceVersion }   whether a Secret cache holds `namespace/name` at that version
 *   { cmd: 'stats' }        objects in the Secret caches
 *   { cmd: 'exit' }         stops the manager and exits 0 (so that --cpu-prof writes its profile)
 *
 * Sends { type: 'synced', ms } once every informer has synced. Used as:
 *   node --expose-gc bench/controller-probe.ts --kubeconfig FILE --leader-elect=false [controller flags]
 */

const started = performance.now();
const flags = parseClusterFlags(process.argv.slice(2), CONTROLLER_FLAG_OPTIONS);
const settings = controllerFlags(flags.values);
const config = await loadKubeconfig({ path: flags.kubeconfig, context: flags.context });
const metrics = new MetricsRegistry();
const client = new KubeClient({
  ...config,
  qps: settings.qps,
  burst: settings.burst,
  onRequest: clientRequestMetrics(metrics),
});
const running = startCertificateController(client, {
  ...settings.options,
  namespace: flags.namespace,
  metrics,
  // As `certkit controller`: a probe started with --no-turbofan --maglev-filter=-* (--controller-node-args) turns
  // them on at its first work, as the shipped controller does (docs/adr/1133); harmless otherwise.
  enableOptimizingCompilersOnFirstWork: true,
  log: process.env.CERTKIT_BENCH_LOG ? undefined : silentLogger,
});
const secrets = running.context.secrets as SecretCache;

function status(field: 'VmRSS' | 'VmHWM'): number {
  const text = readFileSync('/proc/self/status', 'utf8');
  return (Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024) / (1024 * 1024);
}

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  // Several rounds, with turns of the event loop between them, so that finalizers and weak callbacks run
  // and what they free is collected too; then a pause for the allocator to give pages back.
  for (let i = 0; i < 6; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 300));
  gc();
}

type Request = { id: number; cmd: string; key?: string; resourceVersion?: string };

process.on('message', (raw) => {
  const msg = raw as Request;
  const reply = (body: Record<string, unknown>) => process.send!({ id: msg.id, ...body });
  void (async () => {
    switch (msg.cmd) {
      case 'measure': {
        await settle();
        const mem = process.memoryUsage();
        reply({
          heapUsed: mem.heapUsed,
          heapTotal: mem.heapTotal,
          external: mem.external,
          arrayBuffers: mem.arrayBuffers,
          rssMiB: status('VmRSS'),
          hwmMiB: status('VmHWM'),
        });
        break;
      }
      case 'reset-peak':
        // "5" resets the peak resident set size to the current one (proc(5), /proc/pid/clear_refs).
        writeFileSync('/proc/self/clear_refs', '5');
        reply({ rssMiB: status('VmRSS'), hwmMiB: status('VmHWM') });
        break;
      case 'metrics':
        reply({ text: metrics.render() + defaultRegistry.render() });
        break;
      case 'seen': {
        const stores = [secrets.full.getStore(), secrets.metadata?.getStore()];
        const found = stores.some(
          (store) => store?.get(msg.key ?? '')?.metadata?.resourceVersion === msg.resourceVersion,
        );
        reply({ seen: found });
        break;
      }
      case 'stats':
        reply({ full: secrets.full.getStore().size, metadata: secrets.metadata?.getStore().size ?? 0 });
        break;
      case 'exit':
        await running.stop();
        client.close();
        reply({});
        process.exit(0);
      default:
        reply({ error: `unknown command ${msg.cmd}` });
    }
  })().catch((err: unknown) => reply({ error: String(err) }));
});

const synced = () => running.context.factory.informers().every((i) => i.hasSynced()) && secrets.hasSynced();
while (!synced()) await new Promise((r) => setTimeout(r, 10));
process.send!({ type: 'synced', ms: Math.round(performance.now() - started) });
running.done.catch((err: unknown) => {
  process.stderr.write(`controller stopped: ${String(err)}\n`);
  process.exit(1);
});
