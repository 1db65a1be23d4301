/**
 * Test support for the CertificateRequest and issuer controllers: the real embedded API server with the
 * cert-manager.io CRDs, a controller context on its own client (so its requests can be counted), and the
 * controllers running. Only tests import this; the package itself never imports the API server.
 */

import type { KubeObject } from '@certkit/apimachinery';
import {
  builtins,
  type Controller,
  KubeClient,
  loadKubeconfig,
  type RequestInfo,
  type ResourceRef,
  silentLogger,
  jsonLogger,
} from '@certkit/runtime';
import type { KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestServer, type TestServer } from '../apiserver/test-server.ts';
import { certManagerAdmission, certManagerMutation } from '@certkit/certificates/api/admission';
import { certManagerCrds } from '@certkit/certificates/api/crds';
import type {
  CertificateRequest,
  ClusterIssuer,
  Issuer,
  IssuerReference,
} from '@certkit/certificates/api/types';
import { encodePrivateKey } from '@certkit/certificates/pki/index';
import type { ControllerContext } from '@certkit/certificates/controllers/context';
import { createControllerContext, startContext } from '@certkit/certificates/controllers/create-context';
import { registerCertificateControllers } from '@certkit/certificates/controllers/certificates/index';
import { registerIssuerControllers } from '@certkit/certificates/controllers/issuers/index';
import {
  certificateRequestsRef,
  certificatesRef,
  clusterIssuersRef,
  issuersRef,
} from '@certkit/certificates/controllers/refs';
import {
  APPROVER_NAME,
  registerCertificateRequestControllers,
} from '@certkit/certificates/controllers/certificaterequests/index';
import type { AcmeClientMetrics } from '@certkit/certificates/acme/client/metrics';
import { eventually } from '../eventually.ts';

export interface Harness {
  server: TestServer;
  /** An unthrottled client for the test's own reads and writes (not counted). */
  admin: KubeClient;
  ctx: ControllerContext;
  /** Every request the controllers' client made. */
  requests: RequestInfo[];
  /** Starts the approver, when the harness was started without it. */
  startApprover(): void;
  /** The approver controller, for its queue. */
  approver: Controller;
  close(): Promise<void>;
}

export interface HarnessOptions {
  clusterResourceNamespace?: string;
  namespaces?: string[];
  /** Leave the approver stopped until startApprover() (to deny requests before anyone approves them). */
  holdApprover?: boolean;
  /** Run cert-manager's validating admission on the API server, as `certkit up` does. */
  admission?: boolean;
  /** Run the Certificate controllers too. */
  certificates?: boolean;
  /** Scope the controllers to one namespace (objects elsewhere are nobody's). */
  namespace?: string;
  /** Where the ACME clients of ACME issuers report their requests. */
  acmeClientMetrics?: AcmeClientMetrics;
}

async function waitServed(server: TestServer, ref: ResourceRef): Promise<void> {
  const path = `/apis/${ref.group}/${ref.version}/${ref.resource}`;
  const deadline = Date.now() + 10_000;
  while ((await server.fetch('GET', path)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${ref.resource} not served`);
    await sleep(20);
  }
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const server = await startTestServer(
    options.admission ? { admission: certManagerAdmission, admissionMutation: certManagerMutation } : {},
  );
  const config = await loadKubeconfig({ path: server.kubeconfigPath });
  const admin = new KubeClient({ ...config, qps: -1 });
  for (const crd of certManagerCrds()) {
    await admin.resource(builtins.customResourceDefinitions).create(undefined, crd as unknown as KubeObject);
  }
  for (const ref of [certificatesRef, certificateRequestsRef, issuersRef, clusterIssuersRef]) {
    await waitServed(server, ref);
  }
  for (const name of options.namespaces ?? []) {
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name } });
  }

  const requests: RequestInfo[] = [];
  const client = new KubeClient({ ...config, qps: -1, onRequest: (info) => requests.push(info) });
  const ctx = createControllerContext(client, {
    log: process.env.CERTKIT_TEST_LOG ? jsonLogger('debug') : silentLogger,
    clusterResourceNamespace: options.clusterResourceNamespace,
    namespace: options.namespace,
    acmeClientMetrics: options.acmeClientMetrics,
  });
  const controllers: Controller[] = [
    ...registerIssuerControllers(ctx),
    ...registerCertificateRequestControllers(ctx),
    ...(options.certificates ? registerCertificateControllers(ctx) : []),
  ];
  const abort = new AbortController();
  await startContext(ctx, AbortSignal.any([abort.signal, AbortSignal.timeout(15_000)]));
  const running: Promise<void>[] = [];
  const start = (c: Controller) => running.push(c.start(abort.signal));
  const approver = controllers.find((c) => c.name === APPROVER_NAME)!;
  for (const c of controllers) if (c !== approver || !options.holdApprover) start(c);

  return {
    server,
    admin,
    ctx,
    requests,
    startApprover: () => start(approver),
    approver,
    async close() {
      abort.abort();
      await Promise.all(running);
      await ctx.factory.stopped();
      await ctx.acmeAccounts.close();
      client.close();
      admin.close();
      await server.close();
    },
  };
}

/** The one poll loop (`../eventually.ts`), re-exported for the suites built on this harness. */
export { eventually };

export const base64 = (text: string) => Buffer.from(text).toString('base64');

export function tlsSecret(
  namespace: string,
  name: string,
  data: { certPem?: string; key?: KeyObject; keyPem?: string; caPem?: string },
  labels?: Record<string, string>,
) {
  const entries: Record<string, string> = {};
  if (data.certPem !== undefined) entries['tls.crt'] = base64(data.certPem);
  const keyPem = data.keyPem ?? (data.key ? encodePrivateKey(data.key, 'PKCS8') : undefined);
  if (keyPem !== undefined) entries['tls.key'] = base64(keyPem);
  if (data.caPem !== undefined) entries['ca.crt'] = base64(data.caPem);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: data.certPem !== undefined && keyPem !== undefined ? 'kubernetes.io/tls' : 'Opaque',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    data: entries,
  };
}

export function certificateRequest(
  namespace: string,
  name: string,
  csrPem: string,
  issuerRef: IssuerReference,
  extra: { annotations?: Record<string, string>; duration?: string; isCA?: boolean; usages?: string[] } = {},
): CertificateRequest {
  const { annotations, ...spec } = extra;
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec: { request: base64(csrPem), issuerRef, ...(spec as object) },
  };
}

export const issuers = (h: Harness) => h.admin.resource<Issuer>(issuersRef);
export const clusterIssuers = (h: Harness) => h.admin.resource<ClusterIssuer>(clusterIssuersRef);
export const requests = (h: Harness) => h.admin.resource<CertificateRequest>(certificateRequestsRef);
export const secrets = (h: Harness) => h.admin.resource(builtins.secrets);

export function condition(obj: { status?: { conditions?: { type: string }[] } }, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type) as
    | { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }
    | undefined;
}

/** The Events recorded about an object, read through the API. */
export async function eventsFor(h: Harness, namespace: string, name: string) {
  const list = await h.admin.resource(builtins.events).list(namespace);
  return (
    list.items as unknown as {
      involvedObject: { name: string };
      reason: string;
      message: string;
      type: string;
    }[]
  ).filter((e) => e.involvedObject.name === name);
}

/** Live GETs of one Secret made by the controllers. */
export function secretGets(h: Harness, since = 0): number {
  return h.requests.slice(since).filter((r) => r.verb === 'get' && r.resource === 'secrets').length;
}
