import type { KubeObject } from '@certkit/apimachinery';
import type { Client, ResourceRef } from '@certkit/runtime';
import { isNoKindMatch, type RestMapper } from '@certkit/runtime';
import { defaultIssuerRef } from '../../api/defaults.ts';
import type { CertificateRequest } from '../../api/types.ts';

/**
 * Whether this controller may approve a request for another group's issuer (an external issuer: Vault,
 * Google CAS, step-ca, …), as cert-manager decides it.
 *
 * cert-manager's approver tries every request, and its webhook lets the approval through only when the
 * approving user may `approve` the `signers` resource of group cert-manager.io named `<resource>.<group>/*` or
 * `<resource>.<group>/<namespace>.<name>` (`<resource>.<group>/<name>` for a cluster-scoped kind). Its chart
 * grants that for `issuers.cert-manager.io/*` and `clusterissuers.cert-manager.io/*` only (`approveSignerNames`),
 * so an external issuer's requests wait for a policy engine or an explicit grant. certkit's controller runs
 * against clusters without that webhook (and certkit's API server has none), so it asks first, with a
 * SelfSubjectAccessReview per signer name, and approves only what it is granted: the same answer, from the
 * same RBAC. cert-manager.io's own issuers are not asked about (the grant every deployment of either has),
 * so issuance makes no extra request.
 */

const SELF_SUBJECT_ACCESS_REVIEWS: ResourceRef = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'selfsubjectaccessreviews',
  kind: 'SelfSubjectAccessReview',
  namespaced: false,
};

/** How long an answer is reused: a burst of requests for one issuer asks once (cert-manager caches 1 s). */
export const SIGNER_ANSWER_TTL_MS = 10_000;

/** kube's guess of a kind's resource name, for a client without discovery: lower case, plural. */
export function guessResource(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower.endsWith('s')) return `${lower}es`;
  if (lower.endsWith('y')) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** The signer names of a request's issuer: the wildcard first, then the issuer itself. */
export function signerNames(
  resource: string,
  group: string,
  namespaced: boolean,
  cr: CertificateRequest,
): string[] {
  const ref = defaultIssuerRef(cr.spec?.issuerRef ?? { name: '' });
  const issuer = namespaced ? `${cr.metadata?.namespace}.${ref.name}` : ref.name;
  return [`${resource}.${group}/*`, `${resource}.${group}/${issuer}`];
}

export class SignerApproval {
  readonly #client: Client;
  readonly #mapper: RestMapper | undefined;
  readonly #now: () => number;
  readonly #answers = new Map<string, { allowed: boolean; at: number }>();

  constructor(client: Client, now: () => number = Date.now) {
    this.#client = client;
    // A KubeClient maps kinds through discovery, as cert-manager's webhook does; others (the fake) guess.
    this.#mapper = (client as { mapper?: RestMapper }).mapper;
    this.#now = now;
  }

  /**
   * Whether the request's issuer is a signer this controller may approve for; a kind the cluster does not
   * serve is not (cert-manager: "referenced signer resource does not exist").
   */
  async mayApprove(cr: CertificateRequest): Promise<boolean> {
    const ref = defaultIssuerRef(cr.spec?.issuerRef ?? { name: '' });
    let resource: string;
    let namespaced = true;
    if (this.#mapper) {
      try {
        const mapped = await this.#mapper.mapGroupKind(ref.group, ref.kind);
        resource = mapped.resource;
        namespaced = mapped.namespaced ?? true;
      } catch (err) {
        if (isNoKindMatch(err)) return false;
        throw err;
      }
    } else {
      resource = guessResource(ref.kind);
    }
    for (const name of signerNames(resource, ref.group, namespaced, cr)) {
      if (await this.#allowed(name)) return true;
    }
    return false;
  }

  async #allowed(name: string): Promise<boolean> {
    const known = this.#answers.get(name);
    if (known && this.#now() - known.at < SIGNER_ANSWER_TTL_MS) return known.allowed;
    const review = await this.#client
      .resource<KubeObject & { status?: { allowed?: boolean } }>(SELF_SUBJECT_ACCESS_REVIEWS)
      .create(undefined, {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: {
          resourceAttributes: { group: 'cert-manager.io', resource: 'signers', verb: 'approve', name },
        },
      } as KubeObject);
    const allowed = review.status?.allowed === true;
    if (this.#answers.size > 1000) this.#answers.clear();
    this.#answers.set(name, { allowed, at: this.#now() });
    return allowed;
  }
}
