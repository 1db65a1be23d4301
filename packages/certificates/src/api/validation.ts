/**
 * What cert-manager's validating webhook checks, as functions over plain objects answering field errors
 * with upstream's paths and details. An empty list means valid. Render them as kube-apiserver would with
 * `newInvalid(GROUP, kind, name, errors)` from @certkit/apimachinery.
 */

export { validateCertificate, validateCertificateSpec, validateIssuerRef } from './validation/certificate.ts';
export {
  validateApprovalConditions,
  validateCertificateRequest,
  validateCertificateRequestSpec,
  validateCertificateRequestStatusUpdate,
} from './validation/certificaterequest.ts';
export { validateClusterIssuer, validateIssuer, validateIssuerSpec } from './validation/issuer.ts';
export { validateACMEIssuer } from './validation/acme-issuer.ts';
export {
  validateChallenge,
  validateOrder,
  validateOrderSpecUpdate,
  validateOrderStatusUpdate,
} from './validation/acme-order.ts';
