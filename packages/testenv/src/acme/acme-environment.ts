/**
 * Test support for ACME issuance end to end: a real BIND serving the zone `acme.test` (names resolve to
 * 127.0.0.1; TXT records writable with TSIG), a real Pebble whose VA resolves through that BIND and dials the
 * controller's embedded HTTP-01 listener, the embedded API server with cert-manager's CRDs and admission, and
 * the whole certificate controller (`startCertificateController`) wired to all three. Skips, with the reason,
 * where pebble or bind9 is missing.
 */

import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  defaultRegistry,
  jsonLogger,
  KubeClient,
  loadKubeconfig,
  silentLogger,
} from '@certkit/runtime';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  clientRequestMetrics,
  startCertificateController,
  type RunningController,
} from '@certkit/certificates/controller';
import { controllerIdentity } from '@certkit/certificates/identity/controller-identity';
import { RBAC_YAML_PATH } from '@certkit/certificates/identity/rbac-manifest';
import type {
  ACMEChallengeSolver,
  Certificate,
  CertificateRequest,
  Challenge,
  Issuer,
  Order,
} from '@certkit/certificates/api/types';
import {
  certificateRequestsRef,
  certificatesRef,
  challengesRef,
  issuersRef,
  ordersRef,
} from '@certkit/certificates/controllers/refs';
import { startCertManagerServer } from '../apiserver/cert-manager-server.ts';
import type { TestServer } from '../apiserver/test-server.ts';
import { bindAvailable, startBind, type BindServer } from '../bind/bind.ts';
import { pebbleSkip, startPebble, type Pebble } from '../pebble/pebble.ts';
import { freePort } from '../net/free-ports.ts';

export const ACME_ZONE = 'acme.test';
/** Names under ACME_ZONE with an A record 127.0.0.1 (Pebble's VA asks AAAA first, then A). */
export const ACME_HOSTS = ['www', 'a', 'b', 'c', 'http', 'dns', 'bad', 'mixed-http', 'mixed-dns'];

/** Why these tests cannot run here, or false. */
export function acmeEnvironmentSkip(): string | false {
  const pebble = pebbleSkip();
  if (pebble) return pebble;
  return bindAvailable() ? false : 'bind9 (named) and bind9-dnsutils (dig) are not installed';
}

export interface AcmeEnvironmentOptions {
  /** How long a DNS-01 Challenge waits after its check passes (cert-manager: 60 s; default here 0). */
  dns01PropagationWaitMs?: number;
  /** Pebble's badNonce rejection percentage (default: Pebble's own, 5 %). */
  nonceRejectPercent?: number;
  /** Roots cross-signing Pebble's intermediate besides the default one (alternate chains). */
  alternateRoots?: number;
  /** Workers per controller (--concurrent-workers; default 5). */
  concurrentWorkers?: number;
  /** Pebble refuses accounts without External Account Binding (its key `kid-1` is in `pebble.eabKeys`). */
  eabRequired?: boolean;
  /** False: no --acme-http01-listen-address, so the controller has no HTTP-01 solver. */
  http01Listener?: boolean;
  /** Serve /metrics (and the probes) here, e.g. `127.0.0.1:0`; off by default ('0'). */
  metricsBindAddress?: string;
  /** The controllers to run (cert-manager's names; startCertificateController's default when absent). */
  controllers?: ReadonlySet<string>;
}

export interface AcmeEnvironment {
  server: TestServer;
  admin: KubeClient;
  bind: BindServer;
  pebble: Pebble;
  controller: RunningController;
  /** The controller's requests answered 403 Forbidden (it runs under deploy/rbac.yaml), by verb and resource. */
  forbidden: string[];
  /** The TSIG key the rfc2136 solver signs with, and the Secret (in every test namespace) holding it. */
  tsig: { keyName: string; algorithm: string; secretName: string; secretKey: string };
  /** An rfc2136 DNS-01 solver for BIND (in `namespace`'s Secret). */
  dns01Solver(selector?: ACMEChallengeSolver['selector']): ACMEChallengeSolver;
  http01Solver(selector?: ACMEChallengeSolver['selector']): ACMEChallengeSolver;
  /**
   * Creates a namespace with the TSIG Secret, and an ACME Issuer in it (with `acme` fields merged in), and
   * waits for it to be Ready.
   */
  readyIssuer(
    namespace: string,
    name: string,
    solvers: ACMEChallengeSolver[],
    acme?: Record<string, unknown>,
  ): Promise<Issuer>;
  resources: {
    certificates: ReturnType<KubeClient['resource']>;
    requests: ReturnType<KubeClient['resource']>;
    orders: ReturnType<KubeClient['resource']>;
    challenges: ReturnType<KubeClient['resource']>;
    issuers: ReturnType<KubeClient['resource']>;
    secrets: ReturnType<KubeClient['resource']>;
  };
  close(): Promise<void>;
}

export async function startAcmeEnvironment(options: AcmeEnvironmentOptions = {}): Promise<AcmeEnvironment> {
  const bind = await startBind({
    zones: [{ name: ACME_ZONE, records: ACME_HOSTS.map((host) => `${host} IN A 127.0.0.1`) }],
  });
  const http01Port = await freePort();
  const pebble = await startPebble({
    dnsServer: bind.address,
    httpPort: http01Port,
    // Every order gets fresh authorizations, so that each test really solves its challenges.
    authzReusePercent: 0,
    ...(options.nonceRejectPercent !== undefined ? { nonceRejectPercent: options.nonceRejectPercent } : {}),
    ...(options.alternateRoots !== undefined ? { alternateRoots: options.alternateRoots } : {}),
    ...(options.eabRequired ? { eabRequired: true } : {}),
  });
  const server = await startCertManagerServer();
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  const admin = new KubeClient({ ...config, qps: -1 });
  // Under deploy/rbac.yaml's ServiceAccount, as `certkit up` runs it (conformance/environment.ts); 403s recorded.
  const identity = await controllerIdentity(admin, readFileSync(RBAC_YAML_PATH, 'utf8'));
  const forbidden: string[] = [];
  // The controller's requests by verb, resource and code, as `certkit controller` counts them for /metrics.
  const countRequest = clientRequestMetrics(defaultRegistry);
  const client = new KubeClient({
    ...identity.config,
    qps: -1,
    onRequest: (info) => {
      countRequest(info);
      if (info.code === 403) forbidden.push(`${info.verb} ${info.resource}`);
    },
  });
  const controller = startCertificateController(client, {
    log: process.env.CERTKIT_TEST_LOG ? jsonLogger('debug') : silentLogger,
    metricsBindAddress: options.metricsBindAddress ?? '0',
    ...(options.http01Listener === false ? {} : { acmeHTTP01ListenAddress: `127.0.0.1:${http01Port}` }),
    acmeHTTP01SelfCheckPort: http01Port,
    acmeHTTP01SolverNameservers: [bind.address],
    dns01RecursiveNameservers: [bind.address],
    dns01RecursiveNameserversOnly: true,
    dns01CheckRetryPeriodMs: 1_000,
    dns01PropagationWaitMs: options.dns01PropagationWaitMs ?? 0,
    ...(options.concurrentWorkers ? { maxConcurrentReconciles: options.concurrentWorkers } : {}),
    ...(options.controllers ? { controllers: options.controllers } : {}),
  });

  const key = bind.keys.HMACSHA256;
  const tsig = { keyName: key.name, algorithm: key.algorithm, secretName: 'tsig', secretKey: 'secret' };
  const resources = {
    certificates: admin.resource<Certificate>(certificatesRef),
    requests: admin.resource<CertificateRequest>(certificateRequestsRef),
    orders: admin.resource<Order>(ordersRef),
    challenges: admin.resource<Challenge>(challengesRef),
    issuers: admin.resource<Issuer>(issuersRef),
    secrets: admin.resource(builtins.secrets),
  };

  return {
    server,
    admin,
    bind,
    pebble,
    controller,
    forbidden,
    tsig,
    resources: resources as unknown as AcmeEnvironment['resources'],
    dns01Solver: (selector) => ({
      ...(selector ? { selector } : {}),
      dns01: {
        rfc2136: {
          nameserver: bind.address,
          tsigKeyName: tsig.keyName,
          tsigAlgorithm: tsig.algorithm,
          tsigSecretSecretRef: { name: tsig.secretName, key: tsig.secretKey },
        },
      },
    }),
    http01Solver: (selector) => ({
      ...(selector ? { selector } : {}),
      // The embedded listener answers whatever the Ingress settings say; they only pass validation here.
      http01: { ingress: {} },
    }),
    async readyIssuer(namespace, name, solvers, acme = {}) {
      await admin
        .resource(builtins.namespaces)
        .create(undefined, { metadata: { name: namespace } })
        .catch(() => undefined);
      await resources.secrets
        .create(namespace, {
          metadata: { name: tsig.secretName, namespace },
          data: { [tsig.secretKey]: Buffer.from(key.secret).toString('base64') },
        } as unknown as KubeObject)
        .catch(() => undefined);
      await resources.issuers.create(namespace, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name, namespace },
        spec: {
          acme: {
            server: pebble.directoryUrl,
            caBundle: Buffer.from(pebble.caBundle).toString('base64'),
            privateKeySecretRef: { name: `${name}-account-key` },
            solvers,
            ...acme,
          },
        },
      } as Issuer);
      return eventually(
        async () => {
          const issuer = await resources.issuers.get(namespace, name);
          const ready = issuer.status?.conditions?.find((c) => c.type === 'Ready');
          return ready?.status === 'True' ? issuer : undefined;
        },
        `Issuer ${namespace}/${name} Ready`,
        30_000,
      );
    },
    async close() {
      await controller.stop();
      client.close();
      admin.close();
      await server.close();
      await pebble.stop();
      await bind.stop();
    },
  };
}

/** Polls `probe` until it returns something, or fails after `timeoutMs` saying what it waited for. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await sleep(100);
  }
}
