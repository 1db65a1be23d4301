/**
 * kube-apiserver's CertificateApproval and CertificateSigning admission plugins: who may approve or deny a
 * CertificateSigningRequest, and who may write its certificate, is decided per signer. An update through the
 * `approval` subresource needs the verb `approve` on `certificates.k8s.io` `signers` named by the request's
 * signerName; a `status` update that changes `status.certificate` needs `sign` there. Either is also granted
 * by the same verb on the signer's domain with a `*` path (`example.com/*`), as kube's
 * IsAuthorizedForSignerName allows. The signerName is read from the stored object: an update cannot name
 * another signer to get past the check. Refusals are 403s, worded as kube's admission.NewForbidden.
 */

import { newForbidden, type StoredObject } from '@certkit/apimachinery';
import type { ResourceDefinition } from '../registry/resource.ts';
import type { UserInfo } from '../security/user.ts';
import type { Authorizer } from './authorizer.ts';

const CERTIFICATES_GROUP = 'certificates.k8s.io';

export class CertificateSigningAdmission {
  private readonly authorizer: Authorizer;

  constructor(authorizer: Authorizer) {
    this.authorizer = authorizer;
  }

  /** The registry's admission hook for CertificateSigningRequests: throws 403 when the writer may not. */
  check(
    def: ResourceDefinition,
    obj: StoredObject,
    old: StoredObject | undefined,
    subresource: string | undefined,
    user: UserInfo | undefined,
  ): void {
    if (def.group !== CERTIFICATES_GROUP || def.resource !== 'certificatesigningrequests') return;
    // The server's own writes carry no user; creates are not these plugins' business.
    if (!old || !user) return;
    const signerName = ((old.spec as { signerName?: string } | undefined)?.signerName ?? '') as string;
    const name = old.metadata.name ?? '';
    if (subresource === 'approval') {
      if (!this.authorizedForSigner(user, 'approve', signerName))
        throw forbidden(name, `user not permitted to approve requests with signerName "${signerName}"`);
      return;
    }
    if (subresource !== 'status') return;
    const certificate = (o: StoredObject) =>
      (o.status as { certificate?: string } | undefined)?.certificate ?? '';
    if (certificate(obj) === certificate(old)) return;
    if (!this.authorizedForSigner(user, 'sign', signerName))
      throw forbidden(name, `user not permitted to sign requests with signerName "${signerName}"`);
  }

  /** The verb on the signer itself, or on every signer of its domain (`<domain>/*`). */
  private authorizedForSigner(user: UserInfo, verb: string, signerName: string): boolean {
    if (this.allowed(user, verb, signerName)) return true;
    const slash = signerName.indexOf('/');
    return slash > 0 && this.allowed(user, verb, `${signerName.slice(0, slash)}/*`);
  }

  private allowed(user: UserInfo, verb: string, name: string): boolean {
    return this.authorizer.authorize({
      user,
      verb,
      resourceRequest: true,
      path: '',
      apiGroup: CERTIFICATES_GROUP,
      apiVersion: '*',
      resource: 'signers',
      subresource: '',
      namespace: '',
      name,
    }).allowed;
  }
}

function forbidden(name: string, why: string) {
  return newForbidden(`certificatesigningrequests.${CERTIFICATES_GROUP} "${name}" is forbidden: ${why}`);
}
