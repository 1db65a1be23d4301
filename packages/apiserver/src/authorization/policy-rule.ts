/**
 * RBAC's PolicyRule and how one covers a request, as kube's rbac/v1 evaluation helpers decide it: verbs and
 * API groups exact or `*`; resources exact, `res/sub`, `*`, or a star before `/sub` (any resource's sub); resourceNames empty for any name, else
 * exact; nonResourceURLs exact, `*`, or a prefix ending in `*`.
 */

import type { Attributes } from './attributes.ts';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const ALL = '*';

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.includes(ALL) || rule.verbs.includes(verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  const groups = rule.apiGroups;
  return !!groups && (groups.includes(ALL) || groups.includes(group));
}

export function resourceMatches(rule: PolicyRule, resource: string, subresource: string): boolean {
  const resources = rule.resources;
  if (!resources) return false;
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of resources) {
    if (r === ALL || r === combined) return true;
    // `*/status` covers the status of every resource, and only that subresource.
    if (subresource !== '' && r.length === subresource.length + 2 && r === `*/${subresource}`) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  if (!names || names.length === 0) return true;
  // A request without a name (create, list, collection deletes) never matches a rule restricted to names.
  return name !== '' && names.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  const urls = rule.nonResourceURLs;
  if (!urls) return false;
  for (const url of urls) {
    if (url === ALL || url === path) return true;
    if (url.endsWith(ALL) && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

/** Whether the rule allows the request described by attrs. */
export function ruleAllows(attrs: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, attrs.verb)) return false;
  if (!attrs.resourceRequest) return nonResourceURLMatches(rule, attrs.path);
  return (
    apiGroupMatches(rule, attrs.apiGroup) &&
    resourceMatches(rule, attrs.resource, attrs.subresource) &&
    resourceNameMatches(rule, attrs.name)
  );
}
