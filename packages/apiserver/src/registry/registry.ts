import type { StoredObject } from '@certkit/apimachinery';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.d.ts';
import { builtinResources } from './builtins/builtins.ts';
import { definitionFromCrd } from '../crd/custom-resource.ts';
import { qualifiedName, type ResourceDefinition } from './resource.ts';
import { ObjectStore } from './generic/store.ts';
import { type StoreContext } from './generic/types.ts';
import type { CreateOnlyHandler } from './create-only.ts';
import type { AdmissionWebhooks } from '../admission/chain.ts';

/**
 * The resources the server serves right now: the built-ins, plus one per established CRD. Lookups are by
 * group + resource (URLs), by group + kind (owner references, GC) and by group + version (discovery).
 */
export class Registry {
  private readonly stores = new Map<string, ObjectStore>();
  private readonly context: StoreContext;
  private readonly listeners = new Set<() => void>();
  private readonly createOnlyHandlers = new Map<string, CreateOnlyHandler>();

  constructor(context: StoreContext) {
    this.context = context;
    for (const def of builtinResources) this.add(def);
  }

  /**
   * Connects the two callbacks that run upward from the stores, once what answers them exists: the server's
   * composition root (http/server.ts) calls it after building the watch caches and the CRD controller on
   * this registry. Every store shares this registry's context, so the stores already served get them too.
   */
  wire(hooks: Required<Pick<StoreContext, 'getNamespace' | 'afterWrite'>>): void {
    this.context.getNamespace = hooks.getNamespace;
    this.context.afterWrite = hooks.afterWrite;
  }

  /** Connects the admission webhooks (http/server.ts, once the caches they read exist). */
  wireWebhooks(webhooks: AdmissionWebhooks): void {
    this.context.webhooks = webhooks;
  }

  private add(def: ResourceDefinition): ObjectStore {
    const store = new ObjectStore(def, this.context);
    this.stores.set(qualifiedName(def), store);
    return store;
  }

  /** Sets what a create of a create-only resource (`def.createOnly`) answers. */
  answerCreates(group: string, resource: string, handler: CreateOnlyHandler): void {
    this.createOnlyHandlers.set(qualifiedName({ group, resource }), handler);
  }

  /** The handler of a create-only resource; undefined until the server registered one. */
  createOnlyHandler(def: ResourceDefinition): CreateOnlyHandler | undefined {
    return this.createOnlyHandlers.get(qualifiedName(def));
  }

  /** Called when the set of served resources changes (discovery caches). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  all(): ObjectStore[] {
    return [...this.stores.values()];
  }

  /** The store serving group/resource at the version, if that version is served. */
  lookup(group: string, version: string, resource: string): ObjectStore | undefined {
    const store = this.stores.get(group === '' ? resource : `${resource}.${group}`);
    return store?.def.versions.includes(version) ? store : undefined;
  }

  byResource(group: string, resource: string): ObjectStore | undefined {
    return this.stores.get(group === '' ? resource : `${resource}.${group}`);
  }

  byKind(group: string, kind: string): ObjectStore | undefined {
    for (const store of this.stores.values()) {
      if (store.def.group === group && store.def.kind === kind) return store;
    }
    return undefined;
  }

  /** Starts (or updates) serving a CRD's resource. Returns the store. */
  installCrd(crd: StoredObject): ObjectStore {
    const def = definitionFromCrd(crd as CustomResourceDefinition & StoredObject);
    const existing = this.stores.get(qualifiedName(def));
    if (existing && !existing.def.custom)
      throw new Error(`CRD ${crd.metadata.name} would replace a built-in resource`);
    const store = this.add(def);
    this.changed();
    return store;
  }

  uninstallCrd(group: string, resource: string): void {
    const store = this.byResource(group, resource);
    if (store?.def.custom) {
      this.stores.delete(qualifiedName(store.def));
      this.changed();
    }
  }
}
