/**
 * Runtime defaults, as cert-manager applies them in code (internal/apis/certmanager/v1/defaults.go,
 * SetRuntimeDefaults_Certificate, and the defaults its pki and controllers fall back on). The CRDs carry
 * no defaults, so what users wrote stays what is stored: these functions return a new object for the
 * controller to reason about and are never written back to the spec.
 *
 * Byte-compatibility note: cert-manager copies the user's `duration`, `usages` and `issuerRef` into the
 * CertificateRequests it creates, not the defaulted ones; build CertificateRequests from the stored spec.
 */

import type {
  Certificate,
  CertificatePrivateKey,
  CertificateRequest,
  IssuerReference,
  PrivateKeyAlgorithm,
} from './types.ts';
import { Defaults } from './constants.ts';

/** issuerRef with kind and group filled in (SetObjectDefaults_Certificate / _CertificateRequest). */
export function defaultIssuerRef(ref: IssuerReference): Required<IssuerReference> {
  return {
    name: ref.name,
    kind: ref.kind || Defaults.issuerKind,
    group: ref.group || Defaults.issuerGroup,
  };
}

/** The key size used when none is given; Ed25519 keys have no size. */
export function defaultKeySize(algorithm: PrivateKeyAlgorithm): number | undefined {
  if (algorithm === 'RSA') return Defaults.rsaKeySize;
  if (algorithm === 'ECDSA') return Defaults.ecdsaKeySize;
  return undefined;
}

export function defaultPrivateKey(key: CertificatePrivateKey | undefined): CertificatePrivateKey {
  const algorithm = key?.algorithm || Defaults.privateKeyAlgorithm;
  const defaulted: CertificatePrivateKey = {
    rotationPolicy: key?.rotationPolicy || Defaults.rotationPolicy,
    // Ed25519 keys are always written as PKCS#8 whatever this says (the key encoder's business).
    encoding: key?.encoding || Defaults.privateKeyEncoding,
    algorithm,
  };
  const size = key?.size || defaultKeySize(algorithm);
  if (size !== undefined) defaulted.size = size;
  return defaulted;
}

/**
 * The Certificate the controller acts on: issuerRef kind/group, privateKey (rotationPolicy Always,
 * algorithm RSA, size 2048 / 256, encoding PKCS1), duration 90 days, revisionHistoryLimit 1, usages
 * `digital signature` + `key encipherment`, encodeUsagesInRequest true. renewBefore is left unset: its
 * default (a third of the issued certificate's actual lifetime) depends on the certificate, not the spec.
 */
export function applyCertificateDefaults(cert: Certificate): Certificate {
  const copy = structuredClone(cert);
  const spec = copy.spec;
  spec.issuerRef = defaultIssuerRef(spec.issuerRef ?? { name: '' });
  spec.privateKey = defaultPrivateKey(spec.privateKey);
  spec.duration ||= Defaults.duration;
  spec.revisionHistoryLimit ??= Defaults.revisionHistoryLimit;
  if (!spec.usages?.length) spec.usages = [...Defaults.usages];
  spec.encodeUsagesInRequest ??= true;
  return copy;
}

export function applyCertificateRequestDefaults(cr: CertificateRequest): CertificateRequest {
  const copy = structuredClone(cr);
  copy.spec.issuerRef = defaultIssuerRef(copy.spec.issuerRef ?? { name: '' });
  return copy;
}
