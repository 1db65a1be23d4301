import { isAlreadyExists, isForbidden, isNotFound, type StoredObject } from '@certkit/apimachinery';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { Registry } from '../registry/registry.ts';
import { objectKey, resourcePrefix } from '../registry/resource.ts';
import type { Storage } from '../storage/types.ts';
import { followPrefix } from './storage-follower.ts';

/**
 * The `default` ServiceAccount of every namespace, as kube-controller-manager's serviceaccounts controller
 * keeps it: made when the namespace is, made again when deleted, never in a terminating namespace (the
 * namespace controller is emptying it, and creates there are refused anyway). Kubernetes' own docs and users
 * expect it: `kubectl create token default`, Pods without `serviceAccountName`.
 */

const NAME = 'default';

export class DefaultServiceAccountsController {
  private readonly storage: Storage;
  private readonly namespaces: ObjectStore;
  private readonly serviceAccounts: ObjectStore;
  /** Namespaces whose account is being made, so that a burst of events makes it once. */
  private readonly ensuring = new Set<string>();
  private followers: { stop(): void }[] = [];
  onError: (err: unknown) => void = () => {};

  constructor(registry: Registry, storage: Storage) {
    this.storage = storage;
    this.namespaces = registry.byResource('', 'namespaces')!;
    this.serviceAccounts = registry.byResource('', 'serviceaccounts')!;
  }

  start(): void {
    const observe = (ns: StoredObject) => {
      if (!ns.metadata.deletionTimestamp) void this.ensure(ns.metadata.name!);
    };
    this.followers.push(
      followPrefix(this.storage, resourcePrefix(this.namespaces.def), {
        sync: (kvs) => {
          for (const kv of kvs) observe(this.namespaces.decode(kv.value, kv.modRevision));
        },
        event: (ev) => {
          if (ev.type === 'PUT') observe(this.namespaces.decode(ev.value, ev.revision));
        },
      }),
    );
    const accounts = resourcePrefix(this.serviceAccounts.def);
    this.followers.push(
      followPrefix(this.storage, accounts, {
        sync: () => {},
        event: (ev) => {
          if (ev.type !== 'DELETE') return;
          const [namespace, name] = ev.key.slice(accounts.length).split('/');
          if (name === NAME) void this.ensure(namespace);
        },
      }),
    );
  }

  stop(): void {
    for (const f of this.followers) f.stop();
    this.followers = [];
  }

  private async ensure(namespace: string): Promise<void> {
    if (this.ensuring.has(namespace)) return;
    this.ensuring.add(namespace);
    try {
      // A read of one key first: at every start each namespace is looked at, and nearly all have theirs.
      if (await this.storage.get(objectKey(this.serviceAccounts.def, namespace, NAME))) return;
      await this.serviceAccounts.create(namespace, { metadata: { name: NAME } });
    } catch (err) {
      // Made meanwhile, a namespace terminating or gone: nothing to do.
      if (!isAlreadyExists(err) && !isForbidden(err) && !isNotFound(err)) this.onError(err);
    } finally {
      this.ensuring.delete(namespace);
    }
  }
}
