import { resolve } from 'node:path';
import {
  ApiServer,
  ensureServingCertificates,
  EtcdStorage,
  ensureSigningKey,
  ensureToken,
  loadClientCa,
  loadServingFiles,
  loadSigningKey,
  loadTokenFile,
  loadVerificationKeys,
  parsePortRange,
  parseServiceCidr,
  type ServiceAccountTokenOptions,
  SqliteStorage,
  type Storage,
  startCompactor,
  writeKubeconfig,
} from '@certkit/apiserver';
import { certManagerAdmission, certManagerMutation } from '@certkit/certificates/api/admission';
import { jsonLogger, type Logger } from '@certkit/runtime/log';
import type { ServeFlags } from './args.ts';
import { dataDirError } from './data-dir-error.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { etcdErrorInWords } from './etcd-error.ts';
import { withListenErrorInWords } from './listen-error.ts';
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

/** A flag's value checked by `parse`, its error naming the flag. */
function checkFlag(flag: string, parse: () => unknown): void {
  try {
    parse();
  } catch (err) {
    throw new Error(`--${flag}: ${(err as Error).message}`);
  }
}

/**
 * A port that cannot be bound, said with what to do about it: the usual cause is a second `certkit up` (or
 * another server) on 6443, and --port is the way out.
 */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new Error(`--host ${host}: not an address of this machine (${code})`, { cause: err });
  }
  return withListenErrorInWords(err, [
    {
      flag: 'port',
      value: String(port),
      port,
      usualHolder: 'another certkit up or apiserver',
      alternative: '0 picks a free one',
    },
  ]);
}

/** The data dir's database; one that cannot be opened ("file is not a database") is named in the error. */
function openSqlite(path: string, flags: ServeFlags): Storage {
  try {
    return SqliteStorage.open(path, { synchronous: flags.sqliteSynchronous });
  } catch (err) {
    throw new Error(`${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Starts the API server the flags describe; its log goes to `log` (warnings and errors on stderr by default). */
export async function startControlPlane(
  flags: ServeFlags,
  log: Logger = jsonLogger('warn'),
): Promise<ControlPlane> {
  const dataDir = resolve(flags.dataDir);
  let lock: DataDirLock;
  try {
    await ensurePrivateDataDir(dataDir, warn);
    // Before anything in the dir is read or written: a second server on it would share the database and
    // rewrite the kubeconfig under the first one's clients.
    lock = lockDataDir(dataDir);
  } catch (err) {
    throw dataDirError(dataDir, err);
  }
  try {
    await restrictDataDirFiles(dataDir, warn);
    const plane = await startOnDataDir(dataDir, flags, log);
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

/**
 * The ServiceAccount token flags, their files read. Without --service-account-signing-key-file the key is the
 * one generated in the data dir on first start and kept: tokens stay valid across restarts, and replicas on
 * one etcd given the same key file accept each other's tokens.
 */
async function serviceAccountTokenOptions(
  dataDir: string,
  flags: ServeFlags,
): Promise<ServiceAccountTokenOptions> {
  const signingKey = flags.serviceAccountSigningKeyFile
    ? await flagFile('service-account-signing-key-file', loadSigningKey(flags.serviceAccountSigningKeyFile))
    : await ensureSigningKey(dataDir);
  const verificationKeys = [];
  for (const file of flags.serviceAccountKeyFiles) {
    verificationKeys.push(...(await flagFile('service-account-key-file', loadVerificationKeys(file))));
  }
  return {
    issuers: flags.serviceAccountIssuers,
    apiAudiences: flags.apiAudiences,
    signingKey,
    verificationKeys,
    jwksUri: flags.serviceAccountJwksUri,
    maxExpirationSeconds: flags.serviceAccountMaxTokenExpirationSeconds,
  };
}

async function startOnDataDir(dataDir: string, flags: ServeFlags, log: Logger): Promise<ControlPlane> {
  // Checked before anything is opened, so a mistake is one line naming the flag.
  checkFlag('service-cluster-ip-range', () => parseServiceCidr(flags.serviceClusterIpRange));
  checkFlag('service-node-port-range', () => parsePortRange(flags.serviceNodePortRange));
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
  const serviceAccountTokens = await serviceAccountTokenOptions(dataDir, flags);
  const storage: Storage =
    flags.storage === 'etcd'
      ? await EtcdStorage.connect({ endpoints: flags.etcdEndpoints }).catch((err: unknown) => {
          throw etcdErrorInWords(err, flags.etcdEndpoints);
        })
      : openSqlite(resolve(dataDir, 'state.db'), flags);
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
      serviceAccountTokens,
      authorizationMode: flags.authorizationMode,
      serviceClusterIpRange: flags.serviceClusterIpRange,
      serviceNodePortRange: flags.serviceNodePortRange,
      watchCache: flags.watchCache,
      // The webhook's checks for cert-manager.io objects, so `kubectl apply` of an invalid one fails at once.
      admission: certManagerAdmission,
      // Its mutation too: a CertificateRequest records who created it (spec.username, uid, groups, extra).
      admissionMutation: certManagerMutation,
      storageInitializationTimeoutMs: flags.storageInitializationTimeoutMs,
      eventTtlMs: flags.eventTtlMs,
      requestTimeoutMs: flags.requestTimeoutMs,
      maxRequestsInflight: flags.maxRequestsInflight,
      maxMutatingRequestsInflight: flags.maxMutatingRequestsInflight,
      log: log as (entry: Record<string, unknown>) => void,
    });
  } catch (err) {
    compactor.stop();
    await storage.close();
    throw listenError(err, flags.host, flags.port);
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
