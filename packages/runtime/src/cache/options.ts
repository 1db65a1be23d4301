import { type FieldSelector, type LabelSelector, parseApiVersion } from '@certkit/apimachinery';
import type { TransformFunc } from '../informers/objects.ts';
import {
  andFieldSelectors,
  type FieldSelectorInput,
  type LabelSelectorInput,
  notEqualFieldSelector,
  toFieldSelector,
  toLabelSelector,
} from './selectors.ts';

/**
 * controller-runtime's cache options (pkg/cache/cache.go) and their defaulting (`defaultOpts`), ported
 * field by field. In every Config `undefined` means "default me"; to opt out of a default, set the value
 * explicitly (an empty selector `''` matches everything, an identity transform keeps objects whole).
 */

/** The DefaultNamespaces / ByObject.namespaces key meaning "every namespace not listed explicitly". */
export const ALL_NAMESPACES = '';

/** controller-runtime's defaultSyncPeriod; each informer gets it × U[0.9, 1.1). */
export const DEFAULT_SYNC_PERIOD_MS = 10 * 60 * 60 * 1000;

/** Settings of the informers for one namespace (the values of DefaultNamespaces and ByObject.namespaces). */
export interface Config {
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
  transform?: TransformFunc;
  /** Reads return the cached objects themselves (deep-frozen) instead of copies. */
  unsafeDisableDeepCopy?: boolean;
  /** Ask watches for bookmarks (default true). */
  enableWatchBookmarks?: boolean;
  syncPeriodMs?: number;
}

/** Per-kind settings. */
export interface ByObject {
  /**
   * undefined: DefaultNamespaces (for namespaced kinds). `{}`: all namespaces, not defaulted. Must be
   * undefined for cluster-scoped kinds.
   */
  namespaces?: Record<string, Config>;
  label?: LabelSelectorInput;
  field?: FieldSelectorInput;
  transform?: TransformFunc;
  unsafeDisableDeepCopy?: boolean;
  enableWatchBookmarks?: boolean;
  syncPeriodMs?: number;
}

/** The options defaultOptions() reads; CacheOptions extends them with the client and tuning knobs. */
export interface CacheConfigOptions {
  /** Resync period of informers that set none (default 10 h, jittered per informer). */
  syncPeriodMs?: number;
  /** Get/List of a kind without an informer fail with ErrResourceNotCached instead of starting one. */
  readerFailOnMissingInformer?: boolean;
  /** Only these namespaces are cached (the `''` key: all the others). Undefined or empty: all namespaces. */
  defaultNamespaces?: Record<string, Config>;
  defaultLabelSelector?: LabelSelectorInput;
  defaultFieldSelector?: FieldSelectorInput;
  defaultTransform?: TransformFunc;
  defaultUnsafeDisableDeepCopy?: boolean;
  defaultEnableWatchBookmarks?: boolean;
  /**
   * Per-kind settings, keyed by `<apiVersion>/<Kind>` (see byObjectKey): `v1/Secret`, `apps/v1/Deployment`.
   */
  byObject?: Record<string, ByObject>;
}

/** The ByObject key of a kind: `v1/Secret`, `cert-manager.io/v1/Certificate`. */
export function byObjectKey(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

/** Splits a ByObject key; kinds never contain '/', apiVersions may. */
export function parseByObjectKey(key: string): { apiVersion: string; kind: string } {
  const slash = key.lastIndexOf('/');
  if (slash <= 0 || slash === key.length - 1) {
    throw new Error(`invalid ByObject key ${JSON.stringify(key)}: want <apiVersion>/<Kind>, e.g. v1/Secret`);
  }
  return { apiVersion: key.slice(0, slash), kind: key.slice(slash + 1) };
}

/** How Go prints the type of a typed object (`%T`): `*v1.Secret`. */
export function typeName(apiVersion: string, kind: string): string {
  return `*${parseApiVersion(apiVersion).version}.${kind}`;
}

/** A Config with its selectors parsed. */
export interface ResolvedConfig {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  transform?: TransformFunc;
  unsafeDisableDeepCopy?: boolean;
  enableWatchBookmarks?: boolean;
  syncPeriodMs?: number;
}

/** One `byObject` entry after defaulting: the kind, its scope and its resolved settings. */
export interface ResolvedByObject {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  /** undefined (cluster-scoped, or namespaced with nothing to default from) or the namespace configs. */
  namespaces: Map<string, ResolvedConfig> | undefined;
  /** The type-level settings (label, field, …); defaulted only when no namespaces are configured. */
  config: ResolvedConfig;
}

/** The cache's options after defaulting, as `Cache.options` shows them. */
export interface DefaultedOptions {
  defaultNamespaces: Map<string, ResolvedConfig>;
  byObject: Map<string, ResolvedByObject>;
  /** optionDefaultsToConfig: the global Default* values as a Config. */
  global: ResolvedConfig;
  readerFailOnMissingInformer: boolean;
}

/** Whether a kind is namespaced (the RESTMapper's answer). */
export type ScopeResolver = (apiVersion: string, kind: string) => Promise<boolean>;

function resolveConfig(config: Config): ResolvedConfig {
  return {
    labelSelector: toLabelSelector(config.labelSelector),
    fieldSelector: toFieldSelector(config.fieldSelector),
    transform: config.transform,
    unsafeDisableDeepCopy: config.unsafeDisableDeepCopy,
    enableWatchBookmarks: config.enableWatchBookmarks,
    syncPeriodMs: config.syncPeriodMs,
  };
}

function byObjectToConfig(byObject: ByObject): ResolvedConfig {
  return resolveConfig({
    labelSelector: byObject.label,
    fieldSelector: byObject.field,
    transform: byObject.transform,
    unsafeDisableDeepCopy: byObject.unsafeDisableDeepCopy,
    enableWatchBookmarks: byObject.enableWatchBookmarks,
    syncPeriodMs: byObject.syncPeriodMs,
  });
}

function optionDefaultsToConfig(options: CacheConfigOptions): ResolvedConfig {
  return resolveConfig({
    labelSelector: options.defaultLabelSelector,
    fieldSelector: options.defaultFieldSelector,
    transform: options.defaultTransform,
    unsafeDisableDeepCopy: options.defaultUnsafeDisableDeepCopy,
    enableWatchBookmarks: options.defaultEnableWatchBookmarks,
    syncPeriodMs: options.syncPeriodMs,
  });
}

/** defaultConfig: fills only the fields that are unset. Every Config field takes part. */
export function defaultConfig(toDefault: ResolvedConfig, from: ResolvedConfig): ResolvedConfig {
  return {
    labelSelector: toDefault.labelSelector ?? from.labelSelector,
    fieldSelector: toDefault.fieldSelector ?? from.fieldSelector,
    transform: toDefault.transform ?? from.transform,
    unsafeDisableDeepCopy: toDefault.unsafeDisableDeepCopy ?? from.unsafeDisableDeepCopy,
    enableWatchBookmarks: toDefault.enableWatchBookmarks ?? from.enableWatchBookmarks,
    syncPeriodMs: toDefault.syncPeriodMs ?? from.syncPeriodMs,
  };
}

/**
 * The `''` namespace's field selector: `metadata.namespace!=<each other key, sorted>` ANDed with its own,
 * so that the all-namespaces informer does not also cache the namespaces that have their own.
 */
function withNamespaceExclusions(config: ResolvedConfig, namespaces: Iterable<string>): ResolvedConfig {
  const exclusions = [...namespaces]
    .filter((ns) => ns !== ALL_NAMESPACES)
    .sort()
    .map((ns) => notEqualFieldSelector('metadata.namespace', ns));
  const own = config.fieldSelector ? [config.fieldSelector] : [];
  return { ...config, fieldSelector: andFieldSelectors([...exclusions, ...own]) };
}

/**
 * defaultOpts, in upstream's order (pkg/cache/cache.go). The input is not modified (upstream clones its maps
 * for the same reason: one Options value may be reused). Precedence for one namespace of one kind:
 * ByObject.namespaces[ns] > ByObject type-level > DefaultNamespaces[ns] > Default*.
 */
export async function defaultOptions(
  options: CacheConfigOptions,
  isNamespaced: ScopeResolver,
): Promise<DefaultedOptions> {
  const global = optionDefaultsToConfig(options);
  const defaultNamespacesRaw = new Map(
    Object.entries(options.defaultNamespaces ?? {}).map(([ns, c]) => [ns, resolveConfig(c)] as const),
  );

  const byObject = new Map<string, ResolvedByObject>();
  for (const [key, entry] of Object.entries(options.byObject ?? {})) {
    const { apiVersion, kind } = parseByObjectKey(key);
    let namespaced: boolean;
    try {
      namespaced = await isNamespaced(apiVersion, kind);
    } catch (err) {
      throw new Error(
        `failed to determine if ${typeName(apiVersion, kind)} is namespaced: ${describe(err)}`,
        {
          cause: err,
        },
      );
    }
    if (!namespaced && entry.namespaces !== undefined) {
      throw new Error(
        `type ${typeName(apiVersion, kind)} is not namespaced, but its ByObject.Namespaces setting is not nil`,
      );
    }

    let namespaces: Map<string, ResolvedConfig> | undefined;
    if (namespaced && entry.namespaces === undefined) {
      // Cloned from the *undefaulted* DefaultNamespaces (an empty map stays "nothing to default from").
      namespaces = options.defaultNamespaces === undefined ? undefined : new Map(defaultNamespacesRaw);
    } else if (entry.namespaces !== undefined) {
      namespaces = new Map(
        Object.entries(entry.namespaces).map(([ns, c]) => [ns, resolveConfig(c)] as const),
      );
    }

    // Namespace entries first: they must see the undefaulted type-level config to fall through to
    // DefaultNamespaces' own settings.
    const typeLevel = byObjectToConfig(entry);
    if (namespaces) {
      for (const [ns, raw] of namespaces) {
        let config = defaultConfig(raw, typeLevel);
        const nsDefaults = defaultNamespacesRaw.get(ns);
        if (nsDefaults) config = defaultConfig(config, nsDefaults);
        config = defaultConfig(config, global);
        if (ns === ALL_NAMESPACES) config = withNamespaceExclusions(config, namespaces.keys());
        namespaces.set(ns, config);
      }
    }

    // The type-level settings only matter (and are only defaulted) without namespace entries.
    const config =
      !namespaced || !namespaces || namespaces.size === 0 ? defaultConfig(typeLevel, global) : typeLevel;
    byObject.set(byObjectKey(apiVersion, kind), { apiVersion, kind, namespaced, namespaces, config });
  }

  // After ByObject, which needed the undefaulted DefaultNamespaces.
  const defaultNamespaces = new Map<string, ResolvedConfig>();
  for (const [ns, raw] of defaultNamespacesRaw) {
    let config = defaultConfig(raw, global);
    if (ns === ALL_NAMESPACES) config = withNamespaceExclusions(config, defaultNamespacesRaw.keys());
    defaultNamespaces.set(ns, config);
  }

  return {
    defaultNamespaces,
    byObject,
    global,
    readerFailOnMissingInformer: options.readerFailOnMissingInformer ?? false,
  };
}

/** calculateResyncPeriod: period × U[0.9, 1.1), so informers of one process do not resync in lockstep. */
export function jitteredSyncPeriod(periodMs: number | undefined, random: () => number = Math.random): number {
  const period = periodMs ?? DEFAULT_SYNC_PERIOD_MS;
  return Math.floor(period * (0.9 + 0.2 * random()));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
