/**
 * The RBAC objects the authorizer consults, held in memory and kept current by following storage (as kube's
 * RBAC authorizer reads its informers). Bindings are indexed by subject, so a request looks up the bindings
 * of its user and groups alone, never scanning every binding.
 */

import type { StoredObject } from '@certkit/apimachinery';
import { followPrefix } from '../controllers/storage-follower.ts';
import type { Registry } from '../registry/registry.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { Storage, StorageEvent } from '../storage/types.ts';
import type { UserInfo } from '../security/user.ts';
import type { PolicyRule } from './policy-rule.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

export interface Subject {
  kind: string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

/** A binding as the index keeps it: where it applies ('' everywhere) and what it grants. */
interface IndexedBinding {
  namespace: string;
  roleRef: RoleRef;
}

/** The rules one binding grants, for the rules review and for naming what allowed a request. */
export interface GrantedRules {
  binding: string;
  namespace: string;
  rules: PolicyRule[];
}

const USER = 'u\0';
const GROUP = 'g\0';

/** The username of a ServiceAccount, as its tokens authenticate (`system:serviceaccount:<ns>:<name>`). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The index key of a binding subject; undefined for a subject no user can be (unknown kind). */
export function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User':
      return USER + subject.name;
    case 'Group':
      return GROUP + subject.name;
    case 'ServiceAccount':
      return USER + serviceAccountUsername(subject.namespace || bindingNamespace, subject.name);
    default:
      return undefined;
  }
}

export class RbacIndex {
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, PolicyRule[]>();
  /** Subject key → ClusterRoleBindings naming it (binding name → ref). */
  private readonly clusterBindings = new Map<string, Map<string, IndexedBinding>>();
  /** `namespace \0 subject key` → RoleBindings of that namespace naming it. */
  private readonly namespacedBindings = new Map<string, Map<string, IndexedBinding>>();
  /** Storage key of a binding → the index keys it sits under, to take it out again. */
  private readonly bindingKeys = new Map<string, string[]>();
  private readonly followers: { stop(): void }[] = [];
  private readonly listeners = new Set<(kind: string, obj: StoredObject | undefined) => void>();

  private readonly registry: Registry;
  private readonly storage: Storage;

  constructor(registry: Registry, storage: Storage) {
    this.registry = registry;
    this.storage = storage;
  }

  /** Starts following the four RBAC resources; resolves once each was read in full once. */
  start(): Promise<void> {
    const synced: Promise<void>[] = [];
    for (const resource of ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']) {
      const store = this.registry.byResource(RBAC_GROUP, resource)!;
      synced.push(
        new Promise((resolve) => {
          this.followers.push(
            followPrefix(this.storage, store.prefix, {
              sync: (kvs) => {
                this.reset(resource);
                for (const kv of kvs) this.put(store, kv.key, store.decode(kv.value, kv.modRevision));
                this.notify(store.def.kind, undefined);
                resolve();
              },
              event: (ev) => this.apply(store, ev),
            }),
          );
        }),
      );
    }
    return Promise.all(synced).then(() => {});
  }

  stop(): void {
    for (const f of this.followers) f.stop();
  }

  /** Told of every change to a role or binding (the aggregation controller listens); obj undefined on re-reads. */
  onChange(listener: (kind: string, obj: StoredObject | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The rules of a role a binding in namespace may refer to; undefined when it does not exist. */
  roleRules(kind: string, namespace: string, name: string): PolicyRule[] | undefined {
    return kind === 'Role' ? this.roles.get(`${namespace}/${name}`) : this.clusterRoles.get(name);
  }

  /**
   * Calls visit with the rules of each binding that applies to the user in the namespace ('' for
   * cluster-scoped requests: ClusterRoleBindings alone), until visit returns true; returns whether it did.
   */
  visitRules(user: UserInfo, namespace: string, visit: (rules: PolicyRule[]) => boolean): boolean {
    if (this.visitSubject(USER + user.name, namespace, visit)) return true;
    for (const group of user.groups) if (this.visitSubject(GROUP + group, namespace, visit)) return true;
    return false;
  }

  /** Every binding's rules for the user in the namespace, with the binding's name (SelfSubjectRulesReview). */
  grantedRules(user: UserInfo, namespace: string): GrantedRules[] {
    const result: GrantedRules[] = [];
    const seen = new Set<IndexedBinding>();
    const collect = (bindings: Map<string, IndexedBinding> | undefined) => {
      for (const [name, binding] of bindings ?? []) {
        if (seen.has(binding)) continue;
        seen.add(binding);
        result.push({ binding: name, namespace: binding.namespace, rules: this.rulesOf(binding) ?? [] });
      }
    };
    for (const key of [USER + user.name, ...user.groups.map((g) => GROUP + g)]) {
      collect(this.clusterBindings.get(key));
      if (namespace) collect(this.namespacedBindings.get(`${namespace}\0${key}`));
    }
    return result;
  }

  private visitSubject(key: string, namespace: string, visit: (rules: PolicyRule[]) => boolean): boolean {
    const cluster = this.clusterBindings.get(key);
    if (cluster) {
      for (const binding of cluster.values()) {
        const rules = this.rulesOf(binding);
        if (rules && visit(rules)) return true;
      }
    }
    if (namespace) {
      const local = this.namespacedBindings.get(`${namespace}\0${key}`);
      if (local) {
        for (const binding of local.values()) {
          const rules = this.rulesOf(binding);
          if (rules && visit(rules)) return true;
        }
      }
    }
    return false;
  }

  private rulesOf(binding: IndexedBinding): PolicyRule[] | undefined {
    const ref = binding.roleRef;
    if (ref.kind === 'ClusterRole') return this.clusterRoles.get(ref.name);
    if (ref.kind === 'Role' && binding.namespace) return this.roles.get(`${binding.namespace}/${ref.name}`);
    return undefined;
  }

  private apply(store: ObjectStore, ev: StorageEvent): void {
    if (ev.type === 'PUT') {
      const obj = store.decode(ev.value, ev.revision);
      this.put(store, ev.key, obj);
      this.notify(store.def.kind, obj);
    } else {
      this.remove(store.def.resource, ev.key, ev.value ? store.decode(ev.value, ev.revision) : undefined);
      this.notify(store.def.kind, undefined);
    }
  }

  private notify(kind: string, obj: StoredObject | undefined): void {
    for (const l of this.listeners) l(kind, obj);
  }

  private reset(resource: string): void {
    switch (resource) {
      case 'roles':
        this.roles.clear();
        break;
      case 'clusterroles':
        this.clusterRoles.clear();
        break;
      default: {
        const bindings = resource === 'rolebindings' ? this.namespacedBindings : this.clusterBindings;
        bindings.clear();
        const marker = `/${resource}/`;
        for (const key of [...this.bindingKeys.keys()])
          if (key.includes(marker)) this.bindingKeys.delete(key);
      }
    }
  }

  private put(store: ObjectStore, key: string, obj: StoredObject): void {
    const resource = store.def.resource;
    const name = obj.metadata.name!;
    const namespace = obj.metadata.namespace ?? '';
    switch (resource) {
      case 'roles':
        this.roles.set(`${namespace}/${name}`, rulesIn(obj));
        return;
      case 'clusterroles':
        this.clusterRoles.set(name, rulesIn(obj));
        return;
    }
    this.removeBinding(resource, key);
    const roleRef = obj.roleRef as RoleRef | undefined;
    if (!roleRef) return;
    const indexed: IndexedBinding = { namespace, roleRef };
    const bindingName = namespace ? `${namespace}/${name}` : name;
    const keys: string[] = [];
    for (const subject of (obj.subjects as Subject[] | undefined) ?? []) {
      const subjectIndexKey = subject && subjectKey(subject, namespace);
      if (subjectIndexKey === undefined) continue;
      const indexKey = namespace ? `${namespace}\0${subjectIndexKey}` : subjectIndexKey;
      const map = resource === 'rolebindings' ? this.namespacedBindings : this.clusterBindings;
      let bindings = map.get(indexKey);
      if (!bindings) map.set(indexKey, (bindings = new Map()));
      bindings.set(bindingName, indexed);
      keys.push(indexKey);
    }
    this.bindingKeys.set(key, keys);
  }

  private remove(resource: string, key: string, obj: StoredObject | undefined): void {
    if (resource === 'roles' || resource === 'clusterroles') {
      // The key's last segments name the object: `.../roles/<ns>/<name>` or `.../clusterroles/<name>`.
      const rest = key.slice(key.indexOf(`/${resource}/`) + resource.length + 2);
      if (resource === 'roles') this.roles.delete(rest);
      else this.clusterRoles.delete(obj?.metadata.name ?? rest);
      return;
    }
    this.removeBinding(resource, key);
  }

  private removeBinding(resource: string, key: string): void {
    const keys = this.bindingKeys.get(key);
    if (!keys) return;
    this.bindingKeys.delete(key);
    const map = resource === 'rolebindings' ? this.namespacedBindings : this.clusterBindings;
    const name = key.slice(key.indexOf(`/${resource}/`) + resource.length + 2);
    for (const indexKey of keys) {
      const bindings = map.get(indexKey);
      bindings?.delete(name);
      if (bindings?.size === 0) map.delete(indexKey);
    }
  }
}

function rulesIn(obj: StoredObject): PolicyRule[] {
  const rules = obj.rules;
  return Array.isArray(rules) ? (rules as PolicyRule[]).filter((r) => r && Array.isArray(r.verbs)) : [];
}
