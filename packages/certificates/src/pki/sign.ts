/**
 * Signs a CSR as cert-manager's SelfSigned and CA issuers do (CertificateTemplateFromCertificateRequest, then
 * SignCertificate / SignCSRTemplate): subject, SANs and name constraints come from the CSR; lifetime, usages
 * and basic constraints come from the CertificateRequest, checked against any the CSR itself asks for.
 */

import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { defaultSignatureAlgorithm, verifySignature } from './algorithms.ts';
import { decodeCertificateDer, decodeCertificatePems, type DecodedCertificate } from './certificate-der.ts';
import { buildPemBundle, orderChain, type OrderedChain, pemBundleOf, type PemBundle } from './chain.ts';
import { decodeCertificateRequestPem, type DecodedCertificateRequest } from './csr.ts';
import {
  decodeBasicConstraints,
  decodeSubjectKeyIdentifier,
  encodeAuthorityInfoAccess,
  encodeAuthorityKeyIdentifier,
  encodeBasicConstraints,
  encodeCrlDistributionPoints,
  encodeSubjectKeyIdentifier,
  ExtensionOid,
  findExtension,
  keyIdentifier,
  type Extension,
} from './extensions.ts';
import { publicKeysEqual } from './keys.ts';
import { reencodeNameConstraints } from './name-constraints.ts';
import { isEmptyName } from './names.ts';
import { encodePem } from './pem.ts';
import {
  decodeExtKeyUsage,
  decodeKeyUsage,
  encodeExtKeyUsage,
  encodeKeyUsage,
  extKeyUsageNames,
  isKnownExtKeyUsage,
  keyUsageNames,
  keyUsagesFor,
  type KeyUsages,
} from './usages.ts';
import { encodeTbsCertificate, signDer } from './x509-encode.ts';

export type CertificateIssuer =
  /** A CA issuer: `certPem` is the CA's certificate first, optionally followed by the rest of its chain. */
  | { certPem: string; key: KeyObject }
  /** A SelfSigned issuer: the key named by the CertificateRequest's private-key-secret-name annotation. */
  | { selfSignedKey: KeyObject };

export interface SignCertificateOptions {
  csrPem: string;
  /** Requested lifetime in milliseconds (the CertificateRequest's duration, already defaulted). */
  duration: number;
  isCA: boolean;
  /** The CertificateRequest's usages; empty or absent means "digital signature", "key encipherment". */
  usages?: readonly string[];
  issuer: CertificateIssuer;
  crlDistributionPoints?: readonly string[];
  ocspServers?: readonly string[];
  issuingCertificateURLs?: readonly string[];
  now?: Date;
  /**
   * The caller has verified the CSR's signature and found it valid (the signers do, with the webhook's check
   * of the request just before: api/validation/csr.ts), so it is not verified again. The CSR is still
   * decoded and checked for everything else.
   */
  csrSignatureVerified?: boolean;
}

/** `certPem` is what goes into CertificateRequest.status.certificate (leaf + intermediates), `caPem` into .ca. */
export interface SignedCertificate {
  certPem: string;
  caPem: string;
  /** The issued certificate (the first of certPem), decoded: encodedCertificateInfo reads it without OpenSSL. */
  leaf: DecodedCertificate;
}

/**
 * Why signing failed: `InvalidRequest` (the CSR or the request's fields are unusable), `KeyMismatch` (the
 * self-signed key is not the CSR's key), `InvalidIssuer` (the CA certificate or key cannot sign).
 */
export type SigningFailure = 'InvalidRequest' | 'KeyMismatch' | 'InvalidIssuer';

export class SigningError extends Error {
  readonly reason: SigningFailure;

  constructor(reason: SigningFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SigningError';
    this.reason = reason;
  }
}

function quoted(names: readonly string[]): string {
  return names.length ? `[ ${names.map((name) => `'${name}'`).join(', ')} ]` : '[]';
}

/**
 * CertificateTemplateValidateAndOverride{BasicConstraints,KeyUsages}: whatever the CSR encodes must agree with
 * the request's isCA and usages. Returns the CSR's unknown EKUs, which Go carries into the certificate.
 */
function checkRequestedConstraints(
  csr: DecodedCertificateRequest,
  isCA: boolean,
  expected: KeyUsages,
): string[] {
  const bc = findExtension(csr.extensions, ExtensionOid.basicConstraints);
  if (bc) {
    const requested = decodeBasicConstraints(bc.value).isCA;
    if (requested !== isCA) {
      throw new SigningError(
        'InvalidRequest',
        `encoded CSR error: IsCA ${requested} does not match expected value ${isCA}`,
      );
    }
  }
  const ku = findExtension(csr.extensions, ExtensionOid.keyUsage);
  const eku = findExtension(csr.extensions, ExtensionOid.extKeyUsage);
  const requestedEkus = eku ? decodeExtKeyUsage(eku.value) : [];
  if (ku || eku) {
    const requestedKu = ku ? decodeKeyUsage(ku.value) : 0;
    if (requestedKu !== expected.keyUsage) {
      throw new SigningError(
        'InvalidRequest',
        `encoded CSR error: the KeyUsages ${quoted(keyUsageNames(requestedKu))} do not match the expected KeyUsages ${quoted(keyUsageNames(expected.keyUsage))}`,
      );
    }
    const known = requestedEkus.filter(isKnownExtKeyUsage);
    if (
      known.length !== expected.extKeyUsages.length ||
      known.some((oid, i) => oid !== expected.extKeyUsages[i])
    ) {
      throw new SigningError(
        'InvalidRequest',
        `encoded CSR error: the ExtKeyUsages ${quoted(extKeyUsageNames(known))} do not match the expected ExtKeyUsages ${quoted(extKeyUsageNames(expected.extKeyUsages))}`,
      );
    }
  }
  return requestedEkus.filter((oid) => !isKnownExtKeyUsage(oid));
}

/**
 * The CSR's Name Constraints as the certificate carries them. Go parses them into the template and writes
 * them again, so a malformed extension fails the signing instead of being copied into a CA certificate.
 */
function requestedNameConstraints(csr: DecodedCertificateRequest): Extension | undefined {
  const extension = findExtension(csr.extensions, ExtensionOid.nameConstraints);
  if (!extension) return undefined;
  try {
    return reencodeNameConstraints(extension);
  } catch (err) {
    throw new SigningError('InvalidRequest', (err as Error).message, { cause: err });
  }
}

interface ResolvedIssuer {
  key: KeyObject;
  /** DER Name written as the certificate's issuer. */
  name: Buffer;
  /** The issuer's SubjectKeyIdentifier, for the AuthorityKeyIdentifier. */
  keyId?: Buffer;
  /** The CA's certificates (signing CA first), absent for self-signed. */
  chain?: DecodedCertificate[];
  /** The CA's certificates ordered into their chain, or why they form none. */
  ordered?: OrderedChain | Error;
}

/**
 * A CA issuer as every signing with it needs it, worked out once per key and certificate PEM (or the
 * SigningError saying why it cannot sign): a CA signs hundreds of certificates with the same pair, and
 * decoding its chain, matching its key and verifying its self-signature each time was a good part of a
 * signing's cost. The key objects come from the CA Secret cache, so the WeakMap drops an entry with them.
 */
const preparedCas = new WeakMap<KeyObject, { certPem: string; ca: ResolvedIssuer | SigningError }>();

function preparedCa(certPem: string, key: KeyObject): ResolvedIssuer {
  let entry = preparedCas.get(key);
  if (entry?.certPem !== certPem) {
    let ca: ResolvedIssuer | SigningError;
    try {
      ca = prepareCa(certPem, key);
    } catch (err) {
      if (!(err instanceof SigningError)) throw err;
      ca = err;
    }
    preparedCas.set(key, (entry = { certPem, ca }));
  }
  if (entry.ca instanceof SigningError) throw entry.ca;
  return entry.ca;
}

function prepareCa(certPem: string, key: KeyObject): ResolvedIssuer {
  let chain: DecodedCertificate[];
  try {
    chain = decodeCertificatePems(certPem);
  } catch (err) {
    throw new SigningError('InvalidIssuer', `failed to parse the CA certificate: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const ca = chain[0];
  if (!ca) throw new SigningError('InvalidIssuer', 'no CA certificate found in the issuer certificate PEM');
  const caKey = createPublicKey({ key: ca.publicKeyInfo, format: 'der', type: 'spki' });
  if (!publicKeysEqual(key, caKey)) {
    throw new SigningError('InvalidIssuer', "x509: provided PrivateKey doesn't match parent's PublicKey");
  }
  const bc = findExtension(ca.extensions, ExtensionOid.basicConstraints);
  if (!bc || !decodeBasicConstraints(bc.value).isCA) {
    throw new SigningError(
      'InvalidIssuer',
      'the issuer certificate is not a CA (basicConstraints CA:TRUE is missing)',
    );
  }
  let ordered: OrderedChain | Error;
  try {
    ordered = orderChain(chain);
  } catch (err) {
    ordered = err as Error;
  }
  const ski = findExtension(ca.extensions, ExtensionOid.subjectKeyIdentifier);
  return { key, name: ca.subject, keyId: ski && decodeSubjectKeyIdentifier(ski.value), chain, ordered };
}

function resolveIssuer(
  issuer: CertificateIssuer,
  csr: DecodedCertificateRequest,
  csrKey: () => KeyObject,
  now: Date,
): ResolvedIssuer {
  if ('selfSignedKey' in issuer) {
    if (!publicKeysEqual(issuer.selfSignedKey, csrKey())) {
      throw new SigningError(
        'KeyMismatch',
        "CSR not signed by referenced private key: the CSR's public key does not match the self-signed issuer's private key",
      );
    }
    return { key: issuer.selfSignedKey, name: csr.subject };
  }
  const ca = preparedCa(issuer.certPem, issuer.key);
  const notAfter = ca.chain![0].notAfter;
  if (notAfter.getTime() <= now.getTime()) {
    throw new SigningError('InvalidIssuer', `the CA certificate expired at ${notAfter.toISOString()}`);
  }
  return ca;
}

/**
 * The new certificate's chain as a Secret stores it. A leaf signed by the CA's first certificate extends the
 * CA's own chain when that starts there; otherwise the whole set is ordered again, which finds the same
 * chain or says why there is none.
 */
function issuedBundle(leaf: DecodedCertificate, issuer: ResolvedIssuer): PemBundle {
  const chain = issuer.chain!;
  const ordered = issuer.ordered;
  if (ordered && !(ordered instanceof Error) && ordered.chain[0] === chain[0]) {
    return pemBundleOf({ chain: [leaf, ...ordered.chain], topIsRoot: ordered.topIsRoot });
  }
  // The leaf was just signed with the key that resolveIssuer matched to chain[0], so its signature is known.
  return buildPemBundle([...chain, leaf], new Map([[leaf, chain[0]]]));
}

/** A uniformly random serial below 2^128 (Go's rand.Int(2^128)), never zero so that it is strictly positive. */
function randomSerial(): Buffer {
  for (;;) {
    const bytes = randomBytes(16);
    if (bytes.some((b) => b !== 0)) return bytes;
  }
}

/** RFC 5280 times end at 9999-12-31 (GeneralizedTime has four year digits). */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59);

/**
 * The certificate's extensions in the order Go's crypto/x509 writes them: KeyUsage, ExtKeyUsage,
 * BasicConstraints, SubjectKeyId, AuthorityKeyId, AuthorityInfoAccess, NameConstraints, CRL distribution
 * points, then the SAN extension copied from the CSR.
 */
function certificateExtensions(
  options: SignCertificateOptions,
  csr: DecodedCertificateRequest,
  usages: KeyUsages,
  unknownEkus: string[],
  nameConstraints: Extension | undefined,
  issuer: ResolvedIssuer,
): Extension[] {
  const extensions: Extension[] = [];
  if (usages.keyUsage) {
    extensions.push({ oid: ExtensionOid.keyUsage, critical: true, value: encodeKeyUsage(usages.keyUsage) });
  }
  const ekus = [...usages.extKeyUsages, ...unknownEkus];
  if (ekus.length)
    extensions.push({ oid: ExtensionOid.extKeyUsage, critical: false, value: encodeExtKeyUsage(ekus) });
  extensions.push({
    oid: ExtensionOid.basicConstraints,
    critical: true,
    value: encodeBasicConstraints(options.isCA),
  });
  // Go only invents a SubjectKeyId for CA certificates; RFC 5280 §4.2.1.2 asks for one on end-entity
  // certificates too, and tools that build chains by key id (openssl, browsers) use it, so every certificate
  // gets one, computed as Go computes it.
  extensions.push({
    oid: ExtensionOid.subjectKeyIdentifier,
    critical: false,
    value: encodeSubjectKeyIdentifier(keyIdentifier(csr.publicKeyInfo)),
  });
  // As Go: the issuer's key id, except on a self-issued certificate (issuer name = subject name).
  if (issuer.keyId && !issuer.name.equals(csr.subject)) {
    extensions.push({
      oid: ExtensionOid.authorityKeyIdentifier,
      critical: false,
      value: encodeAuthorityKeyIdentifier(issuer.keyId),
    });
  }
  const ocsp = options.ocspServers ?? [];
  const issuing = options.issuingCertificateURLs ?? [];
  if (ocsp.length || issuing.length) {
    extensions.push({
      oid: ExtensionOid.authorityInfoAccess,
      critical: false,
      value: encodeAuthorityInfoAccess(ocsp, issuing),
    });
  }
  if (nameConstraints) extensions.push(nameConstraints);
  if (options.crlDistributionPoints?.length) {
    extensions.push({
      oid: ExtensionOid.crlDistributionPoints,
      critical: false,
      value: encodeCrlDistributionPoints(options.crlDistributionPoints),
    });
  }
  const sans = findExtension(csr.extensions, ExtensionOid.subjectAltName);
  // Critical exactly when the subject is empty (RFC 5280 §4.2.1.6), whatever the CSR said.
  if (sans) extensions.push({ ...sans, critical: isEmptyName(csr.subject) });
  return extensions;
}

/** Issues a certificate for `options.csrPem`; throws a SigningError saying why it cannot. */
export async function signCertificate(options: SignCertificateOptions): Promise<SignedCertificate> {
  let csr: DecodedCertificateRequest;
  let csrKey: KeyObject | undefined;
  let signatureValid: boolean;
  try {
    csr = decodeCertificateRequestPem(options.csrPem);
    // Parsed at most once: the signature check and the self-signed key comparison both need it, and a CA
    // signing a request whose signature the caller verified needs neither.
    if (options.csrSignatureVerified) signatureValid = true;
    else {
      csrKey = createPublicKey({ key: csr.publicKeyInfo, format: 'der', type: 'spki' });
      signatureValid = verifySignature(csr.signatureAlgorithmOid, csr.info, csrKey, csr.signature);
    }
  } catch (err) {
    throw new SigningError('InvalidRequest', `failed to decode CSR: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (!signatureValid) throw new SigningError('InvalidRequest', 'CSR signature is invalid');
  if (!(options.duration > 0)) {
    throw new SigningError('InvalidRequest', `duration must be positive, got ${options.duration}ms`);
  }
  let usages: KeyUsages;
  try {
    usages = keyUsagesFor(options.usages, options.isCA);
  } catch (err) {
    throw new SigningError('InvalidRequest', (err as Error).message, { cause: err });
  }
  const unknownEkus = checkRequestedConstraints(csr, options.isCA, usages);
  const nameConstraints = requestedNameConstraints(csr);

  // cert-manager starts certificates at the moment of signing, without backdating.
  const now = options.now ?? new Date();
  const issuer = resolveIssuer(
    options.issuer,
    csr,
    () => (csrKey ??= createPublicKey({ key: csr.publicKeyInfo, format: 'der', type: 'spki' })),
    now,
  );
  let notAfter = new Date(now.getTime() + options.duration);
  // cert-manager lets a leaf outlive its CA (cert-manager#5864, still open); we cap it, because a certificate
  // whose chain has expired fails verification anyway, and its notAfter would make renewal come too late.
  const caNotAfter = issuer.chain?.[0].notAfter;
  if (caNotAfter && notAfter > caNotAfter) notAfter = caNotAfter;
  if (!(notAfter.getTime() <= LATEST_TIME)) {
    throw new SigningError(
      'InvalidRequest',
      `duration ${options.duration}ms ends the certificate after 9999-12-31, which X.509 cannot encode`,
    );
  }

  const algorithm = defaultSignatureAlgorithm(issuer.key);
  const tbs = encodeTbsCertificate(
    {
      serialNumber: randomSerial(),
      issuer: issuer.name,
      subject: csr.subject,
      notBefore: now,
      notAfter,
      publicKeyInfo: csr.publicKeyInfo,
      extensions: certificateExtensions(options, csr, usages, unknownEkus, nameConstraints, issuer),
    },
    algorithm,
  );
  const der = signDer(tbs, algorithm, issuer.key);
  const leaf = decodeCertificateDer(der);
  if (!issuer.chain) {
    const pem = encodePem('CERTIFICATE', der);
    return { certPem: pem, caPem: pem, leaf };
  }
  let bundle: PemBundle;
  try {
    bundle = issuedBundle(leaf, issuer);
  } catch (err) {
    throw new SigningError(
      'InvalidIssuer',
      `the CA certificates do not form a chain: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  return { certPem: bundle.chainPem, caPem: bundle.caPem, leaf };
}
