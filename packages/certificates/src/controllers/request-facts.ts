import { createHash, type KeyObject } from 'node:crypto';
import type { CertificateRequest } from '../api/types.ts';
import {
  type CertificateRequestView,
  type DistinguishedName,
  parseCertificateRequest,
  publicKeyOf,
  subjectPublicKeyInfo,
} from '../pki/index.ts';
import type { SubjectAltNames } from '../pki/sans.ts';
import { readyReason, ReadyReason } from './certificaterequests/conditions.ts';

/**
 * What the controller keeps of an issued CertificateRequest in its cache: the facts the Certificate
 * controllers decide with, not the CSR and certificate bytes (docs/adr/1114). Once a request is issued, no
 * signer looks at it again; the Certificate controllers only compare its CSR with the Certificate's spec and
 * key (policies, request manager, issuing) and its certificate with the Secret's (readiness). The bytes are
 * read live on the one path that needs them: the issuing controller copying the certificate into the Secret.
 */

/**
 * A digest in place of a stripped value: `sha256:` and the first 128 bits of the SHA-256 of the text it
 * replaces, base64url (enough to tell two values apart; short, as there is one per cached request).
 */
export type DigestToken = `sha256:${string}`;

const TOKEN_PREFIX = 'sha256:';

export function digestToken(text: string): DigestToken {
  return `${TOKEN_PREFIX}${createHash('sha256').update(text).digest().subarray(0, 16).toString('base64url')}`;
}

/** Whether a field holds a digest token (never valid base64: base64 has no ':'). */
export function isDigestToken(value: unknown): value is DigestToken {
  return typeof value === 'string' && value.startsWith(TOKEN_PREFIX);
}

/** The digest of a public key (its SubjectPublicKeyInfo DER), the form keys are compared in. */
export type PublicKeyDigest = string;

/** The digest of SubjectPublicKeyInfo DER bytes as they are. */
export function spkiDigest(spki: Buffer): PublicKeyDigest {
  return createHash('sha256').update(spki).digest('base64url');
}

const keyDigests = new WeakMap<KeyObject, PublicKeyDigest>();

/**
 * The public key digest of a key (private or public), remembered per KeyObject: the controllers compare the
 * same key (from the bounded parse caches) on every reconcile of a burst.
 */
export function publicKeyDigest(key: KeyObject): PublicKeyDigest {
  let digest = keyDigests.get(key);
  if (digest === undefined) {
    digest = spkiDigest(spkiOf(key));
    keyDigests.set(key, digest);
  }
  return digest;
}

/**
 * A key's SubjectPublicKeyInfo DER: for the algorithms a Certificate can ask for, pki's subjectPublicKeyInfo,
 * which builds EC and Ed25519 ones from the JWK coordinates (OpenSSL 3's SPKI encoder took ~45 µs of the
 * ~50 µs a digest cost, three digests per issuance: the CSR's, the next key's, the issued certificate's;
 * docs/adr/1151). Other keys (a CSR made elsewhere with a P-224 key, say) still go through the encoder, so
 * they are compared, and never match a key the controller made.
 */
function spkiOf(key: KeyObject): Buffer {
  try {
    return subjectPublicKeyInfo(key);
  } catch {
    return publicKeyOf(key).export({ type: 'spki', format: 'der' });
  }
}

/**
 * A CSR as the Certificate controllers compare it, and nothing more: the names and the subject attributes
 * compareRequestWithSpec (policies.ts) checks against the spec, the subject's DER (for literalSubject) as
 * base64, the Name Constraints, and the public key as its digest. The full parsed view is several times the
 * size of the CSR it came from; these are less than its base64.
 */
export interface RequestFacts extends SubjectAltNames {
  commonName: string;
  subject: Pick<
    DistinguishedName,
    | 'serialNumber'
    | 'organizations'
    | 'countries'
    | 'localities'
    | 'organizationalUnits'
    | 'postalCodes'
    | 'provinces'
    | 'streetAddresses'
  >;
  /** The subject's DER, base64. */
  subjectDer: string;
  nameConstraints: CertificateRequestView['nameConstraints'];
  publicKeyDigest: PublicKeyDigest;
}

/** One frozen empty array for every empty list of the facts: most of them are. */
const EMPTY: never[] = Object.freeze([]) as never[];

const list = <T>(items: T[]): T[] => (items.length ? items : EMPTY);

/**
 * Parses a base64 PEM CSR (spec.request) into its facts; throws what parsing throws. `keyDigest`, when given,
 * is the digest of the key the CSR was built from (the request manager's), so its key is not parsed again.
 */
export function parseRequestFacts(base64: string, keyDigest?: PublicKeyDigest): RequestFacts {
  const pem = Buffer.from(base64, 'base64');
  let view: Omit<CertificateRequestView, 'publicKey'>;
  let digest: PublicKeyDigest;
  if (keyDigest === undefined) {
    const full = parseCertificateRequest(pem);
    view = full;
    digest = publicKeyDigest(full.publicKey);
  } else {
    view = parseCertificateRequest(pem, { publicKey: false });
    digest = keyDigest;
  }
  const { subject } = view;
  return {
    dnsNames: list(view.dnsNames),
    emailAddresses: list(view.emailAddresses),
    ipAddresses: list(view.ipAddresses),
    uris: list(view.uris),
    otherNames: list(view.otherNames),
    commonName: view.commonName,
    subject: {
      serialNumber: subject.serialNumber,
      organizations: list(subject.organizations),
      countries: list(subject.countries),
      localities: list(subject.localities),
      organizationalUnits: list(subject.organizationalUnits),
      postalCodes: list(subject.postalCodes),
      provinces: list(subject.provinces),
      streetAddresses: list(subject.streetAddresses),
    },
    subjectDer: view.subjectDer.toString('base64'),
    nameConstraints: view.nameConstraints,
    publicKeyDigest: digest,
  };
}

/**
 * How a stripped request carries its CSR's facts in `spec.request`: this prefix and the facts as JSON, empty
 * lists and strings left out. One string of ~150 characters for a typical request, where the facts as
 * objects took ~600 bytes of heap and the base64 CSR as much; a copy of the object keeps them. Never valid
 * base64 (base64 has no ':'), so no reader can take it for a CSR.
 */
const FACTS_PREFIX = 'facts:';

/** Whether a `spec.request` holds facts rather than a CSR. */
export function isFactsText(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(FACTS_PREFIX);
}

/** Facts as a `spec.request` of the cache carries them. */
export function factsText(facts: RequestFacts): string {
  const subject = Object.fromEntries(Object.entries(facts.subject).filter(([, v]) => v.length));
  const compact = Object.fromEntries(
    Object.entries({ ...facts, subject: Object.keys(subject).length ? subject : undefined }).filter(
      ([, v]) => v !== undefined && (typeof v === 'boolean' || (v as string | unknown[]).length !== 0),
    ),
  );
  return FACTS_PREFIX + JSON.stringify(compact);
}

/** The facts a `factsText` carries, every absent list or string back as empty. */
export function readFactsText(text: string): RequestFacts {
  const compact = JSON.parse(text.slice(FACTS_PREFIX.length)) as Partial<RequestFacts>;
  const subject = compact.subject ?? ({} as Partial<RequestFacts['subject']>);
  return {
    dnsNames: compact.dnsNames ?? EMPTY,
    emailAddresses: compact.emailAddresses ?? EMPTY,
    ipAddresses: compact.ipAddresses ?? EMPTY,
    uris: compact.uris ?? EMPTY,
    otherNames: compact.otherNames ?? EMPTY,
    commonName: compact.commonName ?? '',
    subject: {
      serialNumber: subject.serialNumber ?? '',
      organizations: subject.organizations ?? EMPTY,
      countries: subject.countries ?? EMPTY,
      localities: subject.localities ?? EMPTY,
      organizationalUnits: subject.organizationalUnits ?? EMPTY,
      postalCodes: subject.postalCodes ?? EMPTY,
      provinces: subject.provinces ?? EMPTY,
      streetAddresses: subject.streetAddresses ?? EMPTY,
    },
    subjectDer: compact.subjectDer ?? '',
    nameConstraints: compact.nameConstraints,
    publicKeyDigest: compact.publicKeyDigest ?? '',
  };
}

/** Whether `cr` is a cached copy without its bytes (spec.request, status.certificate and status.ca). */
export function isStrippedRequest(cr: CertificateRequest): boolean {
  return isFactsText(cr.spec?.request) || isDigestToken(cr.status?.certificate);
}

/**
 * Replaces, in place, an issued request's spec.request by its CSR's facts and status.certificate and
 * status.ca by digest tokens. Requests not issued yet keep their bytes: the signers read them. A CSR that
 * does not parse is kept as it is (its error is reported from the bytes, as before). `share` replaces the
 * tokens' strings by shared instances (a CA bundle's token is the same for every request of an issuer).
 * `facts` parses the CSR: the controller passes its content cache (parsed.ts), which the request manager
 * filled when it compared the request in flight, so an issued request's CSR is not parsed a second time.
 * Idempotent.
 */
export function stripIssuedRequest(
  cr: CertificateRequest,
  share: (value: object) => void = () => {},
  facts: (base64: string) => RequestFacts = parseRequestFacts,
): CertificateRequest {
  const status = cr.status;
  if (!status?.certificate || isDigestToken(status.certificate) || readyReason(cr) !== ReadyReason.Issued) {
    return cr;
  }
  const request = cr.spec?.request;
  if (!request || isFactsText(request)) return cr;
  let parsed: RequestFacts;
  try {
    parsed = facts(request);
  } catch {
    return cr;
  }
  cr.spec = { ...cr.spec, request: factsText(parsed) };
  cr.status = {
    ...status,
    certificate: digestToken(status.certificate),
    ...(status.ca ? { ca: digestToken(status.ca) } : {}),
  };
  share(cr.status);
  return cr;
}
