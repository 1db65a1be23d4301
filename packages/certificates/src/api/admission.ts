import type { FieldError, KubeObject } from '@certkit/apimachinery';
import { ACME_GROUP, AcmeKinds } from './acme-constants.ts';
import type { Challenge, Order } from './acme-types.ts';
import { GROUP, Kinds } from './constants.ts';
import type { Certificate, CertificateRequest, ClusterIssuer, Issuer } from './types.ts';
import { validateChallenge, validateOrder } from './validation/acme-order.ts';
import {
  validateCertificate,
  validateCertificateRequest,
  validateCertificateRequestStatusUpdate,
  validateClusterIssuer,
  validateIssuer,
} from './validation.ts';

/**
 * cert-manager's validating webhook as an admission function: on certkit's own API server invalid
 * cert-manager.io objects are refused with 422 and field paths, as the webhook refuses them in a real cluster.
 * acme.cert-manager.io Orders and Challenges are judged on update only, main resource and status alike
 * (an Order's status is where its immutable fields are). Other kinds are admitted untouched.
 *
 * The webhook is registered for every subresource, so status updates come here too (`subresource`
 * "status"). A status update cannot change the spec or the metadata, so only what it can change is judged:
 * a CertificateRequest's Approved and Denied conditions. Re-validating a spec there would let a spec stored
 * before a rule existed (or written where no webhook ran) block the controller from reporting on it.
 */
export function certManagerAdmission(
  group: string,
  kind: string,
  obj: KubeObject,
  old: KubeObject | undefined,
  subresource?: string,
): FieldError[] {
  if (group === ACME_GROUP) return acmeAdmission(kind, obj, old, subresource);
  if (group !== GROUP) return [];
  if (subresource === 'status') {
    if (kind !== Kinds.CertificateRequest || !old) return [];
    return validateCertificateRequestStatusUpdate(obj as CertificateRequest, old as CertificateRequest);
  }
  if (subresource) return [];
  switch (kind) {
    case Kinds.Certificate:
      return validateCertificate(obj as Certificate, old as Certificate | undefined);
    case Kinds.CertificateRequest:
      return validateCertificateRequest(obj as CertificateRequest, old as CertificateRequest | undefined);
    case Kinds.Issuer:
      return validateIssuer(obj as Issuer, old as Issuer | undefined);
    case Kinds.ClusterIssuer:
      return validateClusterIssuer(obj as ClusterIssuer, old as ClusterIssuer | undefined);
    default:
      return [];
  }
}

function acmeAdmission(
  kind: string,
  obj: KubeObject,
  old: KubeObject | undefined,
  subresource: string | undefined,
): FieldError[] {
  if (subresource && subresource !== 'status') return [];
  switch (kind) {
    case AcmeKinds.Order:
      return validateOrder(obj as Order, old as Order | undefined);
    case AcmeKinds.Challenge:
      return validateChallenge(obj as Challenge, old as Challenge | undefined);
    default:
      return [];
  }
}
