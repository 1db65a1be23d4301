import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  ApiServer,
  ensureServingCertificates,
  EtcdStorage,
  ensureToken,
  SqliteStorage,
  type Storage,
  startCompactor,
  writeKubeconfig,
} from '@certkit/apiserver';
import { certManagerAdmission } from '@certkit/certificates/api/admission';
import type { ServeFlags } from './args.ts';

/** A running control plane: the API server over SQLite in the data dir, with its kubeconfig written. */
export interface ControlPlane {
  server: ApiServer;
  kubeconfigPath: string;
  close(): Promise<void>;
}

/** Where clients should connect: a wildcard bind address is reached through loopback. */
function clientHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function startControlPlane(flags: ServeFlags): Promise<ControlPlane> {
  const dataDir = resolve(flags.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const certificates = await ensureServingCertificates(dataDir, [flags.host]);
  const token = await ensureToken(dataDir);
  const storage: Storage =
    flags.storage === 'etcd'
      ? await EtcdStorage.connect({ endpoints: flags.etcdEndpoints })
      : SqliteStorage.open(resolve(dataDir, 'state.db'));
  // With several API servers on one etcd each compacts; compaction never goes backwards, so that is harmless.
  const compactor = startCompactor(storage, {});
  let server: ApiServer;
  try {
    server = await ApiServer.start({
      storage,
      host: flags.host,
      port: flags.port,
      tls: { cert: certificates.certPem, key: certificates.keyPem },
      token,
      watchCache: flags.watchCache,
      // The webhook's checks for cert-manager.io objects, so `kubectl apply` of an invalid one fails at once.
      admission: certManagerAdmission,
      storageInitializationTimeoutMs: flags.storageInitializationTimeoutMs,
      eventTtlMs: flags.eventTtlMs,
      maxRequestsInflight: flags.maxRequestsInflight,
      maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
      log: (entry) => {
        if (entry.level === 'error' || entry.level === 'warn')
          process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
      },
    });
  } catch (err) {
    compactor.stop();
    await storage.close();
    throw err;
  }
  const kubeconfigPath = resolve(dataDir, 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, {
    server: `https://${clientHost(flags.host)}:${server.port}`,
    caCertPem: certificates.caCertPem,
    token,
  });
  return {
    server,
    kubeconfigPath,
    async close() {
      compactor.stop();
      await server.close();
      await storage.close();
    },
  };
}
