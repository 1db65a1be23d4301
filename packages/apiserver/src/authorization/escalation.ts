/**
 * RBAC's escalation prevention, as kube-apiserver's RBAC storage does it: a user may create or update a Role
 * or ClusterRole only with rules they already hold (where the role applies) or with the `escalate` verb on it,
 * and may bind a role only if they hold its rules or have the `bind` verb on it. A ClusterRole with an
 * aggregationRule needs `escalate`, since its rules are whatever gets aggregated. Refusals are 403s.
 */

import { jsonEqual, newForbidden, type StoredObject } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { UserInfo } from '../security/user.ts';
import type { Attributes } from './attributes.ts';
import { type Authorizer, MASTERS_GROUP } from './authorizer.ts';
import type { PolicyRule } from './policy-rule.ts';
import { RBAC_GROUP, type RbacIndex, type RoleRef } from './rbac-index.ts';
import { currentWriter } from './writer-context.ts';

export class EscalationCheck {
  private readonly authorizer: Authorizer;
  private readonly index: RbacIndex;

  constructor(authorizer: Authorizer, index: RbacIndex) {
    this.authorizer = authorizer;
    this.index = index;
  }

  /** The registry's admission hook for the RBAC kinds: throws 403 when the write would escalate. */
  check(def: ResourceDefinition, obj: StoredObject, old: StoredObject | undefined): void {
    if (def.group !== RBAC_GROUP || this.authorizer.mode !== 'RBAC') return;
    const user = currentWriter();
    if (!user || user.groups.includes(MASTERS_GROUP)) return;
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    switch (def.resource) {
      case 'roles':
      case 'clusterroles':
        return this.checkRole(def, user, namespace, name, obj, old);
      case 'rolebindings':
      case 'clusterrolebindings':
        return this.checkBinding(def, user, namespace, name, obj, old);
    }
  }

  private checkRole(
    def: ResourceDefinition,
    user: UserInfo,
    namespace: string,
    name: string,
    obj: StoredObject,
    old: StoredObject | undefined,
  ): void {
    const rules = (obj.rules as PolicyRule[] | undefined) ?? [];
    const aggregated = !!obj.aggregationRule;
    // An update that leaves the rules (and aggregation) alone grants nothing new.
    if (
      old &&
      jsonEqual(old.rules ?? [], obj.rules ?? []) &&
      jsonEqual(old.aggregationRule, obj.aggregationRule)
    )
      return;
    if (this.allowed(user, 'escalate', def.resource, namespace, name)) return;
    if (aggregated) {
      throw this.forbidden(def, name, user, 'must have cluster-admin privileges to use the aggregationRule');
    }
    const missing = uncovered(this.heldRules(user, namespace), rules);
    if (missing.length > 0) throw this.forbidden(def, name, user, notHeld(user, missing));
  }

  private checkBinding(
    def: ResourceDefinition,
    user: UserInfo,
    namespace: string,
    name: string,
    obj: StoredObject,
    old: StoredObject | undefined,
  ): void {
    // roleRef cannot change (validation refuses it), and subjects alone grant nothing the binder lacks if
    // the role was already bound: kube still checks every write, and so does this.
    void old;
    const ref = obj.roleRef as RoleRef;
    const refResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    if (this.allowed(user, 'bind', refResource, namespace, ref.name)) return;
    const rules = this.index.roleRules(ref.kind, namespace, ref.name);
    if (rules === undefined) {
      throw this.forbidden(
        def,
        name,
        user,
        `${ref.kind.toLowerCase()}s.${RBAC_GROUP} "${ref.name}" not found`,
      );
    }
    const missing = uncovered(this.heldRules(user, namespace), rules);
    if (missing.length > 0) throw this.forbidden(def, name, user, notHeld(user, missing));
  }

  private allowed(user: UserInfo, verb: string, resource: string, namespace: string, name: string): boolean {
    const attrs: Attributes = {
      user,
      verb,
      resourceRequest: true,
      path: '',
      apiGroup: RBAC_GROUP,
      apiVersion: 'v1',
      resource,
      subresource: '',
      namespace,
      name,
    };
    return this.authorizer.authorize(attrs).allowed;
  }

  /** Every rule the user holds where the role or binding applies (the namespace's and the cluster's). */
  private heldRules(user: UserInfo, namespace: string): PolicyRule[] {
    return this.index.grantedRules(user, namespace).flatMap((g) => g.rules);
  }

  private forbidden(def: ResourceDefinition, name: string, user: UserInfo, why: string) {
    return newForbidden(`${def.resource}.${RBAC_GROUP} "${name}" is forbidden: ${why}`);
  }
}

function notHeld(user: UserInfo, missing: PolicyRule[]): string {
  const rules = missing.map(describeRule).join('\n');
  return `user "${user.name}" (groups=${JSON.stringify(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${rules}`;
}

function describeRule(rule: PolicyRule): string {
  const list = (xs: string[] | undefined) => `[${(xs ?? []).map((x) => JSON.stringify(x)).join(', ')}]`;
  if (rule.nonResourceURLs?.length)
    return `{NonResourceURLs:${list(rule.nonResourceURLs)}, Verbs:${list(rule.verbs)}}`;
  const names = rule.resourceNames?.length ? `, ResourceNames:${list(rule.resourceNames)}` : '';
  return `{APIGroups:${list(rule.apiGroups)}, Resources:${list(rule.resources)}${names}, Verbs:${list(rule.verbs)}}`;
}

/**
 * The parts of `wanted` no rule of `held` covers, as kube's validation.Covers decides it: each wanted rule
 * broken into one verb on one group, resource and name (or one verb on one URL), each of which some held rule
 * must cover on its own.
 */
export function uncovered(held: PolicyRule[], wanted: PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of wanted) {
    for (const unit of atoms(rule)) if (!held.some((h) => covers(h, unit))) missing.push(unit);
  }
  return missing;
}

function atoms(rule: PolicyRule): PolicyRule[] {
  const result: PolicyRule[] = [];
  for (const verb of rule.verbs ?? []) {
    if (rule.nonResourceURLs?.length) {
      for (const url of rule.nonResourceURLs) result.push({ verbs: [verb], nonResourceURLs: [url] });
      continue;
    }
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        if (rule.resourceNames?.length) {
          for (const name of rule.resourceNames) {
            result.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
          }
        } else {
          result.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        }
      }
    }
  }
  return result;
}

/** Whether the held rule covers a single-valued wanted rule (atoms() made it). */
function covers(held: PolicyRule, unit: PolicyRule): boolean {
  const verbs = held.verbs ?? [];
  if (!verbs.includes('*') && !verbs.includes(unit.verbs[0])) return false;
  if (unit.nonResourceURLs) {
    const url = unit.nonResourceURLs[0];
    return (held.nonResourceURLs ?? []).some(
      (h) => h === '*' || h === url || (h.endsWith('*') && url.startsWith(h.slice(0, -1))),
    );
  }
  const groups = held.apiGroups ?? [];
  if (!groups.includes('*') && !groups.includes(unit.apiGroups![0])) return false;
  const resource = unit.resources![0];
  const slash = resource.indexOf('/');
  const resourcesOk = (held.resources ?? []).some(
    (h) => h === '*' || h === resource || (slash > 0 && h === `*${resource.slice(slash)}`),
  );
  if (!resourcesOk) return false;
  const heldNames = held.resourceNames ?? [];
  if (heldNames.length === 0) return true;
  return !!unit.resourceNames && heldNames.includes(unit.resourceNames[0]);
}
