import { isNotFound } from '@certkit/apimachinery';
import type { Certificate } from '@certkit/certificates/api/types';
import { certificatesRef } from '@certkit/certificates/controllers/refs';
import { builtins, type KubeClient } from '@certkit/runtime';
import type { Event } from 'kubernetes-types/core/v1.d.ts';
import { eventually } from '../eventually.ts';
import type { Kubectl } from '../kubectl/kubectl.ts';

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
