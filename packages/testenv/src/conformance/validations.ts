/**
 * The validations cert-manager's conformance suite applies to every issued Certificate
 * (`test/e2e/framework/helper/validation`), as functions returning failure
 * messages rather than throwing, so one run reports every broken property at once.
 *
 * Default set: DNS names, organization, valid X.509, private key vs spec, basicConstraints, status.notAfter,
 * Secret keys, certificate-name annotation, additional output formats, Ready observedGeneration.
 * Feature set (all supported by the SelfSigned and CA issuers): common name, URIs, emails, IPs, duration
 * (±30 s), trust chain against ca.crt (node:crypto and `openssl verify`), ca.crt is a root.
 */

import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { parseGoDuration, toMilliseconds } from '@certkit/apimachinery';
import type { Certificate } from '@certkit/certificates/api/types';
import { opensslUnavailable, opensslVerify } from './openssl.ts';
import {
  canonicalIp,
  type CertificateView,
  firstPemBlockDer,
  Oid,
  parseRfc4514,
  pemCertificates,
  viewCertificate,
} from './x509-view.ts';

export const CERTIFICATE_NAME_ANNOTATION = 'cert-manager.io/certificate-name';
export const DEFAULT_DURATION_MS = 90 * 24 * 3600_000;
export const DURATION_FUZZ_MS = 30_000;
const SECRET_KEYS = ['tls.key', 'tls.crt', 'ca.crt', 'key.der', 'tls-combined.pem'];
const ANY_EKU = '2.5.29.37.0';

/** What a check sees: the Certificate as it was when Ready, its Secret, and the decoded leaf. */
export interface Issued {
  certificate: Certificate;
  secret: Secret;
  /** Decoded Secret data (UTF-8 text; key.der stays bytes in `raw`). */
  data: Record<string, string>;
  raw: Record<string, Buffer>;
  /** The leaf (first certificate of tls.crt), when tls.crt parses. */
  leaf?: X509Certificate;
  view?: CertificateView;
  chainPems: string[];
}

export type Check = (issued: Issued) => string[];

export function inspectSecret(certificate: Certificate, secret: Secret): Issued {
  const raw: Record<string, Buffer> = {};
  const data: Record<string, string> = {};
  for (const [key, b64] of Object.entries(secret.data ?? {})) {
    raw[key] = Buffer.from(b64 ?? '', 'base64');
    data[key] = raw[key].toString('utf8');
  }
  const chainPems =
    (data['tls.crt'] ?? '').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g) ?? [];
  const issued: Issued = { certificate, secret, data, raw, chainPems };
  try {
    issued.leaf = new X509Certificate(chainPems[0] ?? '');
    issued.view = viewCertificate(issued.leaf.raw);
  } catch {
    // Reported by the X.509 validity check.
  }
  return issued;
}

const sorted = (values: readonly string[] | undefined) => [...(values ?? [])].sort();
const sameUnsorted = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const show = (values: readonly string[] | undefined) => JSON.stringify(values ?? []);

function requireLeaf(issued: Issued): issued is Issued & { leaf: X509Certificate; view: CertificateView } {
  return issued.leaf !== undefined && issued.view !== undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Default validations

export const expectDnsNamesToMatch: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const have = new Set(issued.view.dnsNames);
  const missing = (issued.certificate.spec.dnsNames ?? []).filter((n) => !have.has(n));
  return missing.length
    ? [
        `DNS names: want a superset of ${show(issued.certificate.spec.dnsNames)}, got ${show(issued.view.dnsNames)}`,
      ]
    : [];
};

export const expectOrganizationToMatch: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const spec = issued.certificate.spec;
  const want = [...(spec.subject?.organizations ?? [])];
  if (spec.literalSubject) {
    for (const rdn of parseRfc4514(spec.literalSubject))
      for (const atv of rdn)
        if (atv.type.toUpperCase() === 'O' || atv.type === Oid.organization) want.push(atv.value);
  }
  const have = issued.view.subject
    .flat()
    .filter((a) => a.oid === Oid.organization)
    .map((a) => a.value);
  return sameUnsorted(have, want) ? [] : [`Organization: want ${show(want)}, got ${show(have)}`];
};

export const expectValidCertificate: Check = (issued) => {
  if (!issued.data['tls.crt']) return ['X.509: no tls.crt in the Secret'];
  if (!issued.chainPems.length) return ['X.509: tls.crt holds no CERTIFICATE block'];
  const failures: string[] = [];
  issued.chainPems.forEach((pem, i) => {
    try {
      const x509 = new X509Certificate(pem);
      viewCertificate(x509.raw);
    } catch (err) {
      failures.push(`X.509: certificate ${i} of tls.crt does not parse: ${(err as Error).message}`);
    }
  });
  return failures;
};

const EC_CURVES: Record<number, string> = { 256: 'prime256v1', 384: 'secp384r1', 521: 'secp521r1' };

export const expectValidPrivateKeyData: Check = (issued) => {
  const pem = issued.data['tls.key'];
  if (!pem) return ['private key: no tls.key in the Secret'];
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (err) {
    return [`private key: tls.key does not parse: ${(err as Error).message}`];
  }
  const spec = issued.certificate.spec.privateKey ?? {};
  const algorithm = spec.algorithm ?? 'RSA';
  const encoding = spec.encoding ?? 'PKCS1';
  const failures: string[] = [];
  const details = key.asymmetricKeyDetails ?? {};
  const header = /-----BEGIN ([A-Z ]+)-----/.exec(pem)?.[1];
  if (algorithm === 'RSA') {
    const size = spec.size ?? 2048;
    if (key.asymmetricKeyType !== 'rsa') failures.push(`private key: want RSA, got ${key.asymmetricKeyType}`);
    else if (details.modulusLength !== size)
      failures.push(`private key: want RSA ${size}, got RSA ${details.modulusLength}`);
    const wantHeader = encoding === 'PKCS1' ? 'RSA PRIVATE KEY' : 'PRIVATE KEY';
    if (header !== wantHeader) failures.push(`private key: ${encoding} RSA key as "${header}" PEM`);
  } else if (algorithm === 'ECDSA') {
    const curve = EC_CURVES[spec.size ?? 256];
    if (key.asymmetricKeyType !== 'ec')
      failures.push(`private key: want ECDSA, got ${key.asymmetricKeyType}`);
    else if (details.namedCurve !== curve)
      failures.push(`private key: want curve ${curve}, got ${details.namedCurve}`);
    const wantHeader = encoding === 'PKCS1' ? 'EC PRIVATE KEY' : 'PRIVATE KEY';
    if (header !== wantHeader) failures.push(`private key: ${encoding} ECDSA key as "${header}" PEM`);
  } else if (algorithm === 'Ed25519') {
    if (key.asymmetricKeyType !== 'ed25519')
      failures.push(`private key: want Ed25519, got ${key.asymmetricKeyType}`);
    if (header !== 'PRIVATE KEY') failures.push(`private key: Ed25519 key as "${header}" PEM (want PKCS#8)`);
  } else {
    failures.push(`private key: unknown spec algorithm ${algorithm}`);
  }
  if (issued.leaf && !issued.leaf.checkPrivateKey(key))
    failures.push('private key: tls.key does not match the public key of tls.crt');
  return failures;
};

export const expectValidBasicConstraints: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const want = issued.certificate.spec.isCA ?? false;
  const failures: string[] = [];
  if (issued.view.isCA !== want)
    failures.push(`basicConstraints: want isCA ${want}, got ${issued.view.isCA}`);
  if (issued.leaf.ca !== want)
    failures.push(`basicConstraints: node:crypto says ca=${issued.leaf.ca}, want ${want}`);
  return failures;
};

export const expectValidNotAfterDate: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const status = issued.certificate.status?.notAfter;
  if (!status) return ['status.notAfter: not set'];
  const have = Date.parse(status);
  const want = issued.leaf.validToDate.getTime();
  return have === want
    ? []
    : [
        `status.notAfter: ${status}, but the certificate's NotAfter is ${issued.leaf.validToDate.toISOString()}`,
      ];
};

export const expectValidKeysInSecret: Check = (issued) => {
  const present = SECRET_KEYS.filter((k) => k in (issued.secret.data ?? {}));
  return present.length >= 2
    ? []
    : [`Secret keys: want at least 2 of ${show(SECRET_KEYS)}, got ${show(present)}`];
};

export const expectValidAnnotations: Check = (issued) => {
  const value = issued.secret.metadata?.annotations?.[CERTIFICATE_NAME_ANNOTATION];
  const want = issued.certificate.metadata.name;
  return value === want ? [] : [`annotation ${CERTIFICATE_NAME_ANNOTATION}: want ${want}, got ${value}`];
};

export const expectValidAdditionalOutputFormats: Check = (issued) => {
  const failures: string[] = [];
  for (const format of issued.certificate.spec.additionalOutputFormats ?? []) {
    if (format.type === 'DER') {
      const der = issued.raw['key.der'];
      const want = firstPemBlockDer(issued.data['tls.key'] ?? '');
      if (!der) failures.push('additional output DER: no key.der in the Secret');
      else if (!want || !der.equals(want))
        failures.push('additional output DER: key.der is not the DER of tls.key');
    } else if (format.type === 'CombinedPEM') {
      const combined = issued.data['tls-combined.pem'];
      const want = `${issued.data['tls.key'] ?? ''}\n${issued.data['tls.crt'] ?? ''}`;
      if (combined === undefined)
        failures.push('additional output CombinedPEM: no tls-combined.pem in the Secret');
      else if (combined !== want)
        failures.push('additional output CombinedPEM: tls-combined.pem is not tls.key + "\\n" + tls.crt');
    } else {
      failures.push(`additional output: unknown format ${String(format.type)}`);
    }
  }
  return failures;
};

export const expectConditionReadyObservedGeneration: Check = (issued) => {
  const ready = issued.certificate.status?.conditions?.find((c) => c.type === 'Ready');
  const generation = issued.certificate.metadata.generation;
  return ready?.status === 'True' && ready.observedGeneration === generation
    ? []
    : [`Ready: want True at observedGeneration ${generation}, got ${JSON.stringify(ready)}`];
};

// ---------------------------------------------------------------------------------------------------------
// Feature validations

export const expectValidCommonName: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const want = issued.certificate.spec.commonName ?? '';
  const cns = issued.view.subject
    .flat()
    .filter((a) => a.oid === Oid.commonName)
    .map((a) => a.value);
  const have = cns.at(-1) ?? ''; // pkix.Name keeps the last CN
  if (!want && have) {
    const ips = issued.view.ipAddresses;
    return issued.view.dnsNames.includes(have) || ips.includes(canonicalIp(have))
      ? []
      : [`common name: none requested, got ${JSON.stringify(have)}, which is none of the DNS names or IPs`];
  }
  return want === have ? [] : [`common name: want ${JSON.stringify(want)}, got ${JSON.stringify(have)}`];
};

export const expectUrisToMatch: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const want = issued.certificate.spec.uris;
  return sameUnsorted(issued.view.uris, want)
    ? []
    : [`URIs: want ${show(want)}, got ${show(issued.view.uris)}`];
};

export const expectEmailsToMatch: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const want = issued.certificate.spec.emailAddresses;
  const have = issued.view.emailAddresses;
  return sameUnsorted(have, want) ? [] : [`emails: want ${show(want)}, got ${show(have)}`];
};

export const expectIpsToMatch: Check = (issued) => {
  if (!requireLeaf(issued)) return [];
  const want = (issued.certificate.spec.ipAddresses ?? []).map(canonicalIp);
  const have = issued.view.ipAddresses;
  const failures = sameUnsorted(have, want) ? [] : [`IPs: want ${show(want)}, got ${show(have)}`];
  for (const ip of issued.certificate.spec.ipAddresses ?? []) {
    if (issued.leaf.checkIP(ip) === undefined)
      failures.push(`IPs: node:crypto checkIP(${ip}) does not match`);
  }
  return failures;
};

export function expectDuration(wantMs: number, fuzzMs = DURATION_FUZZ_MS): Check {
  return (issued) => {
    if (!requireLeaf(issued)) return [];
    const have = issued.leaf.validToDate.getTime() - issued.leaf.validFromDate.getTime();
    return Math.abs(have - wantMs) <= fuzzMs
      ? []
      : [`duration: want ${wantMs / 1000}s ±${fuzzMs / 1000}s, got ${have / 1000}s`];
  };
}

export const expectDurationToMatch: Check = (issued) => {
  const spec = issued.certificate.spec.duration;
  return expectDuration(spec ? toMilliseconds(parseGoDuration(spec)) : DEFAULT_DURATION_MS)(issued);
};

/**
 * The leaf chains to a certificate of ca.crt (crypto/x509 Verify with ca.crt as roots and tls.crt as
 * intermediates, DNSName the first spec DNS name), checked with node:crypto: issuer names, signatures,
 * validity, the DNS name and Go's default server-auth EKU rule.
 */
export function verifyChainWithNode(issued: Issued, now = new Date()): string[] {
  if (!requireLeaf(issued)) return [];
  const caPem = issued.data['ca.crt'];
  if (!caPem) return ['trust chain: no ca.crt in the Secret'];
  let roots: X509Certificate[];
  let intermediates: X509Certificate[];
  try {
    roots = pemCertificates(caPem).map((der) => new X509Certificate(der));
    intermediates = issued.chainPems.slice(1).map((pem) => new X509Certificate(pem));
  } catch (err) {
    return [`trust chain: ${(err as Error).message}`];
  }
  if (!roots.length) return ['trust chain: ca.crt holds no certificate'];
  const failures: string[] = [];
  const leaf = issued.leaf;
  const dnsName = issued.certificate.spec.dnsNames?.[0];
  if (dnsName) {
    // X509_check_host will not take a wildcard as the name to check: check a name the wildcard covers.
    const host = dnsName.startsWith('*.') ? `wildcard-host${dnsName.slice(1)}` : dnsName;
    if (leaf.checkHost(host) === undefined) failures.push(`trust chain: leaf not valid for host ${host}`);
  }
  const ekus = leaf.keyUsage; // node:crypto's name for the ExtendedKeyUsage OIDs
  if (ekus?.length && !ekus.includes(Oid.serverAuth) && !ekus.includes(ANY_EKU))
    failures.push(`trust chain: leaf EKUs ${show(ekus)} lack serverAuth (Go's default verify usage)`);

  let current = leaf;
  for (let depth = 0; ; depth++) {
    if (depth > 8) return [...failures, 'trust chain: longer than 8'];
    if (now < current.validFromDate || now > current.validToDate)
      failures.push(`trust chain: ${current.subject} not valid now`);
    const anchor = roots.find((r) => r.fingerprint256 === current.fingerprint256);
    if (anchor) {
      if (current.subject === current.issuer && !current.verify(current.publicKey))
        failures.push(`trust chain: self-signed ${current.subject} has a bad signature`);
      return failures;
    }
    const parent = [...intermediates, ...roots].find(
      (p) => p.subject === current.issuer && current.verify(p.publicKey),
    );
    if (!parent) return [...failures, `trust chain: no issuer for ${current.subject} in tls.crt or ca.crt`];
    if (intermediates.includes(parent) && !parent.ca)
      failures.push(`trust chain: intermediate ${parent.subject} is not a CA`);
    current = parent;
  }
}

export function verifyChainWithOpenssl(issued: Issued): string[] {
  if (opensslUnavailable() || !issued.chainPems.length || !issued.data['ca.crt']) return [];
  const result = opensslVerify(issued.data['ca.crt'], issued.chainPems);
  return result.ok ? [] : [`trust chain: openssl verify failed: ${result.output.trim()}`];
}

export const expectCorrectTrustChain: Check = (issued) => [
  ...verifyChainWithNode(issued),
  ...verifyChainWithOpenssl(issued),
];

export const expectCaRootCertificate: Check = (issued) => {
  const caPem = issued.data['ca.crt'];
  if (!caPem) return ['ca.crt root: no ca.crt in the Secret'];
  const [der] = pemCertificates(caPem);
  if (!der) return ['ca.crt root: no certificate in ca.crt'];
  const view = viewCertificate(der);
  return view.subjectDer.equals(view.issuerDer)
    ? []
    : ['ca.crt root: subject and issuer differ (not a root)'];
};

export const DEFAULT_VALIDATIONS: Record<string, Check> = {
  expectDnsNamesToMatch,
  expectOrganizationToMatch,
  expectValidCertificate,
  expectValidPrivateKeyData,
  expectValidBasicConstraints,
  expectValidNotAfterDate,
  expectValidKeysInSecret,
  expectValidAnnotations,
  expectValidAdditionalOutputFormats,
  expectConditionReadyObservedGeneration,
};

export const FEATURE_VALIDATIONS: Record<string, Check> = {
  expectValidCommonName,
  expectUrisToMatch,
  expectEmailsToMatch,
  expectIpsToMatch,
  expectDurationToMatch,
  expectCorrectTrustChain,
  expectCaRootCertificate,
};

/** Every default and feature validation, plus `extra`; failures are prefixed with the check's name. */
export function validate(issued: Issued, extra: Record<string, Check> = {}): string[] {
  const failures: string[] = [];
  for (const [name, check] of Object.entries({ ...DEFAULT_VALIDATIONS, ...FEATURE_VALIDATIONS, ...extra })) {
    try {
      for (const failure of check(issued)) failures.push(`${name}: ${failure}`);
    } catch (err) {
      failures.push(`${name}: threw ${(err as Error).stack ?? err}`);
    }
  }
  return failures;
}
