import type { FlagTable } from '../flags.ts';

/**
 * The flags of the commands that talk to a cluster, as data only (no client, no controller), so that `--help`
 * and the completion scripts read them without loading what the commands run. One entry a flag.
 */

/** kubectl's flags for reaching a cluster, which every command that talks to one takes. */
export const CLUSTER_FLAGS = {
  kubeconfig: {
    type: 'string',
    value: 'FILE',
    help: 'kubeconfig file (default: $KUBECONFIG, else in-cluster, else ~/.kube/config)',
  },
  context: { type: 'string', value: 'NAME', help: 'the kubeconfig context to use' },
  namespace: { type: 'string', short: 'n', value: 'NS', help: 'namespace (default: the context’s)' },
  'all-namespaces': { type: 'boolean', short: 'A', default: false, help: 'every namespace' },
} as const satisfies FlagTable;

/** `certkit renew`'s own flags, as cmctl's, plus client-side rate limits. */
export const RENEW_FLAGS = {
  all: {
    type: 'boolean',
    default: false,
    help: 'renew every Certificate in the namespace (or all, with -A)',
  },
  selector: {
    type: 'string',
    short: 'l',
    value: 'SELECTOR',
    help: 'renew the Certificates with these labels',
  },
  // A renew of thousands of Certificates at client-go's default 5 requests/s would take many minutes.
  'kube-api-qps': {
    type: 'string',
    default: '50',
    value: 'N',
    help: 'requests per second to the API server (-1: no client-side limit)',
  },
  'kube-api-burst': {
    type: 'string',
    default: '100',
    value: 'N',
    help: 'requests allowed above the QPS in a burst',
  },
} as const satisfies FlagTable;

/** `certkit status`'s own flags. */
export const STATUS_FLAGS = {
  output: {
    type: 'string',
    short: 'o',
    value: 'json|yaml|wide|name',
    help: 'print the objects as JSON or YAML, the table with more columns, or kind/name lines',
  },
} as const satisfies FlagTable;

/** `certkit version`'s flags: cmctl's `-o`, without a server to ask (certkit's server is this same build). */
export const VERSION_FLAGS = {
  output: { type: 'string', short: 'o', value: 'json|yaml', help: 'print the version as JSON or YAML' },
  // cmctl's: scripts written for it pass them. certkit never asks a cluster for its version, so --client
  // changes nothing.
  client: { type: 'boolean', help: 'the client version only (certkit never asks the cluster; as cmctl)' },
  short: { type: 'boolean', help: 'print just the version number, as cmctl: Client Version: vX.Y.Z' },
} as const satisfies FlagTable;

/** `certkit secrets audit`'s own flags. */
export const SECRETS_AUDIT_FLAGS = {
  'cluster-resource-namespace': {
    type: 'string',
    default: 'kube-system',
    value: 'NS',
    help: 'namespace of the Secrets ClusterIssuers refer to',
  },
} as const satisfies FlagTable;
