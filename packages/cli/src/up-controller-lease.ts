import { hostname } from 'node:os';
import { formatMicroTime, isNotFound, type KubeObject } from '@certkit/apimachinery';
import { builtins, type KubeClient } from '@certkit/runtime';

/**
 * `certkit up` holds the certificate controller's leader Lease for as long as it serves, so that a
 * `certkit controller` pointed at it (with its kubeconfig, say) stands by, as a second cert-manager does on a
 * cluster that already runs one, instead of reconciling every Certificate beside up's own controller. up's
 * controller does not take part in the election: it runs whatever the Lease says, as it always has (a
 * lost election would stop the API server with it); up only keeps the Lease naming itself, renewed often
 * enough that a standby sees it valid, and released on a clean stop (docs/adr/1895-up-holds-the-controller-lease.md).
 */

/** How long a standby waits after up's last renewal before it takes the Lease (up killed, its data served on). */
export const UP_LEASE_DURATION_SECONDS = 60;
/** How often up renews it: three renewals per duration, so one lost write does not let a standby in. */
export const UP_LEASE_RENEW_MS = 20_000;

/** How long a clean stop waits for the release. */
const RELEASE_TIMEOUT_MS = 2_000;

interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** The identity up writes: a standby's "standing by" line names it, and says that it is up's. */
export function upLeaseIdentity(): string {
  return `${hostname()}_certkit-up_${process.pid}`;
}

/** Whether a Lease holder's identity is a `certkit up`'s (see upLeaseIdentity). */
export function isUpLeaseIdentity(identity: string): boolean {
  return identity.includes('_certkit-up_');
}

export interface HeldLease {
  /** Stops renewing and releases the Lease (an empty holder, as client-go's ReleaseOnCancel leaves it). */
  release(): Promise<void>;
}

/**
 * Writes `namespace/name` as held by up now, whoever held it, and renews it every UP_LEASE_RENEW_MS. A failed
 * renewal is tried again at the next one: the worst it does is let a standby in, which is what ran before.
 */
export async function holdControllerLease(
  client: KubeClient,
  namespace: string,
  name: string,
  identity = upLeaseIdentity(),
): Promise<HeldLease> {
  const leases = client.resource<Lease>(builtins.leases);
  let acquireTime: string | undefined;
  const write = async (holderIdentity: string, leaseDurationSeconds: number, signal?: AbortSignal) => {
    const now = formatMicroTime(new Date());
    let current: Lease | undefined;
    try {
      current = await leases.get(namespace, name, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const previous = current?.spec;
    const taken = previous?.holderIdentity !== holderIdentity;
    acquireTime = taken || acquireTime === undefined ? now : acquireTime;
    const spec = {
      holderIdentity,
      leaseDurationSeconds,
      acquireTime,
      renewTime: now,
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (taken && holderIdentity !== '' ? 1 : 0),
    };
    if (!current) {
      await leases.create(
        namespace,
        {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { namespace, name },
          spec,
        },
        { signal },
      );
    } else {
      await leases.update({ ...current, spec }, { signal });
    }
  };
  await write(identity, UP_LEASE_DURATION_SECONDS);
  const timer = setInterval(() => {
    write(identity, UP_LEASE_DURATION_SECONDS).catch(() => {});
  }, UP_LEASE_RENEW_MS);
  // Not a reason to keep the process alive: up's server is.
  timer.unref();
  return {
    async release() {
      clearInterval(timer);
      // Bounded: a stop must not wait on a busy database for this; the Lease then lapses in its 60 s.
      await write('', 1, AbortSignal.timeout(RELEASE_TIMEOUT_MS)).catch(() => {});
    },
  };
}
