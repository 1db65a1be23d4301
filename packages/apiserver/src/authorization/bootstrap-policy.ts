/**
 * The default roles and bindings kube-apiserver writes at start (its RBAC bootstrap policy), reconciled the
 * same way: a missing one is created; an existing one annotated `rbac.authorization.kubernetes.io/autoupdate`
 * other than "false" gets back the rules and subjects it lost. cluster-admin is bound to system:masters; any
 * authenticated user may do discovery, read the public info and review itself, every ServiceAccount may read
 * the token issuer's discovery documents, system:auth-delegator is there to bind; admin, edit and view are
 * aggregated from the `aggregate-to-*` roles, so a ClusterRole labelled for them extends them.
 */

import { isNotFound, jsonEqual, type StoredObject } from '@certkit/apimachinery';
import type { Registry } from '../registry/registry.ts';
import type { PolicyRule } from './policy-rule.ts';
import { MASTERS_GROUP } from './authorizer.ts';
import { RBAC_GROUP } from './rbac-index.ts';

const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const BOOTSTRAP_LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const AGGREGATE_TO = (role: string) => `rbac.authorization.k8s.io/aggregate-to-${role}`;

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
});
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

interface ClusterRoleSpec {
  name: string;
  labels?: Record<string, string>;
  rules?: PolicyRule[];
  /** The aggregate-to-* label this role collects. */
  aggregates?: string;
}

const APPS = [
  'controllerrevisions',
  'daemonsets',
  'deployments',
  'deployments/scale',
  'replicasets',
  'replicasets/scale',
  'statefulsets',
  'statefulsets/scale',
];

export const BOOTSTRAP_CLUSTER_ROLES: ClusterRoleSpec[] = [
  {
    name: 'cluster-admin',
    rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])],
  },
  { name: 'admin', aggregates: 'admin' },
  { name: 'edit', labels: { [AGGREGATE_TO('admin')]: 'true' }, aggregates: 'edit' },
  {
    name: 'view',
    labels: { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true' },
    aggregates: 'view',
  },
  {
    name: 'system:aggregate-to-admin',
    labels: { [AGGREGATE_TO('admin')]: 'true' },
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
      rule([...READ, ...WRITE], [RBAC_GROUP], ['rolebindings', 'roles']),
    ],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true' },
    rules: [
      rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
      rule(
        READ,
        [''],
        ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'],
      ),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(
        WRITE,
        [''],
        [
          'configmaps',
          'events',
          'persistentvolumeclaims',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'secrets',
          'serviceaccounts',
          'services',
          'services/proxy',
        ],
      ),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(WRITE, ['apps'], APPS),
      rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
      rule(WRITE, ['policy'], ['poddisruptionbudgets']),
      rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
      rule(WRITE, ['coordination.k8s.io'], ['leases']),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: {
      [AGGREGATE_TO('admin')]: 'true',
      [AGGREGATE_TO('edit')]: 'true',
      [AGGREGATE_TO('view')]: 'true',
    },
    rules: [
      rule(
        READ,
        [''],
        [
          'configmaps',
          'endpoints',
          'persistentvolumeclaims',
          'persistentvolumeclaims/status',
          'pods',
          'replicationcontrollers',
          'replicationcontrollers/scale',
          'serviceaccounts',
          'services',
          'services/status',
        ],
      ),
      rule(
        READ,
        [''],
        [
          'bindings',
          'events',
          'limitranges',
          'namespaces/status',
          'pods/log',
          'pods/status',
          'replicationcontrollers/status',
          'resourcequotas',
          'resourcequotas/status',
        ],
      ),
      rule(READ, [''], ['namespaces']),
      rule(READ, ['discovery.k8s.io'], ['endpointslices']),
      rule(
        READ,
        ['apps'],
        [...APPS, 'daemonsets/status', 'deployments/status', 'replicasets/status', 'statefulsets/status'],
      ),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
      rule(READ, ['coordination.k8s.io'], ['leases']),
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ],
  },
  {
    name: 'system:discovery',
    rules: [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ],
  },
  {
    name: 'system:public-info-viewer',
    rules: [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])],
  },
  {
    // Scraping and probing, for whoever is put in group system:monitoring.
    name: 'system:monitoring',
    rules: [
      urls(
        ['get'],
        ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'],
      ),
    ],
  },
  {
    // What a delegating webhook or extension server binds its identity to (cert-manager's webhook asks SARs).
    name: 'system:auth-delegator',
    rules: [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ],
  },
  {
    // ServiceAccount token issuer discovery (OIDC), readable by every ServiceAccount as in kube.
    name: 'system:service-account-issuer-discovery',
    rules: [
      urls(
        ['get'],
        [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ],
      ),
    ],
  },
];

const group = (name: string) => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS = [
  { name: 'cluster-admin', role: 'cluster-admin', subjects: [group(MASTERS_GROUP)] },
  { name: 'system:basic-user', role: 'system:basic-user', subjects: [group('system:authenticated')] },
  { name: 'system:discovery', role: 'system:discovery', subjects: [group('system:authenticated')] },
  {
    name: 'system:public-info-viewer',
    role: 'system:public-info-viewer',
    subjects: [group('system:authenticated'), group('system:unauthenticated')],
  },
  { name: 'system:monitoring', role: 'system:monitoring', subjects: [group('system:monitoring')] },
  {
    name: 'system:service-account-issuer-discovery',
    role: 'system:service-account-issuer-discovery',
    subjects: [group('system:serviceaccounts')],
  },
];

function clusterRoleObject(spec: ClusterRoleSpec): StoredObject {
  const obj: Record<string, unknown> = {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: {
      name: spec.name,
      labels: { ...BOOTSTRAP_LABELS, ...spec.labels },
      annotations: { [AUTOUPDATE]: 'true' },
    },
    rules: spec.rules ?? [],
  };
  if (spec.aggregates) {
    obj.aggregationRule = {
      clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO(spec.aggregates)]: 'true' } }],
    };
  }
  return obj as unknown as StoredObject;
}

function bindingObject(b: (typeof BOOTSTRAP_CLUSTER_ROLE_BINDINGS)[number]): StoredObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: {
      name: b.name,
      labels: { ...BOOTSTRAP_LABELS },
      annotations: { [AUTOUPDATE]: 'true' },
    },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: b.role },
    subjects: b.subjects,
  } as unknown as StoredObject;
}

/** Items of wanted missing from have (by value), appended: reconciliation only adds. */
function missing<T>(have: T[], wanted: T[]): T[] {
  return wanted.filter((w) => !have.some((h) => jsonEqual(h, w)));
}

/** Writes the bootstrap roles and bindings that are missing, and restores what reconciliation restores. */
export async function ensureBootstrapPolicy(registry: Registry): Promise<void> {
  const roles = registry.byResource(RBAC_GROUP, 'clusterroles')!;
  const bindings = registry.byResource(RBAC_GROUP, 'clusterrolebindings')!;
  for (const spec of BOOTSTRAP_CLUSTER_ROLES) {
    const wanted = clusterRoleObject(spec);
    await reconcile(roles, wanted, (current) => {
      // Aggregated roles' rules are the aggregation controller's to write.
      if (spec.aggregates) {
        return current.aggregationRule ? undefined : { ...current, aggregationRule: wanted.aggregationRule };
      }
      const add = missing((current.rules as PolicyRule[]) ?? [], spec.rules ?? []);
      return add.length
        ? { ...current, rules: [...((current.rules as PolicyRule[]) ?? []), ...add] }
        : undefined;
    });
  }
  for (const b of BOOTSTRAP_CLUSTER_ROLE_BINDINGS) {
    await reconcile(bindings, bindingObject(b), (current) => {
      const have = (current.subjects as unknown[]) ?? [];
      const add = missing(have, b.subjects);
      return add.length ? { ...current, subjects: [...have, ...add] } : undefined;
    });
  }
}

type Store = NonNullable<ReturnType<Registry['byResource']>>;

async function reconcile(
  store: Store,
  wanted: StoredObject,
  repair: (current: StoredObject) => StoredObject | undefined,
): Promise<void> {
  const name = wanted.metadata.name!;
  let current: StoredObject;
  try {
    current = await store.get(undefined, name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await store.create(undefined, wanted).catch((e: unknown) => {
      // Another server of the same storage wrote it first.
      if ((e as { status?: { reason?: string } }).status?.reason !== 'AlreadyExists') throw e;
    });
    return;
  }
  if (current.metadata.annotations?.[AUTOUPDATE] === 'false') return;
  const next = repair(current);
  if (!next) return;
  await store.update(undefined, name, next).catch((e: unknown) => {
    // A concurrent writer (another server reconciling) won; its copy is as good.
    if ((e as { status?: { reason?: string } }).status?.reason !== 'Conflict') throw e;
  });
}
