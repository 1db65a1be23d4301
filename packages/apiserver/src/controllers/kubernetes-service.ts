import { isNotFound, jsonEqual, type KubeObject, type StoredObject } from '@certkit/apimachinery';
import { isIP } from 'node:net';
import type { Registry } from '../registry/registry.ts';
import { type ServiceRanges, serviceRanges } from '../registry/builtins/service-ranges.ts';

/**
 * The `kubernetes` Service in `default`, with its Endpoints and EndpointSlice, as kube-apiserver's control
 * plane reconciler keeps them: the first address of the service CIDR, port 443 named https, and this server's
 * address and port behind it. Every cluster has it (`kubectl get all` lists it; in-cluster clients find the
 * API server through it). With several servers on one store, the last to start is the endpoint: there is no
 * lease of live servers here, as kube-apiserver's `lease` reconciler keeps.
 */

const NAMESPACE = 'default';
const NAME = 'kubernetes';

/** The address clients reach this server at: the address it listens on, or loopback for a wildcard one. */
export function advertisedAddress(host: string | undefined): string {
  if (host && isIP(host) && host !== '0.0.0.0' && host !== '::') return host;
  return '127.0.0.1';
}

function firstAddress(ranges: ServiceRanges): string {
  const n = ranges.cidr.first;
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

/** Creates the object, or updates it when its `fields` differ from what it should be. */
async function reconcile(
  registry: Registry,
  group: string,
  resource: string,
  wanted: KubeObject,
  fields: string[],
): Promise<void> {
  const store = registry.byResource(group, resource)!;
  let current: StoredObject | undefined;
  try {
    current = await store.get(NAMESPACE, NAME);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (!current) {
    await store.create(NAMESPACE, wanted);
    return;
  }
  const differs = fields.some((f) => !jsonEqual(current[f], wanted[f]));
  const labels = { ...current.metadata.labels, ...wanted.metadata?.labels };
  if (!differs && jsonEqual(labels, current.metadata.labels ?? {})) return;
  const next = { ...current, metadata: { ...current.metadata, labels } } as KubeObject;
  for (const f of fields) next[f] = wanted[f];
  await store.update(NAMESPACE, NAME, next);
}

export async function ensureKubernetesService(
  registry: Registry,
  address: string,
  port: number,
): Promise<void> {
  const serviceStore = registry.byResource('', 'services')!;
  // The ranges the registry's stores were given (the server's --service-* options).
  const ranges = serviceStore.context.serviceRanges ?? serviceRanges(serviceStore.storage);
  const family = isIP(address) === 6 ? 'IPv6' : 'IPv4';
  let service: StoredObject | undefined;
  try {
    service = await serviceStore.get(NAMESPACE, NAME);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const ports = [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }];
  if (!service) {
    await serviceStore.create(NAMESPACE, {
      metadata: { name: NAME, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: firstAddress(ranges), ports, sessionAffinity: 'None' },
    });
  } else if (!jsonEqual((service.spec as { ports?: unknown })?.ports, ports)) {
    await serviceStore.update(NAMESPACE, NAME, { ...service, spec: { ...(service.spec as object), ports } });
  }
  await reconcile(
    registry,
    '',
    'endpoints',
    {
      metadata: { name: NAME, labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    },
    ['subsets'],
  );
  await reconcile(
    registry,
    'discovery.k8s.io',
    'endpointslices',
    {
      metadata: { name: NAME, labels: { 'kubernetes.io/service-name': NAME } },
      addressType: family,
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
    ['addressType', 'endpoints', 'ports'],
  );
}
