import { isNotFound } from '@certkit/apimachinery';
import type { Certificate } from '@certkit/certificates/api/types';
import {
  type CertificateControllerOptions,
  installCrds,
  type RunningController,
  startCertificateController,
} from '@certkit/certificates/controller';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { builtins, KubeClient, loadKubeconfig, silentLogger } from '@certkit/runtime';
import type { Event } from 'kubernetes-types/core/v1.d.ts';
import { startTestServer, type TestServer } from '../apiserver/test-server.ts';
import { eventually } from '../eventually.ts';
import { gatewayApiCrdPath } from '../gateway-api/crds.ts';
import { type Kubectl, kubectlFor } from '../kubectl/kubectl.ts';

/**
 * What the certificate shims' end-to-end tests (ingress-shim, gateway-shim, listenerset) do in the namespace they
 * work in: apply manifests with kubectl as users do, read the Certificates the shims write, and wait for the
 * Events they record.
 */
export interface ShimCluster {
  /** The Certificate of that name, or undefined while there is none. */
  certificate(name: string): Promise<Certificate | undefined>;
  /** `kubectl apply -f` of a manifest text. */
  apply(yaml: string): Promise<void>;
  /** The Event of `reason` about the object, once recorded; `message` must match when given. */
  eventAbout(kind: string, name: string, reason: string, message?: string | RegExp): Promise<Event>;
}

export function shimCluster(admin: KubeClient, kubectl: Kubectl, namespace: string): ShimCluster {
  return {
    async certificate(name) {
      try {
        return await admin.resource<Certificate>(certificatesRef).get(namespace, name);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async apply(yaml) {
      await kubectl.ok('apply', '-f', await kubectl.manifest(yaml));
    },
    eventAbout(kind, name, reason, message) {
      return eventually(
        async () => {
          const list = await admin
            .resource(builtins.events)
            .list(namespace, { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` });
          return (list.items as unknown as Event[]).find(
            (e) =>
              e.reason === reason &&
              (message === undefined ||
                (typeof message === 'string' ? e.message === message : message.test(e.message ?? ''))),
          );
        },
        `a ${reason} Event about ${kind} ${name}${message ? ` saying ${String(message)}` : ''}`,
        20_000,
        50,
      );
    },
  };
}

/** The status of a Certificate's Ready condition, if it has one. */
export const readyStatus = (c: Certificate | undefined) =>
  c?.status?.conditions?.find((x) => x.type === 'Ready')?.status;

/** An embedded API server with cert-manager's CRDs, a namespace, and the certificate controller once started. */
export interface ShimTestCluster extends ShimCluster {
  server: TestServer;
  admin: KubeClient;
  kubectl: Kubectl;
  /** Installs Gateway API CRDs with `kubectl apply --server-side`, as users do, and waits until they are served. */
  installGatewayApi(...resources: ('gateways' | 'listenersets')[]): Promise<void>;
  /** Starts the certificate controller (metrics off, silent), stopped by close(). */
  startController(options: CertificateControllerOptions): RunningController;
  /** Stops the controller and the server. */
  close(): Promise<void>;
}

export async function startShimTestCluster(namespace: string): Promise<ShimTestCluster> {
  const server = await startTestServer();
  const admin = new KubeClient({ ...(await loadKubeconfig({ path: server.kubeconfigPath })), qps: -1 });
  const kubectl = kubectlFor({ ...process.env, KUBECONFIG: server.kubeconfigPath }, server.dataDir);
  let controller: RunningController | undefined;
  await installCrds(admin);
  await eventually(
    async () => (await server.fetch('GET', '/apis/cert-manager.io/v1/certificates')).status === 200,
    'cert-manager.io served',
    30_000,
  );
  await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: namespace } });
  return {
    ...shimCluster(admin, kubectl, namespace),
    server,
    admin,
    kubectl,
    async installGatewayApi(...resources) {
      for (const resource of resources) {
        await kubectl.ok('apply', '--server-side', '-f', gatewayApiCrdPath(resource));
        await eventually(
          async () =>
            (await server.fetch('GET', `/apis/gateway.networking.k8s.io/v1/${resource}`)).status === 200,
          `${resource} served`,
          30_000,
        );
      }
    },
    startController(options) {
      controller = startCertificateController(admin, {
        metricsBindAddress: '0',
        log: silentLogger,
        ...options,
      });
      controller.done.catch((err) => console.error('certificate controller stopped:', err));
      return controller;
    },
    async close() {
      await controller?.stop();
      await controller?.done.catch(() => {});
      admin.close();
      await server.close();
    },
  };
}
