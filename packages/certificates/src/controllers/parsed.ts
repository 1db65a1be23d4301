import type { KeyObject } from 'node:crypto';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { SecretKeys } from '../api/constants.ts';
import type { CertificateRequest } from '../api/types.ts';
import {
  parseCertificate,
  parseCertificateRequest,
  parsePrivateKey,
  publicKeysEqual,
  type CertificateInfo,
  type CertificateRequestView,
} from '../pki/index.ts';

/**
 * Parsed views of cached objects, remembered per object. Informer stores (and the Secret getter's full cache)
 * hand out the same object until it changes, and a change arrives as a new object, so a WeakMap keyed by the
 * object is an exact cache that lets go of an entry together with its object. The six Certificate
 * controllers look at each Certificate's Secret, key and requests many times per issuance; without this each
 * look parsed the same PEM again, which was most of the controller's CPU.
 *
 * Objects that did not come from a cache (a live GET) simply miss: the parse happens once for that object.
 */

export type Parsed<T> = { value: T } | { error: Error };

function attempt<T>(f: () => T): Parsed<T> {
  try {
    return { value: f() };
  } catch (err) {
    return { error: err instanceof Error ? err : new Error(String(err)) };
  }
}

/** Remembers `compute(obj)` per object; failures are remembered too (the object will not change). */
function perObject<O extends object, T>(compute: (obj: O) => T): (obj: O) => Parsed<T> {
  const results = new WeakMap<O, Parsed<T>>();
  return (obj) => {
    let result = results.get(obj);
    if (!result) results.set(obj, (result = attempt(() => compute(obj))));
    return result;
  };
}

/** The value, or the remembered error thrown again (for callers that handle exceptions). */
export function valueOf<T>(parsed: Parsed<T>): T {
  if ('error' in parsed) throw parsed.error;
  return parsed.value;
}

/** The bytes of a Secret data key (base64 on the wire), or undefined when absent or empty. */
export function secretBytes(secret: Secret | undefined, key: string): Buffer | undefined {
  const value = secret?.data?.[key];
  if (!value) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return bytes.length ? bytes : undefined;
}

/** `tls.key` of a Secret, parsed. */
export const secretPrivateKey: (secret: Secret) => Parsed<KeyObject> = perObject((secret) =>
  parsePrivateKey(secretBytes(secret, SecretKeys.tlsKey) ?? ''),
);

/** The leaf of `tls.crt` of a Secret, parsed. */
export const secretCertificate: (secret: Secret) => Parsed<CertificateInfo> = perObject((secret) =>
  parseCertificate(secretBytes(secret, SecretKeys.tlsCert) ?? ''),
);

/** The CSR of a CertificateRequest (spec.request is base64 of the PEM). */
export const requestCsr: (cr: CertificateRequest) => Parsed<CertificateRequestView> = perObject((cr) =>
  parseCertificateRequest(Buffer.from(cr.spec?.request ?? '', 'base64')),
);

/** The leaf of a CertificateRequest's status.certificate, parsed. */
export const requestCertificate: (cr: CertificateRequest) => Parsed<CertificateInfo> = perObject((cr) =>
  parseCertificate(Buffer.from(cr.status?.certificate ?? '', 'base64')),
);

/**
 * Whether two keys have the same public key, remembered per pair of key objects: the keys come from the
 * caches above, so the same pair is compared again on every reconcile until one of the objects changes.
 */
const comparisons = new WeakMap<KeyObject, WeakMap<KeyObject, boolean>>();

export function sameKeys(a: KeyObject, b: KeyObject): boolean {
  let withA = comparisons.get(a);
  if (!withA) comparisons.set(a, (withA = new WeakMap()));
  let equal = withA.get(b);
  if (equal === undefined) withA.set(b, (equal = publicKeysEqual(a, b)));
  return equal;
}
