import { readFileSync } from 'node:fs';
import type { V1Secret } from '@kubernetes/client-node';

/**
 * One measurement of bench/runtime.ts, in a process of its own so its peak RSS is its own:
 *   node --expose-gc bench/runtime-probe.ts <metadata|full|client-node|cache|workqueue> <kubeconfig> <namespace>
 * Prints one JSON line.
 */

const [mode, kubeconfigPath, namespace, count = '30000'] = process.argv.slice(2);
const objects = Number(count);

function peakRssMiB(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

function heapMiB(): number {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

const baselineHeap = heapMiB();
const baselineRss = peakRssMiB();
const result: Record<string, unknown> = { mode };

// Each mode loads only its own libraries, so one library's code does not count against another's memory.
if (mode === 'metadata' || mode === 'full') {
  const builtins = await import('../packages/runtime/src/client/builtins.ts');
  const { KubeClient } = await import('../packages/runtime/src/client/kube-client.ts');
  const { loadKubeconfig } = await import('../packages/runtime/src/client/kubeconfig.ts');
  const { SharedInformerFactory } = await import('../packages/runtime/src/informers/factory.ts');
  const client = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfigPath })), qps: -1 });
  const factory = new SharedInformerFactory({ client });
  const informer = factory.informerFor(builtins.secrets, { mode, namespace });
  const controller = new AbortController();
  const started = performance.now();
  factory.start(controller.signal);
  await informer.waitForSync(controller.signal);
  result.syncMs = Math.round(performance.now() - started);
  result.objects = informer.getStore().size;
  result.heapGrowthMiB = Number((heapMiB() - baselineHeap).toFixed(1));
  controller.abort();
  client.close();
} else if (mode === 'client-node') {
  const { CoreV1Api, KubeConfig, makeInformer } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Secret>(kc, `/api/v1/namespaces/${namespace}/secrets`, () =>
    core.listNamespacedSecret({ namespace }),
  );
  const started = performance.now();
  await informer.start();
  result.syncMs = Math.round(performance.now() - started);
  result.objects = informer.list(namespace).length;
  result.heapGrowthMiB = Number((heapMiB() - baselineHeap).toFixed(1));
  await informer.stop();
} else if (mode === 'cache') {
  const { KubeClient } = await import('../packages/runtime/src/client/kube-client.ts');
  const { loadKubeconfig } = await import('../packages/runtime/src/client/kubeconfig.ts');
  const { Cache } = await import('../packages/runtime/src/cache/cache.ts');
  const client = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfigPath })), qps: -1 });
  const cache = await Cache.create({ client });
  const controller = new AbortController();
  void cache.start(controller.signal);
  await cache.waitForCacheSync(controller.signal);
  await cache.getInformer('v1', 'Secret');
  const gets = 200_000;
  let started = performance.now();
  for (let i = 0; i < gets; i++) {
    await cache.get('v1', 'Secret', { namespace, name: `s-${String(i % objects).padStart(5, '0')}` });
  }
  result.getsPerSec = Math.round(gets / ((performance.now() - started) / 1000));
  const lists = 20;
  started = performance.now();
  let listed = 0;
  for (let i = 0; i < lists; i++) {
    listed = (await cache.list('v1', 'Secret', { namespace, labelSelector: 'shard=3' })).items.length;
  }
  result.selectiveListsPerSec = Number((lists / ((performance.now() - started) / 1000)).toFixed(1));
  result.selectiveListItems = listed;
  started = performance.now();
  const unsafe = 200;
  for (let i = 0; i < unsafe; i++)
    await cache.list('v1', 'Secret', { namespace, unsafeDisableDeepCopy: true });
  result.fullListsNoCopyPerSec = Number((unsafe / ((performance.now() - started) / 1000)).toFixed(1));
  controller.abort();
  client.close();
} else if (mode === 'workqueue') {
  const { WorkQueue } = await import('../packages/runtime/src/workqueue/queue.ts');
  const queue = new WorkQueue<string>();
  const items = 1_000_000;
  const started = performance.now();
  // One producer adding distinct keys, one worker taking and finishing them: the add → get → done cycle.
  const worker = (async () => {
    for (let processed = 0; processed < items; processed++) {
      const item = await queue.get();
      if (item === undefined) throw new Error('queue shut down early');
      queue.done(item);
    }
  })();
  for (let i = 0; i < items; i++) {
    queue.add(`ns/item-${i}`);
    if (i % 10_000 === 0) await new Promise((r) => setImmediate(r));
  }
  await worker;
  queue.shutDown();
  result.itemsPerSec = Math.round(items / ((performance.now() - started) / 1000));
} else {
  throw new Error(`unknown probe mode ${mode}`);
}

result.peakRssMiB = Math.round(peakRssMiB());
result.peakRssGrowthMiB = Math.round(peakRssMiB() - baselineRss);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
