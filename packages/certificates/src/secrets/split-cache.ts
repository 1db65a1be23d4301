import { isNotFound, type KubeObject, parseLabelSelector } from '@certkit/apimachinery';
import {
  builtins,
  type DeletedFinalStateUnknown,
  defaultLogger,
  isDeletedFinalStateUnknown,
  keyFor,
  type Logger,
  NAMESPACE_INDEX,
  type ReadMode,
  type ResourceClient,
  type ResourceEventHandler,
  type ResourceRef,
  type SharedInformer,
  type SharedInformerFactory,
} from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { leanSecret } from '../controllers/cache-transforms.ts';
import type { CachedSecret, SecretGetter } from '../controllers/context.ts';
import { isStrippedSecret } from '../controllers/secret-facts.ts';
import { type SecretStub, stubForKey, toSecretStub } from './metadata-stub.ts';
import { RecentLiveReads } from './recent-live-reads.ts';
import { isLabelledForController, LABELLED_SELECTOR, UNLABELLED_SELECTOR } from './selectors.ts';

/**
 * The split Secret cache of cert-manager's memory design (docs/adr/0010): labelled Secrets cached in full,
 * every other Secret as metadata only, behind one getter. Unlabelled Secrets are never listed in full, so a
 * cluster full of large unrelated Secrets (Helm releases) costs their metadata, not their data; reading one
 * of them costs one live GET instead.
 */

export type FullSecret = Secret & KubeObject;

/** Full Secrets by the uid of their controlling owner (a Certificate, for next-key Secrets). */
const CONTROLLER_UID_INDEX = 'controllerUid';

function controllerUid(secret: KubeObject): string[] {
  const uid = secret.metadata?.ownerReferences?.find((r) => r.controller === true)?.uid;
  return uid ? [uid] : [];
}

/** Where a get() answer came from. */
export type SecretSource = 'cache' | 'live' | 'notfound';

/**
 * Counts get() answers by source: `cache` served from the full cache; `live` answered by a GET to the API
 * server (whatever it said, NotFound included: it is what labelling a Secret would save); `notfound` in
 * neither cache, answered without a request.
 */
export interface SecretGetterMetrics {
  hit(source: SecretSource): void;
}

/** What the cache needs of a client: KubeClient fits; tests may wrap it to watch the requests. */
export interface SecretClientSource {
  resource<T extends KubeObject = KubeObject>(ref: ResourceRef, mode?: ReadMode): ResourceClient<T>;
}

export interface SecretCacheOptions {
  /** Cache only this namespace (all namespaces when absent). */
  namespace?: string;
  /** Split caching (default true, --secrets-filtered-caching); false caches every Secret in full. */
  filtered?: boolean;
  metrics?: SecretGetterMetrics;
  log?: Logger;
}

/** The getter, and the informers behind it (for starting, syncing and tests). */
export interface SecretCache extends SecretGetter {
  readonly filtered: boolean;
  /** Full Secrets: the labelled ones (filtered), or all of them (unfiltered). */
  readonly full: SharedInformer<FullSecret>;
  /** Stubs of the unlabelled Secrets; undefined when unfiltered. */
  readonly metadata: SharedInformer<SecretStub> | undefined;
  informers(): SharedInformer[];
}

export function createSecretCache(
  factory: SharedInformerFactory,
  client: SecretClientSource,
  options: SecretCacheOptions,
): SecretCache {
  const filtered = options.filtered ?? true;
  const log = options.log ?? defaultLogger;
  const metrics = options.metrics;
  const liveClient = client.resource<FullSecret>(builtins.secrets);

  // Frozen, so that a handler or a caller that forgot to copy fails loudly instead of corrupting the cache;
  // the getter hands out copies, so callers may still change what they get (as they may a live GET's answer).
  const full = factory.informerFor<FullSecret>(liveClient, {
    namespace: options.namespace,
    labelSelector: filtered ? LABELLED_SELECTOR : undefined,
    transform: leanSecret,
    freezeObjects: true,
    indexers: { [CONTROLLER_UID_INDEX]: controllerUid },
  });
  const metadata = filtered
    ? factory.informerFor<SecretStub>(client.resource(builtins.secrets, 'metadata'), {
        namespace: options.namespace,
        labelSelector: UNLABELLED_SELECTOR,
        transform: toSecretStub,
        freezeObjects: true,
      })
    : undefined;
  const informers: SharedInformer[] = metadata ? [full, metadata] : [full];

  // Controllers pass a handful of constant selectors; parsing them once keeps listing cheap.
  const selectors = new Map<string, ReturnType<typeof parseLabelSelector>>();
  const selectorFor = (text: string) => {
    let selector = selectors.get(text);
    if (!selector) {
      if (selectors.size >= 64) selectors.clear();
      selectors.set(text, (selector = parseLabelSelector(text)));
    }
    return selector;
  };

  async function liveGet(namespace: string, name: string): Promise<FullSecret | undefined> {
    metrics?.hit('live');
    try {
      return await liveClient.get(namespace, name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  const recentLiveReads = new RecentLiveReads();

  const getter: SecretCache = {
    filtered,
    full,
    metadata,
    informers: () => [...informers],

    // Order as upstream's secretNamespaceLister.Get (core_filteredsecrets.go): a metadata hit always goes live, even
    // when the full cache has the Secret too, since only one of them can be current.
    async get(namespace, name) {
      const key = keyFor(namespace, name);
      const cached = full.getStore().get(key);
      if (metadata?.getStore().has(key)) {
        if (cached) {
          log({ level: 'warn', msg: 'possible internal error: stale cache', namespace, name });
        }
        return liveGet(namespace, name);
      }
      if (cached) {
        metrics?.hit('cache');
        return cached;
      }
      metrics?.hit('notfound');
      return undefined;
    },

    // A Secret the cache holds as facts is read live, once per resourceVersion while in use.
    async getWithData(namespace, name) {
      const key = keyFor(namespace, name);
      const cached = full.getStore().get(key);
      if (!cached || !isStrippedSecret(cached) || metadata?.getStore().has(key))
        return getter.get(namespace, name);
      const resourceVersion = cached.metadata?.resourceVersion;
      const recent = recentLiveReads.get(key, resourceVersion);
      if (recent) {
        metrics?.hit('cache');
        return recent;
      }
      const live = await liveGet(namespace, name);
      return live && recentLiveReads.set(key, live);
    },

    // Never merges metadata hits (upstream's List would GET each one): callers list labelled Secrets only.
    // Unfiltered, the label is checked here, so that both modes give controllers the same answer.
    listLabelled(namespace, labelSelector) {
      const selector = selectorFor(labelSelector);
      const store = full.getStore();
      const candidates = namespace ? store.byIndex(NAMESPACE_INDEX, namespace) : store.list();
      return candidates.filter(
        (s) => isLabelledForController(s.metadata?.labels) && selector.matches(s.metadata?.labels),
      );
    },

    // Through the index: a namespace may hold thousands of labelled Secrets, an owner a handful.
    listLabelledControlledBy(owner, labelSelector) {
      const uid = owner.metadata?.uid;
      if (!uid) return [];
      const selector = selectorFor(labelSelector);
      return full
        .getStore()
        .byIndex(CONTROLLER_UID_INDEX, uid)
        .filter(
          (s) =>
            s.metadata?.namespace === owner.metadata?.namespace &&
            isLabelledForController(s.metadata?.labels) &&
            selector.matches(s.metadata?.labels),
        );
    },

    onChange(handler) {
      for (const informer of informers) informer.addEventHandler(changeHandler(handler));
    },

    hasSynced: () => informers.every((i) => i.hasSynced()),
  };
  return getter;
}

/** Every event becomes "this Secret changed"; handlers get the cached object, which is frozen. */
function changeHandler(handler: (secret: CachedSecret) => void): ResourceEventHandler<KubeObject> {
  return {
    onAdd: (obj) => handler(obj as CachedSecret),
    onUpdate: (_old, obj) => handler(obj as CachedSecret),
    onDelete: (obj) => handler(deletedSecret(obj)),
  };
}

function deletedSecret(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): CachedSecret {
  if (!isDeletedFinalStateUnknown(obj)) return obj as CachedSecret;
  return (obj.obj as CachedSecret | undefined) ?? stubForKey(obj.key);
}
