import type { FlagTable } from '../flags.ts';

/**
 * The controller's flags, with cert-manager's names and defaults: a table of data only, so that `--help` and
 * the completion scripts read it without loading the controller; controller-flags.ts turns the values into
 * settings.
 */
export const CONTROLLER_FLAG_OPTIONS = {
  'kube-api-qps': {
    type: 'string',
    default: '20',
    value: 'N',
    help: 'requests per second to the API server (-1: no client-side limit)',
  },
  'kube-api-burst': {
    type: 'string',
    default: '50',
    value: 'N',
    help: 'requests allowed above the QPS in a burst',
  },
  'leader-elect': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'run only while holding the leader Lease',
  },
  'leader-election-namespace': {
    type: 'string',
    default: 'kube-system',
    value: 'NS',
    help: 'namespace of the leader Lease',
  },
  // controller-runtime's timings (cert-manager's own defaults are 60s, 40s and 15s).
  'leader-election-lease-duration': {
    type: 'string',
    default: '15s',
    value: 'DURATION',
    help: 'how long others wait after the last renewal before taking the Lease',
  },
  'leader-election-renew-deadline': {
    type: 'string',
    default: '10s',
    value: 'DURATION',
    help: 'how long the leader keeps retrying a failed renewal before it steps down (exits)',
  },
  'leader-election-retry-period': {
    type: 'string',
    default: '2s',
    value: 'DURATION',
    help: 'wait between tries to acquire or renew the Lease',
  },
  'metrics-bind-address': {
    type: 'string',
    default: '127.0.0.1:9402',
    value: 'ADDR',
    help: 'where /metrics is served (0 disables)',
  },
  'cluster-resource-namespace': {
    type: 'string',
    default: 'kube-system',
    value: 'NS',
    help: 'namespace of the Secrets ClusterIssuers refer to',
  },
  'default-secret-cleanup-policy': {
    type: 'string',
    default: 'Never',
    value: 'Never|OnDelete',
    help: 'delete a Certificate’s Secret with it (OnDelete) or not',
  },
  'enable-certificate-owner-ref': {
    type: 'string',
    value: 'true|false',
    help: 'deprecated; when given, wins over spec.cleanupPolicy and the default policy',
  },
  controllers: {
    type: 'string',
    default: '*',
    value: 'NAME[,...]',
    help: "controllers to run, as cert-manager's: * the default set, NAME one, -NAME not that one (*,-certificaterequests-approver)",
  },
  'secrets-filtered-caching': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'cache in full only the Secrets labelled for the controller',
  },
  'concurrent-workers': {
    type: 'string',
    default: '5',
    value: 'N',
    help: 'reconciles at once per controller',
  },
  // The embedded HTTP-01 solver: off unless a listen address is given.
  'acme-http01-listen-address': {
    type: 'string',
    value: 'ADDR',
    help: 'answer ACME HTTP-01 challenges from the controller itself on ADDR\n(:80, 127.0.0.1:8089, [::]:80); off unless given',
  },
  'acme-http01-solver-nameservers': {
    type: 'string',
    value: 'IP:PORT[,...]',
    help: 'resolve names for the HTTP-01 self-check with these servers only',
  },
  'acme-http01-self-check-port': {
    type: 'string',
    value: 'N',
    help: 'port of the HTTP-01 self-check’s first request (80)',
  },
  'max-concurrent-challenges': {
    type: 'string',
    default: '60',
    value: 'N',
    help: 'ACME Challenges processed at once',
  },
  // DNS-01 self-check servers: the system's resolvers unless given.
  'dns01-recursive-nameservers': {
    type: 'string',
    value: 'HOST:PORT|URL[,...]',
    help: 'ask these servers in the DNS-01 self-check (default: the system’s)',
  },
  'dns01-recursive-nameservers-only': {
    type: 'string',
    default: 'false',
    value: 'true|false',
    help: 'ask only those servers, never the zone’s authoritative ones',
  },
  'dns01-check-retry-period': {
    type: 'string',
    default: '10s',
    value: 'DURATION',
    help: 'wait between ACME self-checks that have not passed yet',
  },
  // cert-manager's fixed 60 s after a passed DNS-01 check; a flag so that a test against a single local DNS
  // server (where every resolver sees the record at once) need not wait a minute per Challenge.
  'dns01-propagation-wait': {
    type: 'string',
    default: '60s',
    value: 'DURATION',
    help: 'wait after a DNS-01 self-check passed, before accepting the challenge',
  },
  'certificate-request-minimum-backoff-duration': {
    type: 'string',
    default: '1h',
    value: 'DURATION',
    help: 'first wait before a failed issuance is retried; it doubles per failure',
  },
  'certificate-request-maximum-backoff-duration': {
    type: 'string',
    default: '32h',
    value: 'DURATION',
    help: 'longest wait before a failed issuance is retried',
  },
  // cert-manager's ingress-shim and gateway-shim (Certificates for annotated Ingresses and Gateways).
  'auto-certificate-annotations': {
    type: 'string',
    default: 'kubernetes.io/tls-acme',
    value: 'KEY[,...]',
    help: 'Ingress annotations that, set to true, ask for a Certificate with the default issuer',
  },
  'extra-certificate-annotations': {
    type: 'string',
    default: '',
    value: 'KEY[,...]',
    help: 'annotations copied from an Ingress, Gateway or ListenerSet to its Certificates',
  },
  'default-issuer-name': {
    type: 'string',
    default: '',
    value: 'NAME',
    help: 'issuer of an Ingress’s Certificates when its annotations name none',
  },
  'default-issuer-kind': {
    type: 'string',
    default: 'Issuer',
    value: 'KIND',
    help: 'kind of that issuer',
  },
  'default-issuer-group': {
    type: 'string',
    default: 'cert-manager.io',
    value: 'GROUP',
    help: 'API group of that issuer',
  },
  'enable-gateway-api': {
    type: 'string',
    default: 'false',
    value: 'true|false',
    help: 'run the gateway-shim: Certificates for annotated Gateways (needs the Gateway API CRDs)',
  },
  'enable-gateway-api-listenerset': {
    type: 'string',
    default: 'false',
    value: 'true|false',
    help: 'run the listenerset controller: Certificates for ListenerSets (also needs --enable-gateway-api and --feature-gates=ListenerSets=true)',
  },
  'gateway-api-extra-protocols': {
    type: 'string',
    default: '',
    value: 'PROTOCOL[,...]',
    help: 'Gateway listener protocols besides HTTPS and TLS that get Certificates',
  },
  'feature-gates': {
    type: 'string',
    default: '',
    value: 'NAME=BOOL[,...]',
    help: 'cert-manager’s controller feature gates: ExperimentalCertificateSigningRequestControllers=true runs the CertificateSigningRequest signers, ListenerSets=true (with --enable-gateway-api-listenerset) the listenerset controller, SecretsFilteredCaching=false caches every Secret; the rest are accepted, unknown names refused',
  },
} as const satisfies FlagTable;

/** The controller's flags that `up` takes for its in-process controller: not leader election nor client limits. */
export const UP_CONTROLLER_FLAGS: FlagTable = {
  ...Object.fromEntries(
    Object.entries(CONTROLLER_FLAG_OPTIONS).filter(
      ([k]) => !k.startsWith('leader-elect') && !k.startsWith('kube-api'),
    ),
  ),
  // One machine, possibly several `up`s: no fixed port unless asked for (the API server has /metrics too).
  'metrics-bind-address': { ...CONTROLLER_FLAG_OPTIONS['metrics-bind-address'], default: '0' },
};

/**
 * kubectl's -n and -A as they read for `certkit controller`, cert-manager's --namespace: without -n it watches
 * every namespace, not the kubeconfig context's (the cluster flags' help says that of the other commands).
 */
export const CONTROLLER_SCOPE_FLAGS = {
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NS',
    help: 'watch only this namespace (default: every namespace)',
  },
  'all-namespaces': {
    type: 'boolean',
    short: 'A',
    default: false,
    help: 'watch every namespace (what it does without -n)',
  },
} as const satisfies FlagTable;
