import { resolve } from 'node:path';
import {
  ApiServer,
  ensureServingCertificates,
  EtcdStorage,
  ensureToken,
  loadClientCa,
  loadServingFiles,
  loadTokenFile,
  SqliteStorage,
  type Storage,
  startCompactor,
  writeKubeconfig,
} from '@certkit/apiserver';
import { certManagerAdmission } from '@certkit/certificates/api/admission';
import type { ServeFlags } from './args.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { ensurePrivateDataDir, restrictDataDirFiles } from './private-data-dir.ts';

/** A running control plane: the API server over SQLite in the data dir, with its kubeconfig written. */
export interface ControlPlane {
  server: ApiServer;
  storage: Storage;
  kubeconfigPath: string;
  close(): Promise<void>;
}

/** Where clients should connect: a wildcard bind address is reached through loopback. */
function clientHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function warn(message: string): void {
  process.stderr.write(`certkit: warning: ${message}\n`);
}

/** A flag's file that cannot be used fails the start with one line naming the flag. */
async function flagFile<T>(flag: string, loading: Promise<T>): Promise<T> {
  try {
    return await loading;
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
}

export async function startControlPlane(flags: ServeFlags): Promise<ControlPlane> {
  const dataDir = resolve(flags.dataDir);
  await ensurePrivateDataDir(dataDir, warn);
  // Before anything in the dir is read or written: a second server on it would share the database and
  // rewrite the kubeconfig under the first one's clients.
  const lock = lockDataDir(dataDir);
  try {
    await restrictDataDirFiles(dataDir, warn);
    const plane = await startOnDataDir(dataDir, flags);
    return {
      ...plane,
      async close() {
        await plane.close();
        lock.release();
      },
    };
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function startOnDataDir(dataDir: string, flags: ServeFlags): Promise<ControlPlane> {
  const certificates = flags.tlsCertFile
    ? await flagFile('tls-cert-file', loadServingFiles(flags.tlsCertFile, flags.tlsPrivateKeyFile!))
    : await ensureServingCertificates(dataDir, [flags.host]);
  const clientCa = flags.clientCaFile
    ? await flagFile('client-ca-file', loadClientCa(flags.clientCaFile))
    : undefined;
  const tokens = flags.tokenAuthFile
    ? await flagFile('token-auth-file', loadTokenFile(flags.tokenAuthFile, warn))
    : undefined;
  // Generated, and accepted, whatever the flags say: it is the credential of the kubeconfig written below,
  // which `up`'s own controller uses (as kube-apiserver keeps a loopback token for itself).
  const token = await ensureToken(dataDir);
  const storage: Storage =
    flags.storage === 'etcd'
      ? await EtcdStorage.connect({ endpoints: flags.etcdEndpoints })
      : SqliteStorage.open(resolve(dataDir, 'state.db'), { synchronous: flags.sqliteSynchronous });
  // With several API servers on one etcd each compacts; compaction never goes backwards, so that is harmless.
  const compactor = startCompactor(storage, {});
  let server: ApiServer;
  try {
    server = await ApiServer.start({
      storage,
      host: flags.host,
      port: flags.port,
      tls: { cert: certificates.certPem, key: certificates.keyPem, clientCa },
      token,
      tokens,
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
    storage,
    kubeconfigPath,
    async close() {
      compactor.stop();
      await server.close();
      await storage.close();
    },
  };
}
