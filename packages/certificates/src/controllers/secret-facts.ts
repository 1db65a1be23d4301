import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../api/constants.ts';
import {
  keySize,
  privateKeyAlgorithm,
  type CertificateInfo,
  type CertificateNames,
  type KeyTraits,
  type PrivateKeyAlgorithm,
} from '../pki/index.ts';
import {
  digestToken,
  isDigestToken,
  publicKeyDigest,
  type DigestToken,
  type PublicKeyDigest,
} from './request-facts.ts';

/**
 * What the controller keeps of a certificate Secret in its cache: the facts the Certificate controllers decide
 * with, not the PEM (docs/adr/1140). The policies, readiness and the trigger compare the certificate's dates,
 * names and public key and the private key's algorithm, size and public key; the issuing controller derives
 * the Secret's annotations from the certificate's names. Those are kept, as two short texts in place of
 * `tls.crt` and `tls.key`; the few paths that need the bytes (writing the Secret, reusing its key, a signer
 * reading its own key) read the Secret live (`SecretGetter.getWithData`).
 */

/** A certificate (the leaf of `tls.crt`) as the controllers compare it. */
export interface CertificateFacts extends CertificateNames {
  notBefore: Date;
  notAfter: Date;
  publicKeyDigest: PublicKeyDigest;
  /** The digest of `tls.crt` as the Secret holds it (base64): equal to a request's `status.certificate`'s. */
  digest: DigestToken;
}

/** A private key as the controllers compare it: its shape (spec.privateKey) and its public key's digest. */
export interface KeyFacts extends KeyTraits {
  publicKeyDigest: PublicKeyDigest;
}

/**
 * The prefix of a facts text in a cached Secret's data. Never valid base64 (base64 has no ':'), so no reader
 * can take facts for bytes, and a Secret whose data came from the API server never holds one.
 */
const FACTS_PREFIX = 'facts:';

/** Whether a Secret data value holds facts rather than base64 bytes. */
export function isSecretFactsText(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(FACTS_PREFIX);
}

/** Whether `secret` is a cached copy holding facts in place of its certificate and key. */
export function isStrippedSecret(secret: Secret | undefined): boolean {
  return isSecretFactsText(secret?.data?.[SecretKeys.tlsCert]);
}

/** The facts of a parsed certificate; `tlsCrt` is the Secret's `tls.crt` (base64) it was parsed from. */
export function certificateFacts(info: CertificateInfo, tlsCrt: string): CertificateFacts {
  const { subject } = info;
  return {
    notBefore: info.notBefore,
    notAfter: info.notAfter,
    dnsNames: info.dnsNames,
    emailAddresses: info.emailAddresses,
    ipAddresses: info.ipAddresses,
    uris: info.uris,
    subject: {
      commonName: subject.commonName,
      serialNumber: subject.serialNumber,
      organizations: subject.organizations,
      organizationalUnits: subject.organizationalUnits,
      countries: subject.countries,
      provinces: subject.provinces,
      localities: subject.localities,
      postalCodes: subject.postalCodes,
      streetAddresses: subject.streetAddresses,
    },
    publicKeyDigest: publicKeyDigest(info.publicKey),
    digest: digestToken(tlsCrt),
  };
}

/** The facts of a parsed private key; an unsupported algorithm is kept as undefined (a spec violation). */
export function keyFacts(key: KeyObject): KeyFacts {
  let algorithm: PrivateKeyAlgorithm | undefined;
  try {
    algorithm = privateKeyAlgorithm(key);
  } catch {
    algorithm = undefined;
  }
  return { algorithm, size: algorithm && keySize(key), publicKeyDigest: publicKeyDigest(key) };
}

/** Empty lists and strings are left out of a facts text; they read back as these. */
const EMPTY: never[] = Object.freeze([]) as never[];

function withoutEmpty(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).filter(
      ([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0),
    ),
  );
}

/** A certificate's facts as the cached Secret's `tls.crt` carries them: the prefix and compact JSON. */
export function certificateFactsText(facts: CertificateFacts): string {
  const subject = withoutEmpty({ ...facts.subject });
  return (
    FACTS_PREFIX +
    JSON.stringify(
      withoutEmpty({
        ...facts,
        notBefore: facts.notBefore.getTime(),
        notAfter: facts.notAfter.getTime(),
        subject: Object.keys(subject).length ? subject : undefined,
      }),
    )
  );
}

/** The facts a certificateFactsText carries; throws on a text that is not one. */
export function readCertificateFactsText(text: string): CertificateFacts {
  const compact = JSON.parse(text.slice(FACTS_PREFIX.length)) as Record<string, unknown>;
  const subject = (compact.subject ?? {}) as Record<string, unknown>;
  const strings = (v: unknown) => (Array.isArray(v) ? (v as string[]) : EMPTY);
  const digest = compact.digest;
  if (
    typeof compact.notBefore !== 'number' ||
    typeof compact.notAfter !== 'number' ||
    !isDigestToken(digest)
  ) {
    throw new Error('not the facts of a certificate');
  }
  return {
    notBefore: new Date(compact.notBefore),
    notAfter: new Date(compact.notAfter),
    dnsNames: strings(compact.dnsNames),
    emailAddresses: strings(compact.emailAddresses),
    ipAddresses: strings(compact.ipAddresses),
    uris: strings(compact.uris),
    subject: {
      commonName: typeof subject.commonName === 'string' ? subject.commonName : '',
      serialNumber: typeof subject.serialNumber === 'string' ? subject.serialNumber : '',
      organizations: strings(subject.organizations),
      organizationalUnits: strings(subject.organizationalUnits),
      countries: strings(subject.countries),
      provinces: strings(subject.provinces),
      localities: strings(subject.localities),
      postalCodes: strings(subject.postalCodes),
      streetAddresses: strings(subject.streetAddresses),
    },
    publicKeyDigest: typeof compact.publicKeyDigest === 'string' ? compact.publicKeyDigest : '',
    digest,
  };
}

/** A key's facts as the cached Secret's `tls.key` carries them. */
export function keyFactsText(facts: KeyFacts): string {
  return FACTS_PREFIX + JSON.stringify(withoutEmpty({ ...facts }));
}

/** The facts a keyFactsText carries; throws on a text that is not one. */
export function readKeyFactsText(text: string): KeyFacts {
  const compact = JSON.parse(text.slice(FACTS_PREFIX.length)) as Partial<KeyFacts>;
  if (typeof compact.publicKeyDigest !== 'string') throw new Error('not the facts of a private key');
  return { algorithm: compact.algorithm, size: compact.size, publicKeyDigest: compact.publicKeyDigest };
}

/** The only data keys of a Secret cached as facts; a Secret with any other (keystores, output formats) is kept whole. */
const FACTS_SECRET_KEYS: ReadonlySet<string> = new Set([
  SecretKeys.tlsCert,
  SecretKeys.tlsKey,
  SecretKeys.ca,
]);

/**
 * Whether a Secret's data is that of a plain certificate Secret, which the cache may hold as facts: a
 * non-empty `tls.crt` and `tls.key`, a non-empty `ca.crt` or none, and nothing else. Secrets with output formats or
 * keystores keep their bytes: the issuing controller compares those with what it would write.
 */
export function isPlainCertificateData(data: Record<string, string> | undefined): boolean {
  if (!data?.[SecretKeys.tlsCert] || !data[SecretKeys.tlsKey]) return false;
  if (isSecretFactsText(data[SecretKeys.tlsCert]) || isSecretFactsText(data[SecretKeys.tlsKey])) return false;
  if (SecretKeys.ca in data && !data[SecretKeys.ca]) return false;
  for (const key in data) if (!FACTS_SECRET_KEYS.has(key)) return false;
  return true;
}
