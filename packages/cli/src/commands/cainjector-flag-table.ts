import type { FlagTable } from '../flags.ts';

/**
 * `certkit cainjector`'s flags, with cert-manager's cainjector's names and defaults (its leader election
 * timings too: 60s, 40s, 15s): data only, so that `--help` and the completion scripts read it without loading
 * the cainjector; cainjector-flags.ts turns the values into settings.
 */
export const CAINJECTOR_FLAG_OPTIONS = {
  'ignore-namespaces': {
    type: 'string',
    default: '',
    value: 'NS[,...]',
    help: 'never read CA sources (Secrets, Certificates) in these namespaces',
  },
  'leader-elect': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'inject only while holding the Lease cert-manager-cainjector-leader-election',
  },
  'leader-election-namespace': {
    type: 'string',
    default: 'kube-system',
    value: 'NS',
    help: 'namespace of the leader Lease',
  },
  'leader-election-lease-duration': {
    type: 'string',
    default: '60s',
    value: 'DURATION',
    help: 'how long others wait after the last renewal before taking the Lease',
  },
  'leader-election-renew-deadline': {
    type: 'string',
    default: '40s',
    value: 'DURATION',
    help: 'how long the leader keeps retrying a failed renewal before it steps down (exits)',
  },
  'leader-election-retry-period': {
    type: 'string',
    default: '15s',
    value: 'DURATION',
    help: 'wait between tries to acquire or renew the Lease',
  },
  'enable-certificates-data-source': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'honour cert-manager.io/inject-ca-from (the CA of a Certificate’s Secret)',
  },
  'enable-validatingwebhookconfigurations-injectable': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'inject into ValidatingWebhookConfigurations',
  },
  'enable-mutatingwebhookconfigurations-injectable': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'inject into MutatingWebhookConfigurations',
  },
  'enable-customresourcedefinitions-injectable': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'inject into the conversion webhooks of CustomResourceDefinitions',
  },
  'enable-apiservices-injectable': {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'inject into APIServices',
  },
  'feature-gates': {
    type: 'string',
    default: '',
    value: 'GATE=BOOL[,...]',
    help: 'CAInjectorMerging (default true: a new CA joins the bundle); ServerSideApply (always on)',
  },
  'metrics-listen-address': {
    type: 'string',
    default: '127.0.0.1:9402',
    value: 'ADDR',
    help: 'where /metrics, /healthz and /readyz are served (0 disables)',
  },
} as const satisfies FlagTable;

/**
 * kubectl's -n as `certkit cainjector` reads it, cainjector's --namespace: the namespace of the sources it may
 * read and of the Secrets it watches. Targets are cluster-scoped and always watched.
 */
export const CAINJECTOR_SCOPE_FLAGS = {
  namespace: {
    type: 'string',
    short: 'n',
    value: 'NS',
    help: 'read CA sources only in this namespace (default: every namespace)',
  },
  'all-namespaces': {
    type: 'boolean',
    short: 'A',
    default: false,
    help: 'read CA sources in every namespace (what it does without -n)',
  },
} as const satisfies FlagTable;

/** `certkit up`'s flag for its in-process cainjector. */
export const UP_CAINJECTOR_FLAGS = {
  cainjector: {
    type: 'string',
    default: 'true',
    value: 'true|false',
    help: 'run the cainjector in the process too (caBundles of annotated webhooks, CRDs, APIServices)',
  },
} as const satisfies FlagTable;
