/**
 * The admission webhooks of the server (MutatingAdmissionWebhook and ValidatingAdmissionWebhook): the
 * registry's strategy calls mutate() after defaulting and validate() after the kind's own validation, on
 * every write that came through the API. With no configuration stored, `active` is false and a write
 * builds nothing for admission at all.
 */

import { parseListOptions, type StoredObject } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { Registry } from '../registry/registry.ts';
import type { Storage } from '../storage/types.ts';
import { WatchCache } from '../watchcache/cache.ts';
import type { WatchCaches } from '../watchcache/caches.ts';
import type { AdmissionAttributes, Operation, RequestAdmission } from './attributes.ts';
import { WebhookClient } from './client.ts';
import type { DispatchContext, ServiceResolver } from './dispatch.ts';
import { runMutatingWebhooks } from './mutating.ts';
import type { NamespaceLookup } from './selectors.ts';
import { runValidatingWebhooks } from './validating.ts';
import { type IndexedWebhook, WebhookIndex } from './webhook-index.ts';
import { matchingVersion } from './rules.ts';
import { ADMISSIONREGISTRATION_GROUP, MUTATING_RESOURCE, VALIDATING_RESOURCE } from './webhook-types.ts';

/** Resources no webhook may intercept, so that a broken webhook can always be removed (rules.go). */
const EXEMPT = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
]);

export interface AdmissionWebhooksOptions {
  getNamespace: NamespaceLookup;
  resolveService?: ServiceResolver;
  log?: (entry: Record<string, unknown>) => void;
}

/** The operation's object and old object, as the strategy has them. */
export interface AdmissionCall {
  operation: Operation;
  object: StoredObject | undefined;
  oldObject: StoredObject | undefined;
  request: RequestAdmission;
  /** The object's name and namespace when there is no object to read them from (a delete's mutating pass). */
  name?: string;
  namespace?: string;
}

export class AdmissionWebhooks {
  readonly mutatingIndex = new WebhookIndex();
  readonly validatingIndex = new WebhookIndex();
  private readonly client = new WebhookClient();
  private readonly context: DispatchContext;

  constructor(options: AdmissionWebhooksOptions) {
    this.context = {
      client: this.client,
      getNamespace: options.getNamespace,
      resolveService: options.resolveService,
      log: options.log ?? (() => {}),
    };
  }

  private ownCaches: WatchCache[] = [];

  /**
   * Reads the configurations from the server's watch caches of them, or, when the server runs without
   * watch caches, from two of its own (the chain never lists storage per request).
   */
  start(registry: Registry, caches: WatchCaches, storage: Storage): void {
    const cacheOf = (resource: string) => {
      const store = registry.byResource(ADMISSIONREGISTRATION_GROUP, resource)!;
      const shared = caches.cacheFor(store);
      if (shared) return shared;
      const own = new WatchCache(storage, store.prefix, {}, false);
      own.start();
      this.ownCaches.push(own);
      return own;
    };
    const fromStorage = (resource: string) => async () => {
      const store = registry.byResource(ADMISSIONREGISTRATION_GROUP, resource)!;
      return (await store.list(undefined, parseListOptions(new URLSearchParams(), 'list'))).items;
    };
    this.mutatingIndex.attach(cacheOf(MUTATING_RESOURCE), fromStorage(MUTATING_RESOURCE));
    this.validatingIndex.attach(cacheOf(VALIDATING_RESOURCE), fromStorage(VALIDATING_RESOURCE));
  }

  /** The service resolver, once the kinds it reads are served. */
  setServiceResolver(resolve: ServiceResolver): void {
    this.context.resolveService = resolve;
  }

  /** False while no webhook configuration exists: writes then skip admission entirely. */
  get active(): boolean {
    return !(this.mutatingIndex.empty && this.validatingIndex.empty);
  }

  private attributes(def: ResourceDefinition, call: AdmissionCall): AdmissionAttributes | undefined {
    if (def.group === ADMISSIONREGISTRATION_GROUP && EXEMPT.has(def.resource)) return undefined;
    const obj = call.object ?? call.oldObject;
    const name = call.name ?? obj?.metadata.name ?? '';
    const namespace =
      def.resource === 'namespaces' && def.group === ''
        ? name
        : (call.namespace ?? obj?.metadata.namespace ?? '');
    return { ...call, name, namespace };
  }

  /**
   * The webhooks whose rules match the request (the cheap, synchronous part of matching), so that a write no
   * webhook's rules name takes no turn of the event loop for admission.
   */
  private candidates(
    hooks: IndexedWebhook[],
    def: ResourceDefinition,
    attrs: AdmissionAttributes,
  ): IndexedWebhook[] {
    const target = {
      operation: attrs.operation,
      group: def.group,
      version: attrs.request.version,
      resource: def.resource,
      subresource: attrs.request.subresource ?? '',
      namespace: attrs.namespace,
    };
    return hooks.filter((entry) => matchingVersion(entry.hook, def, target) !== undefined);
  }

  /**
   * Runs the mutating webhooks; the object is changed in place. True when a webhook changed it; a promise
   * only when some webhook's rules match.
   */
  mutate(def: ResourceDefinition, call: AdmissionCall): boolean | Promise<boolean> {
    const listed = this.mutatingIndex.webhooks();
    if (listed instanceof Promise) return listed.then((hooks) => this.mutateWith(hooks, def, call));
    return this.mutateWith(listed, def, call);
  }

  private mutateWith(
    hooks: IndexedWebhook[],
    def: ResourceDefinition,
    call: AdmissionCall,
  ): boolean | Promise<boolean> {
    if (hooks.length === 0) return false;
    const attrs = this.attributes(def, call);
    if (!attrs) return false;
    const matching = this.candidates(hooks, def, attrs);
    return matching.length === 0 ? false : runMutatingWebhooks(matching, def, attrs, this.context);
  }

  /** Runs the validating webhooks; throws the refusal. A promise only when some webhook's rules match. */
  validate(def: ResourceDefinition, call: AdmissionCall): void | Promise<void> {
    const listed = this.validatingIndex.webhooks();
    if (listed instanceof Promise) return listed.then((hooks) => this.validateWith(hooks, def, call));
    return this.validateWith(listed, def, call);
  }

  private validateWith(
    hooks: IndexedWebhook[],
    def: ResourceDefinition,
    call: AdmissionCall,
  ): void | Promise<void> {
    if (hooks.length === 0) return;
    const attrs = this.attributes(def, call);
    if (!attrs) return;
    const matching = this.candidates(hooks, def, attrs);
    if (matching.length > 0) return runValidatingWebhooks(matching, def, attrs, this.context);
  }

  close(): void {
    for (const cache of this.ownCaches) cache.stop();
    this.ownCaches = [];
    this.client.close();
  }
}
