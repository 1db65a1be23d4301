import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';
import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { SqliteSynchronous } from '@certkit/apiserver';

/** A command-line mistake: printed as one line, exit status 2. */
export class UsageError extends Error {}

export interface ServeFlags {
  dataDir: string;
  port: number;
  host: string;
  storage: 'sqlite' | 'etcd';
  etcdEndpoints: string[];
  /** kube-apiserver's --watch-cache: serve reads and watches from per-resource caches. */
  watchCache: boolean;
  /** kube-apiserver's --storage-initialization-timeout, in ms. */
  storageInitializationTimeoutMs: number;
  /** kube-apiserver's --event-ttl, in ms: how long Events are kept after their last write. */
  eventTtlMs: number;
  /** kube-apiserver's --max-requests-inflight: read-only requests served at once (0: unlimited). */
  maxRequestsInflight: number;
  /** kube-apiserver's --max-mutating-requests-inflight: mutating requests served at once (0: unlimited). */
  maxMutatingRequestsInflight: number;
  /** kube-apiserver's --tls-cert-file and --tls-private-key-file: served instead of the generated certificate. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** kube-apiserver's --client-ca-file: client certificates it issued authenticate (CN user, O groups). */
  clientCaFile?: string;
  /** kube-apiserver's --token-auth-file: CSV of token,user,uid[,"group1,group2"]. */
  tokenAuthFile?: string;
  /** SQLite's synchronous mode: FULL (the default) acknowledges a write once it would survive a power loss. */
  sqliteSynchronous: SqliteSynchronous;
  /** Values of the extra options the caller asked to parse (e.g. the controller's, for `up`). */
  extra: Record<string, string | boolean | undefined>;
}

function parseBoolean(flag: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${flag} must be true or false, got ${JSON.stringify(value)}`);
}

/** A request limit as kube-apiserver takes it: a non-negative integer, 0 for none. */
function parseInflightLimit(flag: string, values: Record<string, string | boolean | undefined>): number {
  const text = String(values[flag]);
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${flag} must be a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** Flags shared by `up` and `apiserver`. */
export function parseServeFlags(args: string[], extraOptions: ParseArgsOptionsConfig = {}): ServeFlags {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'data-dir': { type: 'string', default: '.certkit' },
        port: { type: 'string', default: '6443' },
        host: { type: 'string', default: '127.0.0.1' },
        storage: { type: 'string', default: 'sqlite' },
        'etcd-endpoints': { type: 'string' },
        'watch-cache': { type: 'string', default: 'true' },
        'storage-initialization-timeout': { type: 'string', default: '1m' },
        'event-ttl': { type: 'string', default: '1h' },
        'max-requests-inflight': { type: 'string', default: '400' },
        'max-mutating-requests-inflight': { type: 'string', default: '200' },
        'tls-cert-file': { type: 'string' },
        'tls-private-key-file': { type: 'string' },
        'client-ca-file': { type: 'string' },
        'token-auth-file': { type: 'string' },
        'sqlite-synchronous': { type: 'string', default: 'full' },
        ...extraOptions,
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
  }
  const dataDir = String(values['data-dir']);
  if (dataDir === '') throw new UsageError('--data-dir must not be empty');
  const storage = String(values.storage);
  if (storage !== 'sqlite' && storage !== 'etcd') {
    throw new UsageError(`--storage must be sqlite or etcd, got ${JSON.stringify(storage)}`);
  }
  const etcdEndpoints = String(values['etcd-endpoints'] ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (storage === 'etcd' && etcdEndpoints.length === 0) {
    throw new UsageError('--storage etcd needs --etcd-endpoints URL[,URL...]');
  }
  for (const endpoint of etcdEndpoints) {
    if (!/^https?:\/\/[^/]+$/.test(endpoint)) {
      throw new UsageError(
        `--etcd-endpoints: ${JSON.stringify(endpoint)} is not a URL like http://127.0.0.1:2379`,
      );
    }
  }
  let storageInitializationTimeoutMs: number;
  try {
    storageInitializationTimeoutMs = toMilliseconds(
      parseGoDuration(String(values['storage-initialization-timeout'])),
    );
  } catch (err) {
    throw new UsageError(`--storage-initialization-timeout: ${(err as Error).message}`);
  }
  if (storageInitializationTimeoutMs < 0) {
    throw new UsageError('--storage-initialization-timeout must not be negative');
  }
  let eventTtlMs: number;
  try {
    eventTtlMs = toMilliseconds(parseGoDuration(String(values['event-ttl'])));
  } catch (err) {
    throw new UsageError(`--event-ttl: ${(err as Error).message}`);
  }
  if (eventTtlMs <= 0) throw new UsageError('--event-ttl must be positive');
  const maxRequestsInflight = parseInflightLimit('max-requests-inflight', values);
  const maxMutatingRequestsInflight = parseInflightLimit('max-mutating-requests-inflight', values);
  const file = (flag: string) => {
    const value = values[flag] as string | undefined;
    if (value === '') throw new UsageError(`--${flag} must not be empty`);
    return value;
  };
  const tlsCertFile = file('tls-cert-file');
  const tlsPrivateKeyFile = file('tls-private-key-file');
  if ((tlsCertFile === undefined) !== (tlsPrivateKeyFile === undefined)) {
    throw new UsageError('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const synchronous = String(values['sqlite-synchronous']);
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new UsageError(`--sqlite-synchronous must be full or normal, got ${JSON.stringify(synchronous)}`);
  }
  return {
    dataDir,
    port,
    host: String(values.host),
    storage,
    etcdEndpoints,
    watchCache: parseBoolean('watch-cache', String(values['watch-cache'])),
    storageInitializationTimeoutMs,
    eventTtlMs,
    maxRequestsInflight,
    maxMutatingRequestsInflight,
    tlsCertFile,
    tlsPrivateKeyFile,
    clientCaFile: file('client-ca-file'),
    tokenAuthFile: file('token-auth-file'),
    sqliteSynchronous: synchronous === 'full' ? 'FULL' : 'NORMAL',
    extra: Object.fromEntries(Object.keys(extraOptions).map((k) => [k, values[k]])),
  };
}
