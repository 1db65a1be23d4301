import { compareVersionPriority } from '../crd/version-priority.ts';
import type { Registry, ServedSubresource } from '../registry/registry.ts';
import type { ResourceDefinition } from '../registry/resource.ts';

/**
 * Legacy discovery (/api, /apis, /apis/GROUP, /apis/GROUP/VERSION), which kubectl and client-go fall back to
 * whenever the response is not aggregated discovery.
 */

function groupVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}

function apiResources(def: ResourceDefinition, registry: Registry) {
  const main = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: def.verbs,
    ...(def.shortNames.length ? { shortNames: def.shortNames } : {}),
    ...(def.categories.length ? { categories: def.categories } : {}),
  };
  return [
    main,
    ...subresourcesOf(def, registry).map((s) => ({
      name: `${def.resource}/${s.name}`,
      singularName: '',
      namespaced: def.namespaced,
      ...(s.group !== undefined ? { group: s.group, version: s.version } : {}),
      kind: s.kind,
      verbs: s.verbs,
    })),
  ];
}

/** A subresource as discovery describes it; group and version only when its kind is another group's. */
export type SubresourceInfo = ServedSubresource;

/**
 * The subresources served for a resource (status, a CSR's approval, scale, and those the server declared,
 * as ServiceAccounts' token), as discovery lists them.
 */
export function subresourcesOf(def: ResourceDefinition, registry: Registry): SubresourceInfo[] {
  const result: SubresourceInfo[] = [...registry.subresourcesServed(def)];
  const verbs = ['get', 'patch', 'update'];
  for (const name of def.statusLikeSubresources ?? []) result.push({ name, kind: def.kind, verbs });
  if (def.scale) result.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs });
  for (const name of def.updateOnlySubresources ?? [])
    result.push({ name, kind: def.kind, verbs: ['update'] });
  if (def.statusSubresource) result.push({ name: 'status', kind: def.kind, verbs });
  return result.sort((a, b) => a.name.localeCompare(b.name));
}

/** Groups other than core, each with its served versions in preference order. */
export function apiGroups(registry: Registry): Map<string, string[]> {
  const groups = new Map<string, Set<string>>();
  for (const store of registry.all()) {
    if (store.def.group === '') continue;
    const versions = groups.get(store.def.group) ?? new Set();
    for (const v of store.def.versions) versions.add(v);
    groups.set(store.def.group, versions);
  }
  return new Map(
    [...groups]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([g, vs]) => [g, [...vs].sort(compareVersionPriority)]),
  );
}

export function coreVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(group: string, versions: string[]) {
  const list = versions.map((v) => ({ groupVersion: groupVersion(group, v), version: v }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

export function groupList(registry: Registry) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...apiGroups(registry)].map(([g, vs]) => apiGroup(g, vs)),
  };
}

export function group(registry: Registry, name: string) {
  const versions = apiGroups(registry).get(name);
  return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(name, versions) } : undefined;
}

export function resourceList(registry: Registry, group: string, version: string) {
  const defs = registry
    .all()
    .map((s) => s.def)
    .filter((d) => d.group === group && d.versions.includes(version));
  if (defs.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: defs.flatMap((def) => apiResources(def, registry)),
  };
}

/** Every served group/version, core first, as paths like `api/v1` and `apis/g/v`. */
export function servedGroupVersions(registry: Registry): { group: string; version: string; path: string }[] {
  const result = [{ group: '', version: 'v1', path: 'api/v1' }];
  for (const [g, versions] of apiGroups(registry)) {
    for (const v of versions) result.push({ group: g, version: v, path: `apis/${g}/${v}` });
  }
  return result;
}
