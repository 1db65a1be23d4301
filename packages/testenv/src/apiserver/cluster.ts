/**
 * For runtime's client, informer and cache tests: a real embedded API server and a runtime client for it.
 * `fault-proxy.ts` puts a proxy that injects failures in front of it.
 */
import type { KubeObject } from '@certkit/apimachinery';
import type { ClientConfig } from '@certkit/runtime/client/config';
import { KubeClient } from '@certkit/runtime/client/kube-client';
import { loadKubeconfig } from '@certkit/runtime/client/kubeconfig';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.ts';

export interface Cluster {
  server: TestServer;
  config: ClientConfig;
  client: KubeClient;
  /** Creates objects through the API (kind and apiVersion taken from each object). */
  create(...objects: KubeObject[]): Promise<KubeObject[]>;
  remove(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void>;
  /** name → resourceVersion of what the server holds, optionally in one namespace. */
  contents(apiVersion: string, kind: string, namespace?: string): Promise<Map<string, string>>;
  close(): Promise<void>;
}

export async function startCluster(options: TestServerOptions = {}): Promise<Cluster> {
  const server = await startTestServer(options);
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  // Tests write in bursts; client-side rate limiting would only slow them down.
  const client = new KubeClient({ ...config, qps: -1 });
  const cluster: Cluster = {
    server,
    config,
    client,
    async create(...objects) {
      const created: KubeObject[] = [];
      for (const obj of objects) {
        const resource = await client.forKind(obj.apiVersion!, obj.kind!);
        created.push(await resource.create(obj.metadata?.namespace, obj));
      }
      return created;
    },
    async remove(apiVersion, kind, namespace, name) {
      const resource = await client.forKind(apiVersion, kind);
      await resource.delete(namespace, name);
    },
    async contents(apiVersion, kind, namespace) {
      const resource = await client.forKind(apiVersion, kind);
      const list = await resource.list(namespace, { resourceVersion: '' });
      return new Map(list.items.map((o) => [keyOf(o), o.metadata?.resourceVersion ?? '']));
    },
    async close() {
      client.close();
      await server.close();
    },
  };
  return cluster;
}

export function keyOf(obj: KubeObject): string {
  return obj.metadata?.namespace
    ? `${obj.metadata.namespace}/${obj.metadata.name}`
    : (obj.metadata?.name ?? '');
}

/** Polls until `predicate` resolves true, or throws after timeoutMs. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
