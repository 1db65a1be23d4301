import { parseListenAddress, parseNameserver } from '@certkit/certificates/acme/http01/address';
import { parsePort } from '@certkit/certificates/api/validation/nameserver';
import type { CertificateControllerOptions } from '@certkit/certificates/controller';
import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import { parseRecursiveNameservers } from '@certkit/certificates/acme/dns01/solver';
import {
  enabledControllers,
  UnknownControllerError,
} from '@certkit/certificates/controllers/enabled-controllers';
import {
  featureEnabled,
  parseFeatureGates,
  type FeatureGates,
  type FeatureGateTable,
} from '@certkit/certificates/controllers/feature-gates';
import { UsageError } from '../args.ts';

export { CONTROLLER_FLAG_OPTIONS } from './controller-flag-table.ts';

export function bool(flag: string, value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`--${flag} must be true or false, got ${JSON.stringify(value)}`);
}

function int(flag: string, value: string, min: number): number {
  const n = Number(value);
  // Digits only: Number() reads an empty value as 0 and `0x10` or `1e3` as numbers, which pflag refuses.
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${flag} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return n;
}

export interface ControllerFlags {
  qps: number;
  burst: number;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionTimings: LeaderElectionTimings;
  options: CertificateControllerOptions;
}

/** A flag's value through a parser of @certkit/certificates, its error as one usage line naming the flag. */
function parsed<T>(flag: string, value: string, parse: (value: string) => T): T {
  try {
    return parse(value);
  } catch (err) {
    throw new UsageError(`--${flag}: ${(err as Error).message}`);
  }
}

/** The three --acme-http01-* flags, as controller options (none when absent). */
function http01Options(values: Record<string, string | boolean | undefined>) {
  const listen = values['acme-http01-listen-address'] as string | undefined;
  const nameservers = values['acme-http01-solver-nameservers'] as string | undefined;
  const port = values['acme-http01-self-check-port'] as string | undefined;
  return {
    ...(listen === undefined
      ? {}
      : {
          acmeHTTP01ListenAddress: (parsed('acme-http01-listen-address', listen, parseListenAddress), listen),
        }),
    ...(nameservers === undefined
      ? {}
      : {
          // cert-manager's flag is a comma-separated list of host:port.
          acmeHTTP01SolverNameservers: nameservers
            .split(',')
            .map((ns) => parsed('acme-http01-solver-nameservers', ns, parseNameserver)),
        }),
    ...(port === undefined
      ? {}
      : { acmeHTTP01SelfCheckPort: parsed('acme-http01-self-check-port', port, parsePort) }),
  };
}

/** The ACME Challenge flags: how many at once, and the DNS-01 self-check's servers and retry period. */
function challengeOptions(values: Record<string, string | boolean | undefined>) {
  const nameservers = values['dns01-recursive-nameservers'] as string | undefined;
  const list = nameservers
    ?.split(',')
    .map((ns) => ns.trim())
    .filter(Boolean);
  if (list) parsed('dns01-recursive-nameservers', nameservers!, () => parseRecursiveNameservers(list));
  const period = String(values['dns01-check-retry-period']);
  const periodMs = parsed('dns01-check-retry-period', period, (v) => toMilliseconds(parseGoDuration(v)));
  if (periodMs <= 0) throw new UsageError(`--dns01-check-retry-period must be positive, got "${period}"`);
  const wait = String(values['dns01-propagation-wait']);
  const waitMs = parsed('dns01-propagation-wait', wait, (v) => toMilliseconds(parseGoDuration(v)));
  if (waitMs < 0) throw new UsageError(`--dns01-propagation-wait must not be negative, got "${wait}"`);
  return {
    maxConcurrentChallenges: int('max-concurrent-challenges', String(values['max-concurrent-challenges']), 1),
    ...(list ? { dns01RecursiveNameservers: list } : {}),
    dns01RecursiveNameserversOnly: bool(
      'dns01-recursive-nameservers-only',
      String(values['dns01-recursive-nameservers-only']),
    ),
    dns01CheckRetryPeriodMs: periodMs,
    dns01PropagationWaitMs: waitMs,
  };
}

export interface LeaderElectionTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** The Lease timings, checked as client-go's NewLeaderElector checks them, but as usage errors. */
export function leaderElectionTimings(
  values: Record<string, string | boolean | undefined>,
): LeaderElectionTimings {
  const duration = (flag: string) => {
    const text = String(values[flag]);
    const ms = parsed(flag, text, (v) => toMilliseconds(parseGoDuration(v)));
    if (ms <= 0) throw new UsageError(`--${flag} must be positive, got "${text}"`);
    return ms;
  };
  const leaseDurationMs = duration('leader-election-lease-duration');
  const renewDeadlineMs = duration('leader-election-renew-deadline');
  const retryPeriodMs = duration('leader-election-retry-period');
  if (leaseDurationMs < 1000) throw new UsageError('--leader-election-lease-duration must be at least 1s');
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new UsageError(
      '--leader-election-lease-duration must be greater than --leader-election-renew-deadline',
    );
  }
  // client-go's JitterFactor: a retry may come up to 1.2 periods later.
  if (renewDeadlineMs <= 1.2 * retryPeriodMs) {
    throw new UsageError(
      '--leader-election-renew-deadline must be greater than 1.2 × --leader-election-retry-period',
    );
  }
  return { leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/** How long a Certificate waits after a failed request: the first wait, doubled per failure up to the most. */
function backoffOptions(values: Record<string, string | boolean | undefined>) {
  const duration = (flag: string) => {
    const text = String(values[flag]);
    const ms = parsed(flag, text, (v) => toMilliseconds(parseGoDuration(v)));
    if (ms <= 0) throw new UsageError(`--${flag} must be positive, got "${text}"`);
    return ms;
  };
  const min = duration('certificate-request-minimum-backoff-duration');
  const max = duration('certificate-request-maximum-backoff-duration');
  if (max < min) {
    throw new UsageError(
      '--certificate-request-maximum-backoff-duration must not be less than --certificate-request-minimum-backoff-duration',
    );
  }
  return { certificateRequestMinimumBackoffMs: min, certificateRequestMaximumBackoffMs: max };
}

/** A pflag StringSlice: comma-separated, blanks dropped. */
function list(value: string | boolean | undefined): string[] {
  return String(value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** The ingress-shim's and gateway-shim's flags, as cert-manager's IngressShimOptions. */
function shimOptions(values: Record<string, string | boolean | undefined>) {
  return {
    autoCertificateAnnotations: list(values['auto-certificate-annotations']),
    extraCertificateAnnotations: list(values['extra-certificate-annotations']),
    defaultIssuerName: String(values['default-issuer-name']),
    defaultIssuerKind: String(values['default-issuer-kind']),
    defaultIssuerGroup: String(values['default-issuer-group']),
    gatewayAPIExtraProtocols: list(values['gateway-api-extra-protocols']),
  };
}

/** `--feature-gates`, over a component's gates (the controller's by default); errors as one usage line. */
export function featureGates(value: string, known?: FeatureGateTable): FeatureGates {
  return parsed('feature-gates', value, (v) => parseFeatureGates(v, known));
}

/**
 * cert-manager's --controllers: a comma-separated list of names, `*` and `-name`; the Gateway API flags and
 * feature gates add the gateway-shim, listenerset and CertificateSigningRequest controllers as cert-manager's do.
 */
function controllersOption(
  values: Record<string, string | boolean | undefined>,
  gates: FeatureGates,
): ReadonlySet<string> {
  const entries = list(values.controllers);
  const gatewayAPI =
    featureEnabled(gates, 'ExperimentalGatewayAPISupport') &&
    bool('enable-gateway-api', String(values['enable-gateway-api']));
  const listenerSets =
    featureEnabled(gates, 'ListenerSets') &&
    bool('enable-gateway-api-listenerset', String(values['enable-gateway-api-listenerset']));
  try {
    return enabledControllers(entries, {
      gatewayAPI,
      listenerSets,
      certificateSigningRequestControllers: featureEnabled(
        gates,
        'ExperimentalCertificateSigningRequestControllers',
      ),
    });
  } catch (err) {
    if (err instanceof UnknownControllerError) throw new UsageError(`--controllers: ${err.message}`);
    throw err;
  }
}

export function controllerFlags(values: Record<string, string | boolean | undefined>): ControllerFlags {
  const policy = String(values['default-secret-cleanup-policy']);
  if (policy !== 'Never' && policy !== 'OnDelete') {
    throw new UsageError(
      `--default-secret-cleanup-policy must be Never or OnDelete, got ${JSON.stringify(policy)}`,
    );
  }
  const ownerRef = values['enable-certificate-owner-ref'];
  const gates = featureGates(String(values['feature-gates'] ?? ''));
  const qps = Number(values['kube-api-qps']);
  if (!Number.isFinite(qps) || (qps <= 0 && qps !== -1)) {
    throw new UsageError(`--kube-api-qps must be a positive number, or -1 to turn client-side limits off`);
  }
  return {
    qps,
    burst: int('kube-api-burst', String(values['kube-api-burst']), 1),
    leaderElect: bool('leader-elect', String(values['leader-elect'])),
    leaderElectionNamespace: String(values['leader-election-namespace']),
    leaderElectionTimings: leaderElectionTimings(values),
    options: {
      metricsBindAddress: String(values['metrics-bind-address']),
      clusterResourceNamespace: String(values['cluster-resource-namespace']),
      defaultSecretCleanupPolicy: policy,
      // Deprecated, and when given it wins over spec.cleanupPolicy and the default (docs/adr/0011).
      enableCertificateOwnerRef:
        ownerRef === undefined ? undefined : bool('enable-certificate-owner-ref', String(ownerRef)),
      controllers: controllersOption(values, gates),
      shims: shimOptions(values),
      // cert-manager's gate of the same name turns it off too, so that a Deployment's --feature-gates carries over.
      secretsFilteredCaching:
        bool('secrets-filtered-caching', String(values['secrets-filtered-caching'])) &&
        featureEnabled(gates, 'SecretsFilteredCaching'),
      maxConcurrentReconciles: int('concurrent-workers', String(values['concurrent-workers']), 1),
      ...http01Options(values),
      ...challengeOptions(values),
      ...backoffOptions(values),
    },
  };
}
