/**
 * Where a webhook's `clientConfig.service` listens. certkit runs no kube-proxy, so a Service's cluster IP
 * leads nowhere: as kube-apiserver does with --enable-aggregator-routing, the call is dialled at one of the
 * Service's ready endpoints, found through its EndpointSlices (label kubernetes.io/service-name), at the
 * endpoint port named as the service port is; the TLS name stays `<name>.<namespace>.svc`.
 */

import { newServiceUnavailable, parseListOptions, type StoredObject } from '@certkit/apimachinery';
import type { Registry } from '../registry/registry.ts';
import type { ObjectStore } from '../registry/generic/store.ts';
import type { WatchCaches } from '../watchcache/caches.ts';
import type { ServiceResolver } from './dispatch.ts';
import type { ServiceReference } from './webhook-types.ts';

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Service types whose endpoints the API server may dial (ExternalName has none). */
const DIALLED_TYPES = new Set(['ClusterIP', 'NodePort', 'LoadBalancer']);

interface ServicePort {
  name?: string;
  port?: number;
}

interface Slice {
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[];
  ports?: { name?: string; port?: number }[];
}

export function endpointSliceResolver(registry: Registry, caches: WatchCaches): ServiceResolver {
  const services = () => registry.byResource('', 'services');
  const slices = () => registry.byResource('discovery.k8s.io', 'endpointslices');

  async function getService(
    store: ObjectStore,
    namespace: string,
    name: string,
  ): Promise<StoredObject | undefined> {
    const cache = caches.cacheFor(store);
    if (cache?.ready.ready) return cache.get(store.key(namespace, name))?.obj;
    return store.get(namespace, name).catch(() => undefined);
  }

  async function slicesOf(store: ObjectStore, namespace: string, name: string): Promise<StoredObject[]> {
    const cache = caches.cacheFor(store);
    if (cache?.ready.ready) {
      return cache
        .list(namespace)
        .map((entry) => entry.obj)
        .filter((s) => s.metadata.labels?.[SERVICE_NAME_LABEL] === name);
    }
    const query = new URLSearchParams({ labelSelector: `${SERVICE_NAME_LABEL}=${name}` });
    return (await store.list(namespace, parseListOptions(query, 'list'))).items;
  }

  return async (ref: ServiceReference) => {
    const namespace = ref.namespace ?? '';
    const name = ref.name ?? '';
    const port = ref.port ?? 443;
    const serviceStore = services();
    const sliceStore = slices();
    if (!serviceStore || !sliceStore) throw new Error('services are not served');
    const service = await getService(serviceStore, namespace, name);
    if (!service) throw new Error(`service "${name}" not found`);
    const spec = (service.spec ?? {}) as { type?: string; ports?: ServicePort[] };
    const type = spec.type ?? 'ClusterIP';
    if (!DIALLED_TYPES.has(type)) throw new Error(`unsupported service type "${type}"`);
    const servicePort = (spec.ports ?? []).find((p) => p.port === port);
    if (!servicePort) throw new Error(`no service port ${port} found for service "${name}"`);
    const portName = servicePort.name ?? '';
    const candidates: { host: string; port: number }[] = [];
    for (const slice of (await slicesOf(sliceStore, namespace, name)) as (StoredObject & Slice)[]) {
      if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
      const endpointPort = (slice.ports ?? []).find((p) => (p.name ?? '') === portName)?.port;
      if (endpointPort === undefined) continue;
      for (const endpoint of slice.endpoints ?? []) {
        // An endpoint whose readiness is unknown is taken as ready, as EndpointSlice consumers must.
        if (endpoint.conditions?.ready === false) continue;
        for (const address of endpoint.addresses ?? [])
          candidates.push({ host: address, port: endpointPort });
      }
    }
    if (candidates.length === 0) throw newServiceUnavailable(`no endpoints available for service "${name}"`);
    return candidates[Math.floor(Math.random() * candidates.length)];
  };
}
