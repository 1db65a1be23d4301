/**
 * Which requests a webhook's rules match (kube-apiserver's predicates/rules): operation, group, version,
 * resource and subresource (`*`, `*\/*`, `pods/status`, `pods/*`, `*\/status`), scope; and matchPolicy
 * Equivalent, which retries the rules at the resource's other served versions.
 */

import type { ResourceDefinition } from '../registry/resource.ts';
import type { Operation } from './attributes.ts';
import type { RuleWithOperations, Webhook } from './webhook-types.ts';

export interface RuleTarget {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  /** "" without one. */
  subresource: string;
  /** "" for cluster-scoped objects; a Namespace's own name for a Namespace. */
  namespace: string;
}

function listMatches(values: string[] | undefined, value: string): boolean {
  return (values ?? []).some((v) => v === '*' || v === value);
}

function resourceMatches(resources: string[] | undefined, resource: string, subresource: string): boolean {
  for (const entry of resources ?? []) {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

function scopeMatches(scope: string | undefined, target: RuleTarget): boolean {
  if (scope === undefined || scope === '*') return true;
  const clusterScoped = target.resource === 'namespaces' || target.namespace === '';
  return scope === 'Cluster' ? clusterScoped : !clusterScoped;
}

export function ruleMatches(rule: RuleWithOperations, target: RuleTarget): boolean {
  return (
    scopeMatches(rule.scope, target) &&
    listMatches(rule.operations, target.operation) &&
    listMatches(rule.apiGroups, target.group) &&
    listMatches(rule.apiVersions, target.version) &&
    resourceMatches(rule.resources, target.resource, target.subresource)
  );
}

/**
 * The version at which the webhook wants the request, or undefined when its rules do not match: the
 * request's own version, or with matchPolicy Equivalent another version the resource is served at (the
 * object is then sent converted to it). Equivalence across groups (e.g. extensions → apps) does not arise:
 * certkit serves each resource in one group.
 */
export function matchingVersion(
  hook: Webhook,
  def: ResourceDefinition,
  target: RuleTarget,
): string | undefined {
  const rules = hook.rules ?? [];
  if (rules.some((r) => ruleMatches(r, target))) return target.version;
  if (hook.matchPolicy === 'Exact') return undefined;
  for (const version of def.versions) {
    if (version === target.version) continue;
    const other = { ...target, version };
    if (rules.some((r) => ruleMatches(r, other))) return version;
  }
  return undefined;
}
