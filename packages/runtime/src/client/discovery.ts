import { formatApiVersion, isNotFound, parseApiVersion } from '@certkit/apimachinery';
import type { Transport } from './transport.ts';
import type { ResourceRef } from './types.ts';

/**
 * Maps apiVersion + kind to the resource that serves it, from legacy discovery: /api and /apis say which
 * group versions exist (and which version a group prefers), /api/v1 and /apis/GROUP/VERSION list their
 * resources. Answers are cached; a miss re-reads discovery once, because the kind may belong to a CRD
 * created since the last look (controller-runtime's lazy RESTMapper does the same).
 */

/** client-go's meta.NoKindMatchError. */
export class NoKindMatchError extends Error {
  readonly group: string;
  readonly kind: string;
  readonly searchedVersions: string[];

  constructor(group: string, kind: string, searchedVersions: string[]) {
    super(
      searchedVersions.length === 1
        ? `no matches for kind "${kind}" in version "${formatApiVersion(group, searchedVersions[0])}"`
        : `no matches for kind "${kind}" in group "${group}"`,
    );
    this.name = 'NoKindMatchError';
    this.group = group;
    this.kind = kind;
    this.searchedVersions = searchedVersions;
  }
}

/** Whether an error says that no resource of the server serves a kind (discovery found none). */
export function isNoKindMatch(err: unknown): err is NoKindMatchError {
  return err instanceof NoKindMatchError;
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

interface ApiGroup {
  name: string;
  versions: { groupVersion: string; version: string }[];
  preferredVersion?: { groupVersion: string; version: string };
}

/** Served groups: name → versions, preferred first. Core is ''. */
type GroupVersions = Map<string, string[]>;

/**
 * Lookups take no AbortSignal: a refresh is shared by every concurrent caller, so no one of them may cancel
 * it; discovery requests are short.
 */
export class RestMapper {
  readonly #transport: Transport;
  /** groupVersion → kind → resource. */
  readonly #resources = new Map<string, Map<string, ResourceRef>>();
  #groups: Promise<GroupVersions> | undefined;
  /** Concurrent misses on one group version share one refresh. */
  readonly #refreshing = new Map<string, Promise<Map<string, ResourceRef> | undefined>>();

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The resource serving `kind` in `apiVersion` (`v1`, `cert-manager.io/v1`); NoKindMatchError if none. */
  async map(apiVersion: string, kind: string): Promise<ResourceRef> {
    const cached = this.#resources.get(apiVersion)?.get(kind);
    if (cached) return cached;
    const { group, version } = parseApiVersion(apiVersion);
    const fresh = await this.#refresh(apiVersion);
    const ref = fresh?.get(kind);
    if (!ref) throw new NoKindMatchError(group, kind, [version]);
    return ref;
  }

  /** The resource serving `kind` in the group's preferred version. */
  async mapGroupKind(group: string, kind: string): Promise<ResourceRef> {
    let versions = (await this.#servedGroups()).get(group);
    if (!versions) {
      this.#groups = undefined;
      versions = (await this.#servedGroups()).get(group);
    }
    if (!versions) throw new NoKindMatchError(group, kind, []);
    for (const version of versions) {
      try {
        return await this.map(formatApiVersion(group, version), kind);
      } catch (err) {
        if (!isNoKindMatch(err)) throw err;
      }
    }
    throw new NoKindMatchError(group, kind, versions);
  }

  /** Forgets everything; the next lookups read discovery again. */
  reset(): void {
    this.#resources.clear();
    this.#groups = undefined;
  }

  #refresh(apiVersion: string): Promise<Map<string, ResourceRef> | undefined> {
    let pending = this.#refreshing.get(apiVersion);
    if (!pending) {
      pending = this.#load(apiVersion).finally(() => this.#refreshing.delete(apiVersion));
      this.#refreshing.set(apiVersion, pending);
    }
    return pending;
  }

  async #load(apiVersion: string): Promise<Map<string, ResourceRef> | undefined> {
    const { group, version } = parseApiVersion(apiVersion);
    // A miss may be a group version created since the groups were read: read them again.
    this.#groups = undefined;
    const served = (await this.#servedGroups()).get(group);
    if (!served?.includes(version)) {
      this.#resources.delete(apiVersion);
      return undefined;
    }
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    let list: { resources?: ApiResource[] };
    try {
      list = await this.#transport.json({ method: 'GET', path });
    } catch (err) {
      // Listed in /apis but gone by now (a CRD deleted in between).
      if (isNotFound(err)) return undefined;
      throw err;
    }
    const byKind = new Map<string, ResourceRef>();
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue; // a subresource such as certificates/status
      if (!byKind.has(r.kind)) {
        byKind.set(r.kind, { group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced });
      }
    }
    this.#resources.set(apiVersion, byKind);
    return byKind;
  }

  #servedGroups(): Promise<GroupVersions> {
    this.#groups ??= this.#loadGroups().catch((err) => {
      this.#groups = undefined;
      throw err;
    });
    return this.#groups;
  }

  async #loadGroups(): Promise<GroupVersions> {
    const [core, named] = await Promise.all([
      this.#transport.json<{ versions?: string[] }>({ method: 'GET', path: '/api' }),
      this.#transport.json<{ groups?: ApiGroup[] }>({ method: 'GET', path: '/apis' }),
    ]);
    const groups: GroupVersions = new Map([['', core.versions ?? []]]);
    for (const g of named.groups ?? []) {
      const versions = g.versions.map((v) => v.version);
      const preferred = g.preferredVersion?.version;
      if (preferred) versions.sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0));
      groups.set(g.name, versions);
    }
    return groups;
  }
}
