import type { StoredObject } from '@certkit/apimachinery';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.d.ts';
import { CRD_CLEANUP_FINALIZER } from './lifecycle.ts';
import type { Registry } from '../registry/registry.ts';
import { type ResourceDefinition, resourcePrefix } from '../registry/resource.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { Storage } from '../storage/types.ts';
import { followPrefix } from '../controllers/storage-follower.ts';

/**
 * Keeps the served custom resources in step with the stored CRDs: serves a CRD once written (on this server
 * and, through the storage watch, on every other server sharing the store), and on deletion removes all its
 * objects before releasing the cleanup finalizer, as kube-apiserver's CRD finalizer controller does.
 */

type Crd = CustomResourceDefinition & StoredObject;

export class CrdController {
  private readonly registry: Registry;
  private readonly storage: Storage;
  private readonly crds: ObjectStore;
  private readonly cleaning = new Set<string>();
  private follower?: { stop(): void };
  onError: (err: unknown) => void = () => {};

  constructor(registry: Registry, storage: Storage) {
    this.registry = registry;
    this.storage = storage;
    this.crds = registry.byResource('apiextensions.k8s.io', 'customresourcedefinitions')!;
  }

  /** Serves every stored CRD, then follows changes. */
  async start(): Promise<void> {
    const { kvs } = await this.storage.range(resourcePrefix(this.crds.def), {});
    for (const kv of kvs) this.observe(this.crds.decode(kv.value, kv.modRevision));
    this.follower = followPrefix(this.storage, resourcePrefix(this.crds.def), {
      sync: (all) => {
        for (const kv of all) this.observe(this.crds.decode(kv.value, kv.modRevision));
      },
      event: (ev) => {
        const crd = this.crds.decode(ev.value, ev.revision) as Crd;
        if (ev.type === 'DELETE') this.registry.uninstallCrd(crd.spec.group, crd.spec.names.plural);
        else this.observe(crd);
      },
    });
  }

  stop(): void {
    this.follower?.stop();
  }

  /**
   * The registry's afterWrite hook: every object written on this server, before the write is acknowledged;
   * CRDs among them are observed, so that a CRD is served at once.
   */
  observeWrite(def: ResourceDefinition, obj: StoredObject): void {
    if (def.group === 'apiextensions.k8s.io' && def.resource === 'customresourcedefinitions')
      this.observe(obj);
  }

  /** Called for every written CRD, before the write is acknowledged, so it is served at once. */
  observe(obj: StoredObject): void {
    const crd = obj as Crd;
    if (crd.metadata.deletionTimestamp) {
      void this.cleanup(crd);
      return;
    }
    const current = this.registry.byResource(crd.spec.group, crd.spec.names.plural);
    if (!current || current.def.custom) this.registry.installCrd(crd);
  }

  private async cleanup(crd: Crd): Promise<void> {
    const name = crd.metadata.name!;
    if (this.cleaning.has(name)) return;
    this.cleaning.add(name);
    try {
      const store = this.registry.byResource(crd.spec.group, crd.spec.names.plural);
      if (store?.def.custom) {
        const { kvs } = await this.storage.range(resourcePrefix(store.def), {});
        for (const kv of kvs) await this.storage.delete(kv.key).catch(() => {});
      }
      await this.crds.guaranteedUpdate(undefined, name, (current) => ({
        ...current,
        metadata: {
          ...current.metadata,
          finalizers: (current.metadata.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER),
        },
      }));
    } catch (err) {
      if ((err as { status?: { reason?: string } }).status?.reason !== 'NotFound') this.onError(err);
    } finally {
      this.cleaning.delete(name);
    }
  }
}
