/**
 * configmap-copier: a Kubernetes controller written only against the public API of `@certkit/runtime` and
 * `@certkit/apimachinery`, as an installed copy of them offers it (the root README's "Write your own
 * controller" walks through it).
 *
 * Every ConfigMap in the source namespace labelled `configmap-copier.example.com/copy: "true"` is copied,
 * with its data, into every other namespace, and kept that way: a new namespace gets the copies, an edited
 * or deleted copy is put back, an edited source is copied again, and a source that is deleted or loses
 * its label takes its copies with it.
 *
 *   node controller.ts [--kubeconfig FILE] [--source-namespace default] [--metrics-bind-address 127.0.0.1:8080]
 *
 * Without --kubeconfig it finds the cluster as controller-runtime does: $KUBECONFIG, else the pod's service
 * account, else ~/.kube/config. It stops cleanly on SIGTERM or Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { isAlreadyExists, isNotFound, type KubeObject, type StoredObject } from '@certkit/apimachinery';
import {
  builtins,
  Controller,
  isDeletedFinalStateUnknown,
  jsonLogger,
  KubeClient,
  loadClientConfig,
  Manager,
  newCache,
  type Reconciler,
} from '@certkit/runtime';
import type { ConfigMap, Namespace } from 'kubernetes-types/core/v1.d.ts';

/** One label key on both sides: "true" on a source, "copied" on a copy, so that one cache holds both. */
const COPY_LABEL = 'configmap-copier.example.com/copy';
/** On a copy: the `namespace/name` of its source. */
const SOURCE_ANNOTATION = 'configmap-copier.example.com/source';
const FIELD_MANAGER = 'configmap-copier';

/** Objects as the API server returns them: metadata always present. */
type Stored<T> = T & StoredObject;

const { values: flags } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    'source-namespace': { type: 'string', default: 'default' },
    'metrics-bind-address': { type: 'string', default: '127.0.0.1:8080' },
  },
});
const sourceNamespace = flags['source-namespace'];
const log = jsonLogger('info');

const client = new KubeClient(await loadClientConfig({ path: flags.kubeconfig }));
const configMaps = client.resource<Stored<ConfigMap>>(builtins.configMaps);

// The cache lists and watches Namespaces, and only the ConfigMaps that carry the copy label (sources and
// copies): the reconciler reads from memory, and unrelated ConfigMaps are never held.
const cache = await newCache({
  client,
  log,
  byObject: { 'v1/ConfigMap': { label: COPY_LABEL } },
});

function nameOf(obj: KubeObject): string {
  return obj.metadata?.name ?? '';
}

/** The copy that `source` should have in `namespace`. */
function desiredCopy(source: Stored<ConfigMap>, namespace: string): Stored<ConfigMap> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      namespace,
      name: nameOf(source),
      labels: { [COPY_LABEL]: 'copied' },
      annotations: { [SOURCE_ANNOTATION]: `${sourceNamespace}/${nameOf(source)}` },
    },
    data: source.data ?? {},
    binaryData: source.binaryData ?? {},
  };
}

/** Whether a copy already says what the source says (data, binaryData, and the label marking it a copy). */
function upToDate(copy: Stored<ConfigMap>, want: Stored<ConfigMap>): boolean {
  return (
    JSON.stringify(copy.data ?? {}) === JSON.stringify(want.data) &&
    JSON.stringify(copy.binaryData ?? {}) === JSON.stringify(want.binaryData) &&
    copy.metadata.labels?.[COPY_LABEL] === 'copied'
  );
}

/** The namespace from the cache, or undefined when the cluster has none of that name. */
async function cachedNamespace(name: string): Promise<Stored<Namespace> | undefined> {
  try {
    return await cache.get<Stored<Namespace>>('v1', 'Namespace', { name });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Reconciles one namespace (the request's name): creates or updates a copy of every source, and deletes the
 * copies whose source is gone. A thrown error makes the controller retry the namespace with backoff.
 */
const reconcile: Reconciler = async ({ name: namespace }) => {
  if (namespace === sourceNamespace) return;
  const ns = await cachedNamespace(namespace);
  if (!ns || ns.metadata.deletionTimestamp) return; // gone or going: nothing may be created in it
  const { items: sources } = await cache.list<Stored<ConfigMap>>('v1', 'ConfigMap', {
    namespace: sourceNamespace,
    labelSelector: `${COPY_LABEL}=true`,
  });
  const { items: copies } = await cache.list<Stored<ConfigMap>>('v1', 'ConfigMap', {
    namespace,
    labelSelector: `${COPY_LABEL}=copied`,
  });
  for (const source of sources) {
    const want = desiredCopy(source, namespace);
    const have = copies.find((copy) => nameOf(copy) === nameOf(want));
    if (!have) {
      try {
        await configMaps.create(namespace, want, { fieldManager: FIELD_MANAGER });
        log({ level: 'info', msg: 'copied', namespace, name: nameOf(want) });
      } catch (err) {
        // A ConfigMap of that name that is no copy of ours: leave it alone (the cache does not hold it).
        if (!isAlreadyExists(err)) throw err;
      }
    } else if (!upToDate(have, want)) {
      // Update from the cached object: its resourceVersion makes a concurrent change a 409, and a retry.
      const labels = { ...have.metadata.labels, ...want.metadata.labels };
      await configMaps.update(
        { ...have, metadata: { ...have.metadata, labels }, data: want.data, binaryData: want.binaryData },
        { fieldManager: FIELD_MANAGER },
      );
      log({ level: 'info', msg: 'updated copy', namespace, name: nameOf(want) });
    }
  }
  for (const copy of copies) {
    const ours = copy.metadata.annotations?.[SOURCE_ANNOTATION]?.startsWith(`${sourceNamespace}/`);
    if (!ours || sources.some((source) => nameOf(source) === nameOf(copy))) continue;
    try {
      await configMaps.delete(namespace, nameOf(copy), { preconditions: { uid: copy.metadata.uid } });
      log({ level: 'info', msg: 'deleted copy', namespace, name: nameOf(copy) });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
};

const controller = new Controller({ name: 'configmap-copier', reconcile, log });

/** A source changed: every namespace's copy may need work. */
async function enqueueAllNamespaces(): Promise<void> {
  const { items } = await cache.list<Stored<Namespace>>('v1', 'Namespace');
  for (const ns of items) controller.enqueue({ name: nameOf(ns) });
}

function onConfigMap(cm: KubeObject): void {
  const namespace = cm.metadata?.namespace ?? '';
  if (namespace !== sourceNamespace)
    controller.enqueue({ name: namespace }); // a copy changed
  else enqueueAllNamespaces().catch((err: unknown) => log({ level: 'error', msg: 'enqueue', err }));
}

const namespaces = await cache.getInformer<Stored<Namespace>>('v1', 'Namespace');
namespaces.addEventHandler({ onAdd: (ns) => controller.enqueue({ name: nameOf(ns) }) });
const labelledConfigMaps = await cache.getInformer<Stored<ConfigMap>>('v1', 'ConfigMap');
labelledConfigMaps.addEventHandler({
  onAdd: onConfigMap,
  onUpdate: (_old, cm) => onConfigMap(cm),
  onDelete: (cm) => {
    // Learnt of by a relist, the deletion may carry only the last state cached, or none.
    const last = isDeletedFinalStateUnknown(cm) ? cm.obj : cm;
    if (last) onConfigMap(last);
  },
});

const manager = new Manager({
  metricsBindAddress: flags['metrics-bind-address'],
  installSignalHandlers: true,
  log,
});
manager.add(cache);
manager.add(controller);
log({ level: 'info', msg: 'starting', sourceNamespace });
try {
  await manager.start();
} finally {
  client.close();
}
log({ level: 'info', msg: 'stopped' });
