import type { KeyObject } from 'node:crypto';
import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import { Annotations, Defaults } from '../../../api/constants.ts';
import { applyCertificateDefaults } from '../../../api/defaults.ts';
import type { Certificate } from '../../../api/types.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  signCertificate,
} from '../../../pki/index.ts';
import type { ControllerContext } from '../../context.ts';
import { ISSUING_CONTROLLER } from './controller-name.ts';
import { rememberPrivateKey } from '../../parsed.ts';
import {
  evaluate,
  SecretDoesNotExist,
  SecretIsMissingData,
  SecretPublicKeysDiffer,
} from '../shared/policies.ts';
import { writeIssuedSecret } from './secret.ts';

/**
 * The temporary certificate (annotation `cert-manager.io/issue-temporary-certificate: "true"`, issuing/
 * temporary.go): while an issuance waits for its CertificateRequest, a Secret that is missing or holds no
 * usable key pair gets the next private key with a certificate from a throwaway CA, so that workloads
 * mounting it can start. The real certificate replaces it when the request is signed; until then the
 * Secret's issuer annotations do not match and the Certificate is not Ready.
 */

/** NewTemporaryCertificatePolicyChain: a violation means the Secret has no usable key pair. */
const TEMPORARY_CERTIFICATE_CHAIN = [SecretDoesNotExist, SecretIsMissingData, SecretPublicKeysDiffer];

/** cert-manager's fixed subject serial number, which marks a temporary certificate. */
export const TEMPORARY_SERIAL_NUMBER = '1234567890';

/** The throwaway CA's common name. */
export const TEMPORARY_CA_COMMON_NAME = 'cert-manager.local';

export function wantsTemporaryCertificate(cert: Certificate): boolean {
  return cert.metadata.annotations?.[Annotations.issueTemporaryCertificate] === 'true';
}

/**
 * GenerateLocallySignedTemporaryCertificate: a fresh ECDSA P-521 CA, used once and discarded, signs a
 * certificate for the Certificate's spec (subject serial number 1234567890) and `key`. Returns its PEM.
 */
export async function temporaryCertificatePem(cert: Certificate, key: KeyObject): Promise<string> {
  const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 521 });
  const caSpec = { commonName: TEMPORARY_CA_COMMON_NAME, isCA: true };
  const ca = await signCertificate({
    csrPem: await buildCertificateRequest(caSpec, caKey),
    duration: Defaults.durationMs,
    isCA: true,
    issuer: { selfSignedKey: caKey },
  });
  const spec = applyCertificateDefaults(cert).spec;
  const leafSpec = { ...spec, subject: { ...spec.subject, serialNumber: TEMPORARY_SERIAL_NUMBER } };
  const leaf = await signCertificate({
    csrPem: await buildCertificateRequest(leafSpec, key),
    duration: spec.duration ? toMilliseconds(parseGoDuration(spec.duration)) : Defaults.durationMs,
    isCA: spec.isCA ?? false,
    usages: spec.usages,
    issuer: { certPem: ca.certPem, key: caKey },
  });
  return leaf.certPem;
}

/**
 * ensureTemporaryCertificate: writes a temporary certificate with `key` when the Certificate asks for one and
 * its Secret has no usable key pair. Returns whether it wrote one.
 */
export async function ensureTemporaryCertificate(
  ctx: ControllerContext,
  cert: Certificate,
  key: KeyObject,
  signal: AbortSignal,
): Promise<boolean> {
  if (!wantsTemporaryCertificate(cert)) return false;
  const namespace = cert.metadata.namespace ?? '';
  const secret = await ctx.secrets.get(namespace, cert.spec.secretName);
  if (!evaluate(TEMPORARY_CERTIFICATE_CHAIN, { certificate: cert, secret, now: ctx.now() })) return false;

  const privateKey = encodePrivateKey(key, cert.spec.privateKey?.encoding ?? 'PKCS1');
  rememberPrivateKey(privateKey, key);
  const contents = { privateKey, certificate: await temporaryCertificatePem(cert, key) };
  // cert-manager writes the temporary Secret as any other, keystores included.
  await writeIssuedSecret(ctx, cert, contents, { certificateName: cert.metadata.name }, signal);
  ctx.recorder.from(ISSUING_CONTROLLER).normal(cert, 'Issuing', 'Issued temporary certificate');
  return true;
}
