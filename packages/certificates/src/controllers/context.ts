import type { KubeObject, PartialObjectMetadata } from '@certkit/apimachinery';
import type { Client, Logger, ResourceClient, SharedInformer, SharedInformerFactory } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { HTTP01Solver } from '../acme/http01/solver.ts';
import type {
  Certificate,
  CertificateRequest,
  Challenge,
  ClusterIssuer,
  Issuer,
  Order,
} from '../api/types.ts';
import type { DNS01Solver } from '../acme/dns01/solver.ts';
import type { AcmeAccountRegistry } from '../acme/accounts/registry.ts';
import type { EventRecorders } from './events.ts';

/**
 * What every certkit controller shares: one client, one informer per kind, the split Secret cache, an event
 * recorder and the options. Built once per process by createControllerContext (secrets/ and
 * controllers/create-context.ts); sub-controllers read from the informers' stores and write through the
 * clients, never caching objects of their own.
 */

export type CleanupPolicy = 'OnDelete' | 'Never';

export interface ControllerOptions {
  /** Watch and reconcile only this namespace (all namespaces when absent). */
  namespace?: string;
  /** Where ClusterIssuers' Secrets live (cert-manager's --cluster-resource-namespace; default kube-system). */
  clusterResourceNamespace: string;
  /** Used when a Certificate's spec.cleanupPolicy is empty (--default-secret-cleanup-policy; default Never). */
  defaultSecretCleanupPolicy: CleanupPolicy;
  /**
   * The deprecated --enable-certificate-owner-ref: when given (true or false) it takes precedence over both the
   * field and the default policy (docs/adr/0011).
   */
  enableCertificateOwnerRef?: boolean;
  /** Split Secret caching (docs/adr/0010): labelled Secrets in full, the rest as metadata. False: all in full. */
  secretsFilteredCaching: boolean;
  /** Workers per controller (cert-manager's --concurrent-workers; default 5). */
  maxConcurrentReconciles: number;
  /**
   * Where the embedded HTTP-01 solver listens (--acme-http01-listen-address: `:80`, `host:port`); absent:
   * no listener, and HTTP-01 challenges are left to an in-cluster solver.
   */
  acmeHTTP01ListenAddress?: string;
  /** `ip:port` nameservers for the HTTP-01 self-check's lookups (--acme-http01-solver-nameservers). */
  acmeHTTP01SolverNameservers?: string[];
  /** Port of the HTTP-01 self-check's first request (--acme-http01-self-check-port; default 80). */
  acmeHTTP01SelfCheckPort?: number;
  /** Challenges processed at once (--max-concurrent-challenges; default 60, as cert-manager). */
  maxConcurrentChallenges: number;
  /** DNS-01 check servers (--dns01-recursive-nameservers: `host:port` or `https://` DoH); default: the system's. */
  dns01RecursiveNameservers?: string[];
  /** Ask only those servers, never the zone's own (--dns01-recursive-nameservers-only). */
  dns01RecursiveNameserversOnly?: boolean;
  /** How long a Challenge waits after a failed self-check (--dns01-check-retry-period; default 10 s). */
  dns01CheckRetryPeriodMs: number;
  /**
   * How long a DNS-01 Challenge waits after its record was seen everywhere, before it is accepted (cert-manager
   * sleeps a fixed 60 s so that resolvers the check did not ask catch up). A requeue, not a sleep: no worker
   * is held. Only tests shorten it.
   */
  /**
   * The failure backoff of a Certificate whose request failed: min·2^(n−1), capped at max
   * (--certificate-request-minimum-backoff-duration, 1 h, and --certificate-request-maximum-backoff-duration, 32 h,
   * as upstream).
   */
  certificateRequestMinimumBackoffMs: number;
  certificateRequestMaximumBackoffMs: number;
  dns01PropagationWaitMs: number;
}

/** A Secret as the cache hands it out: full for labelled Secrets, metadata-only for the others. */
export type CachedSecret = Secret | (PartialObjectMetadata & KubeObject);

/**
 * cert-manager's Secret getter (docs/adr/0010). Secrets from the full cache are the cache's
 * own objects, as informer stores hand them out: callers must not mutate them (copy first).
 */
export interface SecretGetter {
  /**
   * The Secret, or undefined when it does not exist: from the full cache when it is there; with one live GET
   * when only its metadata is cached (or, oddly, it is in both); undefined when it is in neither.
   */
  get(namespace: string, name: string): Promise<Secret | undefined>;
  /**
   * As get, with the Secret's bytes: the cache keeps a certificate Secret as facts in place of its `tls.crt`
   * and `tls.key` (docs/adr/1140), so such a Secret is read live, through a small cache of the last ones read
   * (by resourceVersion, emptied when unused). For the paths that copy or parse a Secret's bytes: writing it,
   * reusing its key, a signer or issuer reading its key pair, passwords and credentials.
   */
  getWithData(namespace: string, name: string): Promise<Secret | undefined>;
  /** Labelled Secrets only (from the full cache): unlabelled Secrets are never listed in full. */
  listLabelled(namespace: string, labelSelector: string): Secret[];
  /** As listLabelled, for the Secrets in the owner's namespace whose controlling owner reference is it. */
  listLabelledControlledBy(owner: KubeObject, labelSelector: string): Secret[];
  /** Handlers for Secret events from both caches (full Secrets or PartialObjectMetadata stubs). */
  onChange(handler: (secret: CachedSecret) => void): void;
  /** True once both caches have synced. */
  hasSynced(): boolean;
}

export interface ControllerContext {
  /** A KubeClient; in unit tests, runtime's in-memory FakeClient (`@certkit/runtime/client/fake/index`). */
  client: Client;
  factory: SharedInformerFactory;
  certificates: SharedInformer<Certificate>;
  certificateRequests: SharedInformer<CertificateRequest>;
  issuers: SharedInformer<Issuer>;
  clusterIssuers: SharedInformer<ClusterIssuer>;
  /** acme.cert-manager.io Orders and Challenges. */
  orders: SharedInformer<Order>;
  challenges: SharedInformer<Challenge>;
  orderClient: ResourceClient<Order>;
  challengeClient: ResourceClient<Challenge>;
  certificateClient: ResourceClient<Certificate>;
  certificateRequestClient: ResourceClient<CertificateRequest>;
  issuerClient: ResourceClient<Issuer>;
  clusterIssuerClient: ResourceClient<ClusterIssuer>;
  secretClient: ResourceClient<Secret & KubeObject>;
  secrets: SecretGetter;
  recorder: EventRecorders;
  /** The ACME clients of registered ACME issuers, by issuer UID (set by the issuer controllers). */
  acmeAccounts: AcmeAccountRegistry;
  options: ControllerOptions;
  log: Logger;
  /** The controller's clock, so tests can move time (renewal, backoff). */
  now(): Date;
  /** The HTTP-01 solver of the embedded listener, when --acme-http01-listen-address is given. */
  http01Solver?: HTTP01Solver;
  /** The DNS-01 solver (RFC2136 and the propagation check), configured by the dns01 options. */
  dns01Solver: DNS01Solver;
}

export const DEFAULT_OPTIONS: ControllerOptions = {
  clusterResourceNamespace: 'kube-system',
  defaultSecretCleanupPolicy: 'Never',
  secretsFilteredCaching: true,
  maxConcurrentReconciles: 5,
  maxConcurrentChallenges: 60,
  dns01CheckRetryPeriodMs: 10_000,
  dns01PropagationWaitMs: 60_000,
  certificateRequestMinimumBackoffMs: 60 * 60_000,
  certificateRequestMaximumBackoffMs: 32 * 60 * 60_000,
};
