import { formatTime } from '@certkit/apimachinery';
import type { Storage } from '@certkit/apiserver/storage/types';

/**
 * Writes objects straight into storage, in the stored format (JSON without resourceVersion), so tests and
 * benchmarks can start a server over tens of thousands of objects without creating each through the API.
 */

export async function seedNamespace(storage: Storage, name: string): Promise<void> {
  await storage.create(
    `/registry/core/namespaces/${name}`,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, uid: `ns-${name}`, creationTimestamp: formatTime(new Date()) },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    }),
  );
}

export interface SeedSecretsOptions {
  /** Data of every Secret (default: 512 bytes of base64 under `payload`). */
  data?: Record<string, string>;
  type?: string;
  labels?: (i: number) => Record<string, string>;
  annotations?: Record<string, string>;
}

/** `count` Secrets named s-00000, s-00001, … in the namespace (which must exist, see seedNamespace). */
export async function seedSecrets(
  storage: Storage,
  namespace: string,
  count: number,
  options: SeedSecretsOptions = {},
): Promise<void> {
  const now = formatTime(new Date());
  const data = options.data ?? { payload: Buffer.alloc(512, 'x').toString('base64') };
  for (let i = 0; i < count; i++) {
    const name = `s-${String(i).padStart(5, '0')}`;
    const metadata: Record<string, unknown> = { name, namespace, uid: `uid-${i}`, creationTimestamp: now };
    if (options.labels) metadata.labels = options.labels(i);
    if (options.annotations) metadata.annotations = options.annotations;
    await storage.create(
      `/registry/core/secrets/${namespace}/${name}`,
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata, type: options.type ?? 'Opaque', data }),
    );
  }
}
