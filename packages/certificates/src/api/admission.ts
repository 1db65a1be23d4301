import type { FieldError, KubeObject } from '@certkit/apimachinery';
import { ACME_GROUP, AcmeKinds } from './acme-constants.ts';
import type { Challenge, Order } from './acme-types.ts';
import { GROUP, Kinds } from './constants.ts';
import type { Certificate, CertificateRequest, ClusterIssuer, Issuer } from './types.ts';
import {
  recordRequester,
  type Requester,
  validateRequesterOnCreate,
  validateRequesterOnUpdate,
} from './validation/certificaterequest-identity.ts';
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
 *
 * `user` is the request's requester (the impersonated user when there is one), which a CertificateRequest
 * must name on create (certManagerMutation wrote it there). A write without one (a server without
 * authentication, the server's own writes) has no requester to compare with: that check is skipped.
 */
export function certManagerAdmission(
  group: string,
  kind: string,
  obj: KubeObject,
  old: KubeObject | undefined,
  subresource?: string,
  user?: Requester,
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
      return certificateRequestAdmission(
        obj as CertificateRequest,
        old as CertificateRequest | undefined,
        user,
      );
    case Kinds.Issuer:
      return validateIssuer(obj as Issuer, old as Issuer | undefined);
    case Kinds.ClusterIssuer:
      return validateClusterIssuer(obj as ClusterIssuer, old as ClusterIssuer | undefined);
    default:
      return [];
  }
}

/** Upstream's chain order: the identity plugin's errors, then the resource validation's. */
function certificateRequestAdmission(
  cr: CertificateRequest,
  old: CertificateRequest | undefined,
  user: Requester | undefined,
): FieldError[] {
  const identity = old ? validateRequesterOnUpdate(cr, old) : user ? validateRequesterOnCreate(cr, user) : [];
  return [...identity, ...validateCertificateRequest(cr, old)];
}

/**
 * cert-manager's mutating webhook, on create: a CertificateRequest records its requester in
 * `spec.username`, `spec.uid`, `spec.groups` and `spec.extra`, overwriting what the client sent.
 * Other kinds, and the other operations, are left alone (upstream mutates nothing else).
 */
export function certManagerMutation(group: string, kind: string, obj: KubeObject, user: Requester): void {
  if (group === GROUP && kind === Kinds.CertificateRequest) recordRequester(obj as CertificateRequest, user);
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
