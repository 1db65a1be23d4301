import type { KubeObject } from '@certkit/apimachinery';
import type { Client, ResourceRef } from '@certkit/runtime';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.d.ts';
import { GROUP } from '../../api/constants.ts';

/**
 * Whether the requester of a CSR may use a namespaced Issuer: anyone may create a CSR naming any signer, so a
 * namespaced Issuer would otherwise sign for users with no business in its namespace. As cert-manager does,
 * the signer asks the API server with a SubjectAccessReview for the requester (spec.username, groups, extra,
 * uid, which the API server wrote at create) on verb `reference` of `signers` in group cert-manager.io, in
 * the Issuer's namespace, named after the Issuer, then on `*`. ClusterIssuers need no such check.
 */

export const subjectAccessReviewsRef: ResourceRef = {
  group: 'authorization.k8s.io',
  version: 'v1',
  resource: 'subjectaccessreviews',
  kind: 'SubjectAccessReview',
  namespaced: false,
};

interface SubjectAccessReview extends KubeObject {
  status?: { allowed?: boolean };
}

/** True when allowed; rejects when the API server cannot answer (the reconcile then retries). */
export async function requesterMayReference(
  client: Client,
  csr: CertificateSigningRequest,
  issuerNamespace: string,
  issuerName: string,
): Promise<boolean> {
  const reviews = client.resource<SubjectAccessReview>(subjectAccessReviewsRef);
  for (const name of [issuerName, '*']) {
    const answer = await reviews.create(undefined, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: csr.spec.username,
        groups: csr.spec.groups,
        extra: csr.spec.extra,
        uid: csr.spec.uid,
        resourceAttributes: {
          group: GROUP,
          resource: 'signers',
          verb: 'reference',
          namespace: issuerNamespace,
          name,
          version: '*',
        },
      },
    });
    if (answer.status?.allowed) return true;
  }
  return false;
}
