import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type Client,
  defaultLogger,
  type IndexFunc,
  keyFor,
  type Logger,
  SharedInformerFactory,
} from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { ACME_API_VERSION, AcmeKinds } from '../api/acme-constants.ts';
import { Annotations, GROUP, Kinds } from '../api/constants.ts';
import type {
  Certificate,
  CertificateRequest,
  Challenge,
  ClusterIssuer,
  Issuer,
  Order,
} from '../api/types.ts';
import { DNS01Solver } from '../acme/dns01/solver.ts';
import { secretReaderFrom } from '../acme/dns01/provider.ts';
import { AcmeAccountRegistry } from '../acme/accounts/registry.ts';
import type { AcmeClientMetrics } from '../acme/client/metrics.ts';
import { createSecretCache, type SecretGetterMetrics } from '../secrets/split-cache.ts';
import { ACME_SECRET_INDEX, acmeSecretNames } from './issuers/acme-secrets.ts';
import { leanCertificateRequest, leanObject } from './cache-transforms.ts';
import { type ControllerContext, type ControllerOptions, DEFAULT_OPTIONS } from './context.ts';
import { newEventRecorders } from './events.ts';
import {
  certificateRequestsRef,
  certificatesRef,
  challengesRef,
  clusterIssuersRef,
  issuersRef,
  ordersRef,
} from './refs.ts';

/**
 * Builds the one ControllerContext of a process: one informer factory, an informer per cert-manager.io kind
 * (with the indices controllers map Secret and CertificateRequest events through), the split Secret cache,
 * clients and an event recorder. Nothing starts until startContext.
 */

/** Certificates by the Secret they write: `namespace/spec.secretName`. */
export const CERTIFICATE_SECRET_INDEX = 'secretName';
/** CertificateRequests by the Certificate that controls them: `namespace/name`. */
export const REQUEST_CERTIFICATE_INDEX = 'certificate';
/** CertificateRequests by the private key Secret they name (SelfSigned): `namespace/<annotation>`. */
export const REQUEST_KEY_SECRET_INDEX = 'privateKeySecret';
/** Challenges by the Order that controls them: `namespace/name`. */
export const CHALLENGE_ORDER_INDEX = 'order';
/** Issuers and ClusterIssuers by their CA Secret: `namespace/spec.ca.secretName`. */
export const ISSUER_CA_SECRET_INDEX = 'caSecret';

export interface CreateContextOptions extends Partial<ControllerOptions> {
  log?: Logger;
  now?: () => Date;
  secretMetrics?: SecretGetterMetrics;
  /** Where the ACME clients report their requests (cert-manager's `certmanager_http_acme_client_*`). */
  acmeClientMetrics?: AcmeClientMetrics;
}

export function createControllerContext(
  client: Client,
  options: CreateContextOptions = {},
): ControllerContext {
  const log = options.log ?? defaultLogger;
  const resolved = resolveOptions(options);
  const namespace = resolved.namespace;
  // What enters the caches is stripped first (cache-transforms.ts): the controller's memory should follow
  // what it decides with, per managed Certificate.
  const factory = new SharedInformerFactory({ client, log, defaultTransform: leanObject });

  const certificates = factory.informerFor<Certificate>(certificatesRef, {
    namespace,
    indexers: { [CERTIFICATE_SECRET_INDEX]: certificateSecretIndex },
  });
  const certificateRequests = factory.informerFor<CertificateRequest>(certificateRequestsRef, {
    namespace,
    transform: leanCertificateRequest,
    indexers: {
      [REQUEST_CERTIFICATE_INDEX]: requestCertificateIndex,
      [REQUEST_KEY_SECRET_INDEX]: requestKeySecretIndex,
    },
  });
  const issuers = factory.informerFor<Issuer>(issuersRef, {
    namespace,
    indexers: { [ISSUER_CA_SECRET_INDEX]: issuerCaSecretIndex, [ACME_SECRET_INDEX]: issuerAcmeSecretIndex },
  });
  // Cluster-scoped, so never namespace-limited: cert-manager watches ClusterIssuers under --namespace too.
  const clusterIssuers = factory.informerFor<ClusterIssuer>(clusterIssuersRef, {
    indexers: {
      [ISSUER_CA_SECRET_INDEX]: clusterIssuerCaSecretIndex(resolved.clusterResourceNamespace),
      [ACME_SECRET_INDEX]: clusterIssuerAcmeSecretIndex(resolved.clusterResourceNamespace),
    },
  });

  const orders = factory.informerFor<Order>(ordersRef, { namespace });
  const challenges = factory.informerFor<Challenge>(challengesRef, {
    namespace,
    indexers: { [CHALLENGE_ORDER_INDEX]: challengeOrderIndex },
  });

  const secrets = createSecretCache(factory, client, {
    namespace,
    filtered: resolved.secretsFilteredCaching,
    metrics: options.secretMetrics,
    log,
  });

  return {
    client,
    factory,
    certificates,
    certificateRequests,
    issuers,
    clusterIssuers,
    orders,
    challenges,
    orderClient: client.resource<Order>(ordersRef),
    challengeClient: client.resource<Challenge>(challengesRef),
    certificateClient: client.resource<Certificate>(certificatesRef),
    certificateRequestClient: client.resource<CertificateRequest>(certificateRequestsRef),
    issuerClient: client.resource<Issuer>(issuersRef),
    clusterIssuerClient: client.resource<ClusterIssuer>(clusterIssuersRef),
    secretClient: client.resource<Secret & KubeObject>(builtins.secrets),
    secrets,
    recorder: newEventRecorders(client, log),
    acmeAccounts: new AcmeAccountRegistry({ metrics: options.acmeClientMetrics }),
    options: resolved,
    log,
    now: options.now ?? (() => new Date()),
    dns01Solver: new DNS01Solver({
      secrets: secretReaderFrom(secrets),
      recursiveNameservers: resolved.dns01RecursiveNameservers,
      recursiveOnly: resolved.dns01RecursiveNameserversOnly,
    }),
  };
}

/**
 * Starts every informer (the Secret caches included) and resolves once all have synced. Resolves quietly
 * if the signal aborts first (shutdown during start); rejects if an informer stopped without syncing.
 */
export async function startContext(ctx: ControllerContext, signal: AbortSignal): Promise<void> {
  ctx.factory.start(signal);
  const synced = await ctx.factory.waitForCacheSync(signal);
  if (signal.aborted) return;
  if (!synced || !ctx.secrets.hasSynced()) {
    const pending = ctx.factory
      .informers()
      .filter((i) => !i.hasSynced())
      .map((i) => i.name);
    throw new Error(`informer caches did not sync: ${pending.join(', ') || 'secrets'}`);
  }
}

/**
 * Defaults for whatever was not given. Only ControllerOptions' own fields are taken (callers pass wider
 * objects), and an explicit undefined does not erase a default.
 */
function resolveOptions(options: Partial<ControllerOptions>): ControllerOptions {
  const resolved: ControllerOptions = { ...DEFAULT_OPTIONS };
  if (options.namespace) resolved.namespace = options.namespace;
  if (options.clusterResourceNamespace) resolved.clusterResourceNamespace = options.clusterResourceNamespace;
  if (options.defaultSecretCleanupPolicy)
    resolved.defaultSecretCleanupPolicy = options.defaultSecretCleanupPolicy;
  if (options.enableCertificateOwnerRef !== undefined) {
    resolved.enableCertificateOwnerRef = options.enableCertificateOwnerRef;
  }
  if (options.secretsFilteredCaching !== undefined)
    resolved.secretsFilteredCaching = options.secretsFilteredCaching;
  if (options.maxConcurrentReconciles !== undefined) {
    resolved.maxConcurrentReconciles = options.maxConcurrentReconciles;
  }
  for (const key of [
    'acmeHTTP01ListenAddress',
    'acmeHTTP01SolverNameservers',
    'acmeHTTP01SelfCheckPort',
    'maxConcurrentChallenges',
    'dns01RecursiveNameservers',
    'dns01RecursiveNameserversOnly',
    'dns01CheckRetryPeriodMs',
    'dns01PropagationWaitMs',
    'certificateRequestMinimumBackoffMs',
    'certificateRequestMaximumBackoffMs',
  ] as const) {
    if (options[key] !== undefined) (resolved as unknown as Record<string, unknown>)[key] = options[key];
  }
  return resolved;
}

// ---------------------------------------------------------------------------------------------------------
// Indices: what turns a Secret or CertificateRequest event into the objects to reconcile, without a scan.

export const certificateSecretIndex: IndexFunc = (obj) => {
  const cert = obj as Certificate;
  const secretName = cert.spec?.secretName;
  return secretName ? [keyFor(cert.metadata?.namespace, secretName)] : [];
};

/** The controller ownerReference to a cert-manager.io Certificate (what requestmanager sets). */
export const requestCertificateIndex: IndexFunc = (obj) => {
  const owner = obj.metadata?.ownerReferences?.find(
    (ref) =>
      ref.controller === true && ref.kind === Kinds.Certificate && ref.apiVersion?.split('/')[0] === GROUP,
  );
  return owner ? [keyFor(obj.metadata?.namespace, owner.name)] : [];
};

/** The controller ownerReference to an acme.cert-manager.io Order (what the Orders controller sets). */
export const challengeOrderIndex: IndexFunc = (obj) => {
  const owner = obj.metadata?.ownerReferences?.find(
    (ref) => ref.controller === true && ref.kind === AcmeKinds.Order && ref.apiVersion === ACME_API_VERSION,
  );
  return owner ? [keyFor(obj.metadata?.namespace, owner.name)] : [];
};

export const requestKeySecretIndex: IndexFunc = (obj) => {
  const secretName = obj.metadata?.annotations?.[Annotations.privateKeySecretName];
  return secretName ? [keyFor(obj.metadata?.namespace, secretName)] : [];
};

export const issuerCaSecretIndex: IndexFunc = (obj) => {
  const secretName = (obj as Issuer).spec?.ca?.secretName;
  return secretName ? [keyFor(obj.metadata?.namespace, secretName)] : [];
};

/** ACME Issuers by the Secrets they read: the account key and the EAB key (`namespace/name`). */
export const issuerAcmeSecretIndex: IndexFunc = (obj) =>
  acmeSecretNames((obj as Issuer).spec).map((name) => keyFor(obj.metadata?.namespace, name));

export function clusterIssuerAcmeSecretIndex(clusterResourceNamespace: string): IndexFunc {
  return (obj) =>
    acmeSecretNames((obj as ClusterIssuer).spec).map((name) => keyFor(clusterResourceNamespace, name));
}

/** ClusterIssuers read their Secrets from the cluster resource namespace. */
export function clusterIssuerCaSecretIndex(clusterResourceNamespace: string): IndexFunc {
  return (obj) => {
    const secretName = (obj as ClusterIssuer).spec?.ca?.secretName;
    return secretName ? [keyFor(clusterResourceNamespace, secretName)] : [];
  };
}
