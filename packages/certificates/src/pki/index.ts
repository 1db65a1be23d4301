export { defaultSignatureAlgorithm, signatureAlgorithmFor, type SignatureAlgorithm } from './algorithms.ts';
export { buildPemBundle, type PemBundle } from './chain.ts';
export {
  buildCertificateRequest,
  parseCertificateRequest,
  verifyCertificateRequest,
  type CertificateRequestSpec,
  type CertificateRequestView,
} from './csr.ts';
export { joinWithEscapeCsv } from './csv.ts';
export {
  additionalOutputData,
  COMBINED_PEM_KEY,
  combinedPem,
  DER_KEY,
  joinCertificateChain,
  privateKeyDer,
  splitCertificateChain,
  type AdditionalOutputFormat,
} from './encodings.ts';
export {
  certificateMatchesKey,
  encodedCertificateInfo,
  parseCertificate,
  SecretAnnotation,
  secretAnnotationsFor,
  type CertificateInfo,
  type CertificateNames,
} from './inspect.ts';
export {
  encodePrivateKey,
  generatePrivateKey,
  keyMatchesSpec,
  keySize,
  parsePrivateKey,
  privateKeyAlgorithm,
  privateKeySpecViolations,
  keyTraitsSpecViolations,
  type KeyTraits,
  publicKeyOf,
  publicKeysEqual,
  subjectPublicKeyInfo,
  type PrivateKeyAlgorithm,
  type PrivateKeyEncoding,
  type PrivateKeySpec,
} from './keys.ts';
export {
  encodeRdnSequence,
  formatRdnSequence,
  parseLiteralSubject,
  type DistinguishedName,
  type RdnSequence,
  type X509Subject,
} from './names.ts';
export { UPN_OID, type OtherName } from './sans.ts';
export { type DecodedCertificate } from './certificate-der.ts';
export {
  signCertificate,
  SigningError,
  type CertificateIssuer,
  type SignCertificateOptions,
  type SignedCertificate,
  type SigningFailure,
} from './sign.ts';
export { DEFAULT_USAGES, keyUsagesFor, kubeUsageStrings } from './usages.ts';
