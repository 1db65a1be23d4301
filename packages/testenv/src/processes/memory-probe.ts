/**
 * Child process of runtime's informers/memory.e2e.test.ts (run with --expose-gc): measures how much the heap grows when one
 * informer over all Secrets syncs, in the mode given, against the server of the given kubeconfig. Prints
 * one JSON line. The server runs in the parent, so nothing but the client and the informer is measured.
 *
 *   node --expose-gc memory-probe.ts <kubeconfig> <full|metadata>
 */
import { getHeapStatistics } from 'node:v8';
import { KubeClient } from '@certkit/runtime/client/kube-client';
import { loadKubeconfig } from '@certkit/runtime/client/kubeconfig';
import type { ReadMode } from '@certkit/runtime/client/types';
import { SharedInformerFactory } from '@certkit/runtime/informers/factory';
import { silentLogger } from '@certkit/runtime/log';

const [kubeconfig, modeArg] = process.argv.slice(2);
const mode: ReadMode = modeArg === 'full' ? 'full' : 'metadata';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

async function settledHeap(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!();
    await new Promise((r) => setImmediate(r));
  }
  return getHeapStatistics().used_heap_size;
}

async function syncInformer(client: KubeClient, kind: string, readMode: ReadMode) {
  const resource = await client.forKind('v1', kind, readMode);
  const factory = new SharedInformerFactory({ client, log: silentLogger });
  const informer = factory.informerFor(resource);
  const controller = new AbortController();
  factory.start(controller.signal);
  if (!(await informer.waitForSync(AbortSignal.timeout(60_000))))
    throw new Error(`${kind} informer did not sync`);
  return {
    informer,
    stop: async () => {
      controller.abort();
      await factory.stopped();
    },
  };
}

const client = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
// Warm up every code path (discovery, TLS, list, watch, informer) on a small kind, so that the baseline
// already holds the code and the connection pool and only the cached objects make the difference.
const warmup = await syncInformer(client, 'ConfigMap', mode);
await warmup.stop();
await client.forKind('v1', 'Secret', mode);

const before = await settledHeap();
const started = performance.now();
const { informer, stop } = await syncInformer(client, 'Secret', mode);
const syncMs = performance.now() - started;
const after = await settledHeap();
const objects = informer.getStore().size;
process.stdout.write(
  `${JSON.stringify({ mode, objects, heapGrowthBytes: after - before, syncMs: Math.round(syncMs) })}\n`,
);
await stop();
client.close();
