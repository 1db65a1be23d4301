/**
 * The conformance environment: the embedded API server with the cert-manager.io CRDs, the whole certificate
 * controller (startCertificateController, as `certkit up` runs it), and the issuers of the four variants.
 * Nothing here is mocked: the test talks to the API server through its own client, as kubectl would.
 *
 * The controller runs as `certkit up` runs it: under the ServiceAccount of deploy/rbac.yaml (read from the
 * checkout, so an edit to the file is what the scenarios run under), with TokenRequest tokens, on a server
 * that authorises with RBAC. Every 403 it is answered is recorded in `forbidden`, which the suites assert
 * empty: a permission the controller needs and the manifest lacks fails them even where the controller
 * would carry on (an Event it could not write).
 */

import { isNotFound, type KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  jsonLogger,
  KubeClient,
  loadKubeconfig,
  type ResourceClient,
  type ResourceRef,
  silentLogger,
} from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { testServiceAccountTokens } from '../apiserver/service-account-tokens.ts';
import { startTestServer, type TestServer, type TestServerOptions } from '../apiserver/test-server.ts';
import type {
  Certificate,
  CertificateRequest,
  ClusterIssuer,
  Issuer,
  IssuerReference,
} from '@certkit/certificates/api/types';
import {
  installCrds,
  type RunningController,
  startCertificateController,
} from '@certkit/certificates/controller';
import {
  certificateRequestsRef,
  certificatesRef,
  clusterIssuersRef,
  issuersRef,
} from '@certkit/certificates/controllers/refs';
import { controllerIdentity } from '@certkit/certificates/identity/controller-identity';
import { RBAC_YAML_PATH } from '@certkit/certificates/identity/rbac-manifest';
import { encodePrivateKey } from '@certkit/certificates/pki/index';
import { rootCa } from '../pki/ca.ts';
import { opensslRootCa, opensslUnavailable } from './openssl.ts';
import { eventually } from '../eventually.ts';

export const CLUSTER_RESOURCE_NAMESPACE = 'certkit-conformance-system';

export interface Environment {
  server: TestServer;
  /** The test's own client (unthrottled; not the controller's). */
  admin: KubeClient;
  controller: RunningController;
  /** The username the controller authenticates as (deploy/rbac.yaml's ServiceAccount). */
  controllerUser: string;
  /** The controller's requests answered 403 Forbidden, by verb and resource. */
  forbidden: string[];
  certificates: ResourceClient<Certificate>;
  certificateRequests: ResourceClient<CertificateRequest>;
  issuers: ResourceClient<Issuer>;
  clusterIssuers: ResourceClient<ClusterIssuer>;
  secrets: ResourceClient<Secret & KubeObject>;
  close(): Promise<void>;
}

/** The one poll loop (`../eventually.ts`), re-exported for the suites built on this harness. */
export { eventually };

async function waitServed(server: TestServer, ref: ResourceRef): Promise<void> {
  const path = `/apis/${ref.group}/${ref.version}/${ref.resource}`;
  await eventually(
    async () => ((await server.fetch('GET', path)).status === 200 ? true : undefined),
    `${ref.resource} served`,
    15_000,
    20,
  );
}

export interface EnvironmentOptions {
  /** The controllers to run (cert-manager's names; startCertificateController's default when absent). */
  controllers?: ReadonlySet<string>;
  /** More bearer tokens and their users, for requests by someone other than the admin. */
  tokens?: TestServerOptions['tokens'];
}

export async function startEnvironment(options: EnvironmentOptions = {}): Promise<Environment> {
  // RBAC (the server's default) and ServiceAccount tokens, as `certkit up` serves.
  const server = await startTestServer({
    serviceAccountTokens: testServiceAccountTokens(),
    tokens: options.tokens,
  });
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  const admin = new KubeClient({ ...config, qps: -1 });
  await installCrds(admin);
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef])
    await waitServed(server, ref);
  await admin
    .resource(builtins.namespaces)
    .create(undefined, { metadata: { name: CLUSTER_RESOURCE_NAMESPACE } });

  const identity = await controllerIdentity(admin, readFileSync(RBAC_YAML_PATH, 'utf8'));
  const forbidden: string[] = [];
  const controllerClient = new KubeClient({
    ...identity.config,
    qps: -1,
    onRequest: ({ verb, resource, code }) => {
      if (code === 403) forbidden.push(`${verb} ${resource}`);
    },
  });
  const controller = startCertificateController(controllerClient, {
    metricsBindAddress: '0',
    clusterResourceNamespace: CLUSTER_RESOURCE_NAMESPACE,
    controllers: options.controllers,
    log: process.env.CERTKIT_TEST_LOG ? jsonLogger('debug') : silentLogger,
  });
  // A manager that dies (say, a failing informer) should fail the test loudly, not time it out.
  controller.done.catch((err) => console.error('certificate controller stopped:', err));

  return {
    server,
    admin,
    controller,
    controllerUser: identity.username,
    forbidden,
    certificates: admin.resource<Certificate>(certificatesRef),
    certificateRequests: admin.resource<CertificateRequest>(certificateRequestsRef),
    issuers: admin.resource<Issuer>(issuersRef),
    clusterIssuers: admin.resource<ClusterIssuer>(clusterIssuersRef),
    secrets: admin.resource<Secret & KubeObject>(builtins.secrets),
    async close() {
      await controller.stop();
      await controller.done.catch(() => {});
      controllerClient.close();
      admin.close();
      await server.close();
    },
  };
}

export async function getSecret(env: Environment, namespace: string, name: string) {
  try {
    return await env.secrets.get(namespace, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Issuer variants

export interface IssuerVariant {
  title: string;
  kind: 'Issuer' | 'ClusterIssuer';
  type: 'SelfSigned' | 'CA';
}

export const VARIANTS: IssuerVariant[] = [
  { title: 'SelfSigned Issuer', kind: 'Issuer', type: 'SelfSigned' },
  { title: 'SelfSigned ClusterIssuer', kind: 'ClusterIssuer', type: 'SelfSigned' },
  { title: 'CA Issuer', kind: 'Issuer', type: 'CA' },
  { title: 'CA ClusterIssuer', kind: 'ClusterIssuer', type: 'CA' },
];

export interface PreparedIssuer {
  issuerRef: IssuerReference;
  /** The CA certificate (CA variants), to compare ca.crt against. */
  caPem?: string;
  /** How the CA key pair was made. */
  caOrigin?: string;
}

/**
 * Creates the variant's issuer (and for CA the unlabelled key pair Secret: in `namespace` for an Issuer, in
 * the cluster resource namespace for a ClusterIssuer) and waits for it to be Ready, as the upstream suites do.
 */
export async function prepareIssuer(
  env: Environment,
  variant: IssuerVariant,
  namespace: string,
  suffix: string,
): Promise<PreparedIssuer> {
  const name = `conformance-${variant.type.toLowerCase()}-${suffix}`;
  const prepared: PreparedIssuer = { issuerRef: { name, kind: variant.kind, group: 'cert-manager.io' } };
  let spec: Issuer['spec'];
  if (variant.type === 'SelfSigned') {
    spec = { selfSigned: {} };
  } else {
    const secretNamespace = variant.kind === 'Issuer' ? namespace : CLUSTER_RESOURCE_NAMESPACE;
    const secretName = `${name}-key-pair`;
    let certPem: string;
    let keyPem: string;
    // The ClusterIssuer's CA comes from openssl when it can (a CA the controller did not make itself).
    if (variant.kind === 'ClusterIssuer' && !opensslUnavailable()) {
      ({ certPem, keyPem } = opensslRootCa(`certkit conformance cluster CA ${suffix}`));
      prepared.caOrigin = 'openssl req -x509, RSA 2048, PKCS#8 key';
    } else {
      const ca = await rootCa({ algorithm: 'ECDSA', size: 256 }, 10 * 365 * 24 * 3600_000);
      certPem = ca.certPem;
      keyPem = encodePrivateKey(ca.key, 'PKCS1');
      prepared.caOrigin = `pki rootCa, ECDSA P-256, SEC1 key${
        variant.kind === 'ClusterIssuer' ? ` (openssl unavailable: ${opensslUnavailable()})` : ''
      }`;
    }
    prepared.caPem = certPem;
    await env.secrets.create(secretNamespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      // Unlabelled, as users create CA Secrets: the controller caches only its metadata.
      metadata: { name: secretName, namespace: secretNamespace },
      data: {
        'tls.crt': Buffer.from(certPem).toString('base64'),
        'tls.key': Buffer.from(keyPem).toString('base64'),
      },
    });
    spec = { ca: { secretName } };
  }
  const ready = (obj: { status?: { conditions?: { type: string; status: string }[] } }) =>
    obj.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  if (variant.kind === 'Issuer') {
    await env.issuers.create(namespace, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name, namespace },
      spec,
    });
    await eventually(
      async () => (ready(await env.issuers.get(namespace, name)) ? true : undefined),
      `Issuer ${namespace}/${name} Ready`,
      30_000,
    );
  } else {
    await env.clusterIssuers.create(undefined, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name },
      spec,
    });
    await eventually(
      async () => (ready(await env.clusterIssuers.get(undefined, name)) ? true : undefined),
      `ClusterIssuer ${name} Ready`,
      30_000,
    );
  }
  return prepared;
}

// ---------------------------------------------------------------------------------------------------------
// Waiting for Certificates, many at once

const condition = (cert: Certificate, type: string) => cert.status?.conditions?.find((c) => c.type === type);

/** WaitForCertificateReadyAndDoneIssuing: Ready=True for the current generation, and no Issuing=True. */
export function readyAndDoneIssuing(cert: Certificate): boolean {
  const ready = condition(cert, 'Ready');
  return (
    ready?.status === 'True' &&
    ready.observedGeneration === cert.metadata.generation &&
    condition(cert, 'Issuing')?.status !== 'True'
  );
}

export function describeCertificate(cert: Certificate | undefined): string {
  if (!cert) return 'not found';
  const conditions = (cert.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status} (${c.reason}, gen ${c.observedGeneration}): ${c.message}`)
    .join('; ');
  return `generation ${cert.metadata.generation}, revision ${cert.status?.revision ?? '-'}, ${conditions || 'no conditions'}`;
}

/**
 * Waits for many Certificates of one namespace with one LIST per interval, instead of one GET per
 * Certificate per interval (two dozen pollers would otherwise compete with the controller).
 */
export class CertificateWaiter {
  private waiters = new Set<{
    name: string;
    predicate: (cert: Certificate) => boolean;
    deadline: number;
    what: string;
    resolve: (cert: Certificate) => void;
    reject: (err: Error) => void;
  }>();
  private latest = new Map<string, Certificate>();
  private running = false;
  private readonly env: Environment;
  private readonly namespace: string;
  private readonly intervalMs: number;

  constructor(env: Environment, namespace: string, intervalMs = 50) {
    this.env = env;
    this.namespace = namespace;
    this.intervalMs = intervalMs;
  }

  waitFor(
    name: string,
    predicate: (cert: Certificate) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<Certificate> {
    return new Promise((resolve, reject) => {
      this.waiters.add({ name, predicate, deadline: Date.now() + timeoutMs, what, resolve, reject });
      if (!this.running) void this.loop();
    });
  }

  private async loop() {
    this.running = true;
    try {
      while (this.waiters.size) {
        let items: Certificate[] = [];
        try {
          items = (await this.env.certificates.list(this.namespace)).items;
        } catch {
          // Transient; the deadline still applies.
        }
        for (const cert of items) this.latest.set(cert.metadata.name!, cert);
        const now = Date.now();
        for (const waiter of [...this.waiters]) {
          const cert = this.latest.get(waiter.name);
          if (cert && waiter.predicate(cert)) {
            this.waiters.delete(waiter);
            waiter.resolve(cert);
          } else if (now > waiter.deadline) {
            this.waiters.delete(waiter);
            waiter.reject(
              new Error(
                `timed out waiting for ${waiter.name} to be ${waiter.what}: ${describeCertificate(cert)}`,
              ),
            );
          }
        }
        if (this.waiters.size) await sleep(this.intervalMs);
      }
    } finally {
      this.running = false;
    }
  }
}
