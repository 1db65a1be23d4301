/**
 * cert-manager's `--controllers` flag: which controllers run. Users carry it over from their cert-manager
 * Deployment, most often as `--controllers=*,-certificaterequests-approver` (the chart's `disableAutoApproval`,
 * for approver-policy or another approval controller), so the names and the rules are cert-manager's
 * (`EnabledControllers` and the configuration's validation):
 *
 * - `*` is the set enabled by default; a bare name enables that controller; `-name` disables it;
 * - only `-name` entries imply `*`;
 * - disables are applied last, whatever the order;
 * - a name that is not one of cert-manager's controllers is refused.
 *
 * Names of cert-manager controllers certkit does not have (the Vault and Venafi signers of both
 * kinds) are accepted, so that an existing flag value works unchanged, and enable nothing here. The
 * CertificateSigningRequest signers are off by default; the ExperimentalCertificateSigningRequestControllers
 * feature gate enables all of them, as in cert-manager.
 */

/** Every controller cert-manager knows (its `AllControllers`). */
export const ALL_CONTROLLERS: readonly string[] = [
  'issuers',
  'clusterissuers',
  'certificates-metrics',
  'ingress-shim',
  'gateway-shim',
  'orders',
  'challenges',
  'certificaterequests-issuer-acme',
  'certificaterequests-approver',
  'certificaterequests-issuer-ca',
  'certificaterequests-issuer-selfsigned',
  'certificaterequests-issuer-vault',
  'certificaterequests-issuer-venafi',
  'certificates-trigger',
  'certificates-issuing',
  'certificates-key-manager',
  'certificates-request-manager',
  'certificates-readiness',
  'certificates-revision-manager',
  'certificatesigningrequests-issuer-acme',
  'certificatesigningrequests-issuer-ca',
  'certificatesigningrequests-issuer-selfsigned',
  'certificatesigningrequests-issuer-venafi',
  'certificatesigningrequests-issuer-vault',
  'listenerset',
];

/** Off unless named: the Gateway API shims and the experimental CertificateSigningRequest signers. */
const OFF_BY_DEFAULT = new Set([
  'gateway-shim',
  'listenerset',
  'certificatesigningrequests-issuer-acme',
  'certificatesigningrequests-issuer-ca',
  'certificatesigningrequests-issuer-selfsigned',
  'certificatesigningrequests-issuer-venafi',
  'certificatesigningrequests-issuer-vault',
]);

export const DEFAULT_ENABLED_CONTROLLERS: readonly string[] = ALL_CONTROLLERS.filter(
  (name) => !OFF_BY_DEFAULT.has(name),
);

const KNOWN = new Set(ALL_CONTROLLERS);

/** A `--controllers` value naming a controller cert-manager does not have. */
export class UnknownControllerError extends Error {
  constructor(name: string) {
    super(`"${name}" is not in the list of known controllers`);
    this.name = 'UnknownControllerError';
  }
}

/**
 * What else decides the set, as in cert-manager: `--enable-gateway-api` (with the ExperimentalGatewayAPISupport
 * gate, on by default) adds `gateway-shim`; `--enable-gateway-api-listenerset` with the ListenerSets gate and the
 * Gateway API enabled adds `listenerset`. The callers say whether those hold (feature-gates.ts).
 */
export interface EnabledControllersOptions {
  gatewayAPI?: boolean;
  /** The ExperimentalCertificateSigningRequestControllers feature gate: adds every CSR signer. */
  certificateSigningRequestControllers?: boolean;
  /** `--enable-gateway-api-listenerset` with the ListenerSets gate: adds `listenerset` (with the Gateway API). */
  listenerSets?: boolean;
}

/** The CertificateSigningRequest signers, which the ExperimentalCertificateSigningRequestControllers gate adds. */
export const CERTIFICATE_SIGNING_REQUEST_CONTROLLERS: readonly string[] = ALL_CONTROLLERS.filter((name) =>
  name.startsWith('certificatesigningrequests-'),
);

/**
 * The controllers a `--controllers` list enables (its comma-separated entries, as pflag's StringSlice splits
 * them). Throws UnknownControllerError for a name cert-manager does not know.
 */
export function enabledControllers(
  entries: readonly string[],
  options: EnabledControllersOptions = {},
): Set<string> {
  const enabled = new Set<string>();
  const disabled: string[] = [];
  for (const entry of entries) {
    const name = entry.startsWith('-') ? entry.slice(1) : entry;
    if (entry !== '*' && !KNOWN.has(name)) throw new UnknownControllerError(name);
    if (entry === '*') for (const each of DEFAULT_ENABLED_CONTROLLERS) enabled.add(each);
    else if (entry.startsWith('-')) disabled.push(name);
    else enabled.add(name);
  }
  if (disabled.length > 0 && enabled.size === 0) {
    for (const each of DEFAULT_ENABLED_CONTROLLERS) enabled.add(each);
  }
  // Added after the list, before the disables: `--enable-gateway-api --controllers=-gateway-shim` runs none.
  if (options.gatewayAPI) enabled.add('gateway-shim');
  if (options.gatewayAPI && options.listenerSets) enabled.add('listenerset');
  if (options.certificateSigningRequestControllers)
    for (const name of CERTIFICATE_SIGNING_REQUEST_CONTROLLERS) enabled.add(name);
  for (const name of disabled) enabled.delete(name);
  return enabled;
}
