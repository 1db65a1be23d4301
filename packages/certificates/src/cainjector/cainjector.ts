import { isNotFound, type KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  Controller,
  defaultRegistry,
  isDeletedFinalStateUnknown,
  type KubeClient,
  type Logger,
  Manager,
  type ManagerOptions,
  type MetricsRegistry,
  type Request,
  type SharedInformer,
  SharedInformerFactory,
  silentLogger,
} from '@certkit/runtime';
import { Annotations } from '../api/constants.ts';
import { mergeCABundle } from './bundle.ts';
import { INJECTABLES, type Injectable, type InjectableName, stripTarget } from './injectables.ts';
import { readCA } from './read-ca.ts';
import { caSourceFor } from './sources.ts';

/**
 * cert-manager's cainjector on certkit's runtime: a controller per injectable kind (validating and mutating
 * webhook configurations, CRDs with a conversion webhook, APIServices) that writes the CA of the source a
 * target's annotation names into the target's caBundle fields, by server-side apply under the field manager
 * `cert-manager-cainjector`, merged with the bundle already there (docs/adr/1880).
 *
 * What it keeps in memory is small on purpose: targets and Secrets are watched as metadata only, targets
 * stripped to their source annotations and Secrets to the two annotations that map a Secret to targets. An
 * annotated target, and the Secret (and Certificate) it names, are read live when the target is reconciled.
 */

/** The field manager of every write, cainjector's: ownership of the caBundle fields follows it. */
export const CAINJECTOR_FIELD_MANAGER = 'cert-manager-cainjector';
/** cainjector's Lease, in `--leader-election-namespace`. */
export const CAINJECTOR_LEASE = 'cert-manager-cainjector-leader-election';

/** Index of targets by the value of their inject-ca-from-secret annotation (`NS/NAME`). */
const BY_SECRET = 'inject-ca-from-secret';
/** Index of targets by the value of their inject-ca-from annotation (`NS/NAME` of a Certificate). */
const BY_CERTIFICATE = 'inject-ca-from';

export interface CAInjectorOptions {
  /** The kinds to inject into (cainjector's `--enable-*-injectable`); default all four. */
  injectables?: ReadonlySet<InjectableName>;
  /** `--enable-certificates-data-source` (default true): whether inject-ca-from is honoured. */
  certificatesDataSource?: boolean;
  /** `--namespace`: read sources only there, and watch only its Secrets. */
  namespace?: string;
  /** `--ignore-namespaces`: never read sources there. */
  ignoreNamespaces?: readonly string[];
  /**
   * CAInjectorMerging (default true): a new CA joins the bundle a target holds; false: it replaces the bundle.
   */
  mergeBundles?: boolean;
  /** The CA of inject-apiserver-ca: default the client's own (`client.config.ca`). */
  apiserverCA?: string;
  leaderElection?: {
    namespace: string;
    identity?: string;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
  };
  /** Where /healthz, /readyz and /metrics are served; '0' disables (default 127.0.0.1:9402). */
  metricsBindAddress?: string;
  installSignalHandlers?: boolean;
  metrics?: MetricsRegistry;
  log?: Logger;
}

export interface RunningCAInjector {
  manager: Manager;
  /** Resolves when the manager stops; rejects with what stopped it. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Secrets as the cache keeps them: name, version, and the two annotations that lead to targets. */
function stripSecret(obj: KubeObject): KubeObject {
  const { name, namespace, resourceVersion, annotations } = obj.metadata ?? {};
  const kept: Record<string, string> = {};
  for (const key of [Annotations.certificateName, Annotations.allowDirectInjection]) {
    if (annotations?.[key] !== undefined) kept[key] = annotations[key];
  }
  return {
    metadata: {
      name,
      namespace,
      resourceVersion,
      ...(Object.keys(kept).length ? { annotations: kept } : {}),
    },
  };
}

function annotationIndex(annotation: string) {
  return (obj: KubeObject): readonly string[] => {
    const value = obj.metadata?.annotations?.[annotation];
    return value === undefined ? [] : [value];
  };
}

/** The controller of one injectable kind: reconciles one target by name. */
function injectorFor(
  injectable: Injectable,
  targets: SharedInformer,
  client: KubeClient,
  settings: {
    certificates: boolean;
    namespace?: string;
    ignoreNamespaces: ReadonlySet<string>;
    apiserverCA?: string;
    mergeBundles: boolean;
    log: Logger;
  },
): Controller {
  const log = settings.log;
  const resource = client.resource(injectable.ref);

  async function reconcile(request: Request): Promise<void> {
    const cached = targets.getStore().get(request.name);
    // Gone or going, or asking for nothing (most CRDs): nothing to inject into, and nothing to read.
    if (!cached || cached.metadata?.deletionTimestamp) return;
    if (!caSourceFor(cached, { certificates: settings.certificates })) return;
    let target: KubeObject;
    try {
      target = await resource.get(undefined, request.name);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (target.metadata?.deletionTimestamp) return;
    const source = caSourceFor(target, { certificates: settings.certificates });
    if (!source) return;
    const described = `${injectable.ref.kind}/${request.name}`;
    if (source.kind === 'invalid') {
      log({
        level: 'error',
        msg: `invalid ${source.annotation} annotation: expected NAMESPACE/NAME`,
        target: described,
        value: source.value,
      });
      return;
    }
    const current = injectable.bundles(target);
    if (current.length === 0) return; // a CRD without a conversion webhook
    const ca = await readCA({ ...settings, client }, source, described);
    if (!ca) return;
    const bundles = current.map((bundle) =>
      (settings.mergeBundles
        ? mergeCABundle(bundle ? Buffer.from(bundle, 'base64') : undefined, ca)
        : ca
      ).toString('base64'),
    );
    // Applying what is already there would change nothing: skip the write.
    if (bundles.every((bundle, i) => bundle === current[i])) return;
    await resource.patch(undefined, request.name, 'apply', injectable.applyConfiguration(target, bundles), {
      fieldManager: 'cert-manager-cainjector',
      force: true,
    });
    log({ level: 'info', msg: 'Updated object', target: described, source: source.kind });
  }

  return new Controller({ name: injectable.name, reconcile, log });
}

/**
 * Starts the cainjector on `client`: its caches on every replica, its controllers while it leads (with
 * `leaderElection`). Resolves nothing; `done` settles when it stops.
 */
export function startCAInjector(client: KubeClient, options: CAInjectorOptions = {}): RunningCAInjector {
  const log = options.log ?? silentLogger;
  const metrics = options.metrics ?? defaultRegistry;
  const factory = new SharedInformerFactory({ client, log });
  const enabled = INJECTABLES.filter((i) => options.injectables?.has(i.name) ?? true);
  const settings = {
    certificates: options.certificatesDataSource ?? true,
    namespace: options.namespace,
    ignoreNamespaces: new Set(options.ignoreNamespaces ?? []),
    apiserverCA: options.apiserverCA ?? client.config.ca,
    mergeBundles: options.mergeBundles ?? true,
    log,
  };

  const managerOptions: ManagerOptions = {
    metricsBindAddress: options.metricsBindAddress ?? '127.0.0.1:9402',
    installSignalHandlers: options.installSignalHandlers ?? false,
    metrics,
    log,
    onLeadershipLost: 'exit',
  };
  if (options.leaderElection) {
    managerOptions.leaderElection = {
      client: client.resource(builtins.leases),
      id: CAINJECTOR_LEASE,
      ...options.leaderElection,
      // As cainjector: a replica that stops cleanly hands the Lease over at once.
      releaseOnCancel: true,
    };
  }
  const manager = new Manager(managerOptions);

  // Secrets as metadata only: all a Secret's event needs is which targets it leads to.
  const secrets = factory.metadataInformer(builtins.secrets, {
    namespace: options.namespace,
    transform: stripSecret,
  });
  const controllers: { controller: Controller; targets: SharedInformer }[] = [];
  for (const injectable of enabled) {
    const targets = factory.metadataInformer(injectable.ref, {
      transform: stripTarget,
      indexers: {
        [BY_SECRET]: annotationIndex(Annotations.injectCAFromSecret),
        [BY_CERTIFICATE]: annotationIndex(Annotations.injectCAFrom),
      },
    });
    const controller = injectorFor(injectable, targets, client, settings);
    // Only targets that ask for a CA are queued: a cluster's other CRDs and webhooks cost no reconcile.
    const enqueue = (obj: KubeObject) => {
      if (caSourceFor(obj, { certificates: settings.certificates }))
        controller.enqueue({ name: obj.metadata?.name ?? '' });
    };
    targets.addEventHandler({
      onAdd: enqueue,
      onUpdate: (old, obj) => {
        if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) enqueue(obj);
      },
    });
    controllers.push({ controller, targets });
  }

  // A Secret changed: the targets that name it, and those that name the Certificate it belongs to.
  const onSecret = (secret: KubeObject) => {
    const key = `${secret.metadata?.namespace}/${secret.metadata?.name}`;
    const certificate = secret.metadata?.annotations?.[Annotations.certificateName];
    for (const { controller, targets } of controllers) {
      const store = targets.getStore();
      for (const name of store.indexKeys(BY_SECRET, key)) controller.enqueue({ name });
      if (certificate !== undefined && settings.certificates) {
        const owner = `${secret.metadata?.namespace}/${certificate}`;
        for (const name of store.indexKeys(BY_CERTIFICATE, owner)) controller.enqueue({ name });
      }
    }
  };
  secrets.addEventHandler({
    onAdd: onSecret,
    onUpdate: (old, secret) => {
      if (old.metadata?.resourceVersion === secret.metadata?.resourceVersion) return;
      onSecret(secret);
      // Its certificate-name annotation changed: the Certificate it left may need looking at too.
      if (
        old.metadata?.annotations?.[Annotations.certificateName] !==
        secret.metadata?.annotations?.[Annotations.certificateName]
      )
        onSecret(old);
    },
    onDelete: (secret) => {
      const last = isDeletedFinalStateUnknown(secret) ? secret.obj : secret;
      if (last) onSecret(last as KubeObject);
    },
  });

  manager.add({
    needLeaderElection: false,
    async start(signal) {
      factory.start(signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await factory.stopped();
    },
    waitForSync: (signal) => factory.waitForCacheSync(signal),
  });
  for (const { controller } of controllers) manager.add(controller);
  const done = manager.start();
  return { manager, done, stop: () => manager.stop() };
}
