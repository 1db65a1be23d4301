import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { SqliteSynchronous } from '@certkit/apiserver';
import { type FlagTable, type FlagValues, parseFlags, UsageError } from './flags.ts';

/** Parsed values where flags declared `multiple` give arrays (the ServiceAccount flags). */
type RepeatableFlagValues = Record<string, FlagValues[string] | (string | boolean)[]>;

export { UsageError };

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
  /** kube-apiserver's --request-timeout, in ms: how long a request that is not a watch may take. */
  requestTimeoutMs: number;
  /** kube-apiserver's --max-mutating-requests-inflight: mutating requests served at once (0: unlimited). */
  maxMutatingRequestsInflight: number;
  /** kube-apiserver's --tls-cert-file and --tls-private-key-file: served instead of the generated certificate. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** kube-apiserver's --client-ca-file: client certificates it issued authenticate (CN user, O groups). */
  clientCaFile?: string;
  /** kube-apiserver's --token-auth-file: CSV of token,user,uid[,"group1,group2"]. */
  tokenAuthFile?: string;
  /** kube-apiserver's --service-account-issuer (repeatable): the first is written into new tokens. */
  serviceAccountIssuers: string[];
  /** kube-apiserver's --service-account-signing-key-file; without it, the key generated in the data dir. */
  serviceAccountSigningKeyFile?: string;
  /** kube-apiserver's --service-account-key-file (repeatable): further public keys tokens may be signed with. */
  serviceAccountKeyFiles: string[];
  /** kube-apiserver's --service-account-jwks-uri: the jwks_uri of the issuer discovery document. */
  serviceAccountJwksUri?: string;
  /** kube-apiserver's --service-account-max-token-expiration, in seconds (0: no limit). */
  serviceAccountMaxTokenExpirationSeconds: number;
  /** kube-apiserver's --api-audiences (repeatable, comma-separated): the issuers when none. */
  apiAudiences: string[];
  /** kube-apiserver's --service-cluster-ip-range: where Services' cluster IPs come from. */
  serviceClusterIpRange: string;
  /** kube-apiserver's --service-node-port-range: where NodePort Services' ports come from. */
  serviceNodePortRange: string;
  /** kube-apiserver's --authorization-mode: RBAC (the default) or AlwaysAllow. */
  authorizationMode: 'RBAC' | 'AlwaysAllow';
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
function parseInflightLimit(flag: string, values: FlagValues): number {
  const text = String(values[flag]);
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${flag} must be a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * The issuer of ServiceAccount tokens when --service-account-issuer is not given: the in-cluster name of the
 * API server, as kubeadm and kind configure it, so that tokens name the issuer clients in a cluster expect.
 */
export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** kube-apiserver's floor for --service-account-max-token-expiration. */
const MIN_MAX_TOKEN_EXPIRATION_SECONDS = 3607;

function strings(values: RepeatableFlagValues, flag: string): string[] {
  const value = values[flag];
  return value === undefined ? [] : (Array.isArray(value) ? value : [value]).map(String);
}

/** The ServiceAccount token flags: files must not be empty, issuers neither; audiences split on commas. */
function serviceAccountFlags(
  values: RepeatableFlagValues,
): Pick<
  ServeFlags,
  | 'serviceAccountIssuers'
  | 'serviceAccountSigningKeyFile'
  | 'serviceAccountKeyFiles'
  | 'serviceAccountJwksUri'
  | 'serviceAccountMaxTokenExpirationSeconds'
  | 'apiAudiences'
> {
  const issuers = strings(values, 'service-account-issuer');
  if (issuers.some((i) => i === '')) throw new UsageError('--service-account-issuer must not be empty');
  const keyFiles = strings(values, 'service-account-key-file');
  if (keyFiles.some((f) => f === '')) throw new UsageError('--service-account-key-file must not be empty');
  const signingKeyFile = values['service-account-signing-key-file'] as string | undefined;
  if (signingKeyFile === '') throw new UsageError('--service-account-signing-key-file must not be empty');
  const jwksUri = values['service-account-jwks-uri'] as string | undefined;
  if (jwksUri !== undefined && !/^https:\/\/[^/]/.test(jwksUri)) {
    throw new UsageError(`--service-account-jwks-uri must be an https URL, got ${JSON.stringify(jwksUri)}`);
  }
  let maxExpirationMs: number;
  try {
    maxExpirationMs = toMilliseconds(parseGoDuration(String(values['service-account-max-token-expiration'])));
  } catch (err) {
    throw new UsageError(`--service-account-max-token-expiration: ${(err as Error).message}`);
  }
  // kube-apiserver's floor: the one-hour-and-seven-seconds expiry of the tokens it mounts into Pods.
  if (maxExpirationMs !== 0 && maxExpirationMs < MIN_MAX_TOKEN_EXPIRATION_SECONDS * 1000) {
    throw new UsageError(
      `--service-account-max-token-expiration must be 0 (no limit) or at least ${MIN_MAX_TOKEN_EXPIRATION_SECONDS}s`,
    );
  }
  return {
    serviceAccountIssuers: issuers.length > 0 ? issuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER],
    serviceAccountMaxTokenExpirationSeconds: Math.floor(maxExpirationMs / 1000),
    serviceAccountSigningKeyFile: signingKeyFile,
    serviceAccountKeyFiles: keyFiles,
    serviceAccountJwksUri: jwksUri,
    apiAudiences: strings(values, 'api-audiences')
      .flatMap((a) => a.split(','))
      .map((a) => a.trim())
      .filter(Boolean),
  };
}

/**
 * Flags shared by `up` and `apiserver`, with kube-apiserver's names where it has the flag. One entry a flag:
 * parsing, `--help` and shell completion all read this table.
 */
export const SERVE_FLAGS = {
  'data-dir': {
    type: 'string',
    default: '.certkit',
    value: 'DIR',
    help: 'where state, certificates, the token and the kubeconfig live',
  },
  port: { type: 'string', default: '6443', value: 'N', help: 'port to listen on (0 picks a free one)' },
  host: { type: 'string', default: '127.0.0.1', value: 'ADDR', help: 'address to bind' },
  storage: {
    type: 'string',
    default: 'sqlite',
    value: 'sqlite|etcd',
    help: 'where objects are kept: SQLite in the data dir, or etcd',
  },
  'etcd-endpoints': { type: 'string', value: 'URL[,URL...]', help: 'etcd members, with --storage etcd' },
  'watch-cache': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'serve reads and watches from caches',
  },
  'storage-initialization-timeout': {
    type: 'string',
    default: '1m',
    value: 'DURATION',
    help: 'how long /readyz waits for the caches',
  },
  'event-ttl': {
    type: 'string',
    default: '1h',
    value: 'DURATION',
    help: 'how long Events are kept after their last write',
  },
  'request-timeout': {
    type: 'string',
    default: '1m',
    value: 'DURATION',
    help: 'how long a request that is not a watch may take before a 504',
  },
  'max-requests-inflight': {
    type: 'string',
    default: '400',
    value: 'N',
    help: 'read-only requests served at once, beyond them 429 (0: no limit)',
  },
  'max-mutating-requests-inflight': {
    type: 'string',
    default: '200',
    value: 'N',
    help: 'mutating requests served at once, beyond them 429 (0: no limit)',
  },
  'tls-cert-file': {
    type: 'string',
    value: 'FILE',
    help: 'serve this certificate (CA after it, as for kube-apiserver) instead of a generated one',
  },
  'tls-private-key-file': { type: 'string', value: 'FILE', help: 'the key of --tls-cert-file' },
  'client-ca-file': {
    type: 'string',
    value: 'FILE',
    help: 'client certificates from this CA authenticate (CN user, O groups)',
  },
  'token-auth-file': {
    type: 'string',
    value: 'FILE',
    help: 'bearer tokens, as kube-apiserver\'s: token,user,uid[,"group1,group2"]',
  },
  'service-account-issuer': {
    type: 'string',
    multiple: true,
    value: 'URL',
    help: `the iss of ServiceAccount tokens; the first signs, all are accepted (default ${DEFAULT_SERVICE_ACCOUNT_ISSUER})`,
  },
  'service-account-signing-key-file': {
    type: 'string',
    value: 'FILE',
    help: 'PEM private key that signs ServiceAccount tokens (default: sa.key generated in the data dir)',
  },
  'service-account-key-file': {
    type: 'string',
    multiple: true,
    value: 'FILE',
    help: 'PEM public or private keys that also verify ServiceAccount tokens (key rotation)',
  },
  'service-account-jwks-uri': {
    type: 'string',
    value: 'URL',
    help: 'jwks_uri in the issuer discovery document (default: this server)',
  },
  'service-account-max-token-expiration': {
    type: 'string',
    default: '0s',
    value: 'DURATION',
    help: 'longest token the TokenRequest API issues; longer requests are shortened (0s: no limit, else >= 3607s)',
  },
  'api-audiences': {
    type: 'string',
    multiple: true,
    value: 'AUD[,AUD...]',
    help: 'audiences a ServiceAccount token must name one of (default: the issuers)',
  },
  'service-cluster-ip-range': {
    type: 'string',
    default: '10.0.0.0/24',
    value: 'CIDR',
    help: "IPv4 range Services' cluster IPs are allocated from",
  },
  'service-node-port-range': {
    type: 'string',
    default: '30000-32767',
    value: 'FIRST-LAST',
    help: 'ports NodePort and LoadBalancer Services are allocated from',
  },
  'authorization-mode': {
    type: 'string',
    default: 'RBAC',
    value: 'RBAC|AlwaysAllow',
    help: 'how authenticated requests are authorised (system:masters may do anything under RBAC)',
  },
  'sqlite-synchronous': {
    type: 'string',
    default: 'full',
    value: 'full|normal',
    help: 'full fsyncs every commit before acknowledging it; normal is faster\nbut may lose the last writes on a power loss',
  },
} as const satisfies FlagTable;

/** Flags shared by `up` and `apiserver`. */
export function parseServeFlags(args: string[], extraFlags: FlagTable = {}): ServeFlags {
  const { values } = parseFlags({ ...SERVE_FLAGS, ...extraFlags }, args);
  const port = Number(values.port);
  // Digits only: Number() reads `--port=` as 0 (a random port, silently), and `0x1bb` or `1e3` as numbers.
  if (!/^\d+$/.test(String(values.port)) || port > 65535) {
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
  let requestTimeoutMs: number;
  try {
    requestTimeoutMs = toMilliseconds(parseGoDuration(String(values['request-timeout'])));
  } catch (err) {
    throw new UsageError(`--request-timeout: ${(err as Error).message}`);
  }
  if (requestTimeoutMs <= 0) throw new UsageError('--request-timeout must be positive');
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
  const authorizationMode = String(values['authorization-mode']);
  if (authorizationMode !== 'RBAC' && authorizationMode !== 'AlwaysAllow') {
    throw new UsageError(
      `--authorization-mode must be RBAC or AlwaysAllow, got ${JSON.stringify(authorizationMode)}`,
    );
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
    requestTimeoutMs,
    maxRequestsInflight,
    maxMutatingRequestsInflight,
    tlsCertFile,
    tlsPrivateKeyFile,
    clientCaFile: file('client-ca-file'),
    tokenAuthFile: file('token-auth-file'),
    ...serviceAccountFlags(values),
    serviceClusterIpRange: String(values['service-cluster-ip-range']),
    serviceNodePortRange: String(values['service-node-port-range']),
    authorizationMode,
    sqliteSynchronous: synchronous === 'full' ? 'FULL' : 'NORMAL',
    extra: Object.fromEntries(Object.keys(extraFlags).map((k) => [k, values[k]])),
  };
}
