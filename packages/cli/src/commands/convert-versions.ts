/**
 * The differences between cert-manager's API versions, as `cmctl convert` converts manifests across them:
 * cert-manager.io and acme.cert-manager.io v1alpha2, v1alpha3 and v1beta1 (removed from the API in cert-manager
 * 1.6), and v1, the only one certkit serves. v1 is the hub: an object is converted to v1, then, when asked, from
 * v1 to the version wanted.
 *
 * Everything not listed here has the same name and meaning in every version, so an object is converted by
 * moving a few fields and renaming a few values, not by a typed scheme: fields certkit does not know are kept
 * as they are (cmctl's typed decode drops them).
 */

/** A manifest object, as parsed from YAML or JSON. */
export type ManifestObject = Record<string, unknown>;

/** The two API groups of cert-manager, and their versions, oldest first. */
export const CERT_MANAGER_GROUPS = ['cert-manager.io', 'acme.cert-manager.io'] as const;
export const VERSIONS = ['v1alpha2', 'v1alpha3', 'v1beta1', 'v1'] as const;
export type Version = (typeof VERSIONS)[number];

/** The kinds of each group, which are converted; any other kind in these groups is an error. */
const KINDS: Record<string, readonly string[]> = {
  'cert-manager.io': ['Certificate', 'CertificateRequest', 'Issuer', 'ClusterIssuer'],
  'acme.cert-manager.io': ['Order', 'Challenge'],
};

/** A value renamed between versions: [older spelling, v1 spelling]. */
type Renames = readonly (readonly [string, string])[];

/** v1alpha2 and v1alpha3 spell key algorithms, key encodings and challenge types in lower case. */
const KEY_ALGORITHMS: Renames = [
  ['rsa', 'RSA'],
  ['ecdsa', 'ECDSA'],
];
const KEY_ENCODINGS: Renames = [
  ['pkcs1', 'PKCS1'],
  ['pkcs8', 'PKCS8'],
];
const CHALLENGE_TYPES: Renames = [
  ['http-01', 'HTTP-01'],
  ['dns-01', 'DNS-01'],
];

function rename(value: unknown, renames: Renames, toV1: boolean): unknown {
  const pair = renames.find(([old, v1]) => (toV1 ? old : v1) === value);
  return pair ? pair[toV1 ? 1 : 0] : value;
}

function isObject(value: unknown): value is ManifestObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Moves `spec[from]` to `spec[to]` when set (keeping key order otherwise). */
function move(spec: ManifestObject, from: string, to: string): void {
  if (!(from in spec)) return;
  const value = spec[from];
  delete spec[from];
  if (value !== undefined && value !== null) spec[to] = value;
}

/** Where a version sits: older versions have index < 3 (v1). */
const rank = (version: Version) => VERSIONS.indexOf(version);

/**
 * Certificate spec, `version` → v1: emailSANs and uriSANs (before v1) become emailAddresses and uris; the key
 * fields (before v1beta1) move into privateKey, their values upper-cased; organization (v1alpha2 only) moves
 * into subject.organizations.
 */
function certificateSpecToV1(spec: ManifestObject, version: Version): void {
  move(spec, 'emailSANs', 'emailAddresses');
  move(spec, 'uriSANs', 'uris');
  if (version === 'v1alpha2' && Array.isArray(spec.organization)) {
    const subject = isObject(spec.subject) ? spec.subject : {};
    spec.subject = { ...subject, organizations: spec.organization };
  }
  if (version === 'v1alpha2') delete spec.organization;
  if (rank(version) < rank('v1beta1')) {
    const { keyAlgorithm, keyEncoding, keySize } = spec;
    delete spec.keyAlgorithm;
    delete spec.keyEncoding;
    delete spec.keySize;
    if (keyAlgorithm || keyEncoding || keySize) {
      const privateKey: ManifestObject = isObject(spec.privateKey) ? { ...spec.privateKey } : {};
      if (keyAlgorithm) privateKey.algorithm = rename(keyAlgorithm, KEY_ALGORITHMS, true);
      if (keyEncoding) privateKey.encoding = rename(keyEncoding, KEY_ENCODINGS, true);
      if (keySize) privateKey.size = keySize;
      spec.privateKey = privateKey;
    }
  }
}

/** Certificate spec, v1 → `version`: the inverse of certificateSpecToV1. */
function certificateSpecFromV1(spec: ManifestObject, version: Version): void {
  move(spec, 'emailAddresses', 'emailSANs');
  move(spec, 'uris', 'uriSANs');
  if (version === 'v1alpha2' && isObject(spec.subject) && 'organizations' in spec.subject) {
    const { organizations, ...subject } = spec.subject;
    spec.organization = organizations;
    if (Object.keys(subject).length > 0) spec.subject = subject;
    else delete spec.subject;
  }
  if (rank(version) < rank('v1beta1') && isObject(spec.privateKey)) {
    const { algorithm, encoding, size, ...rest } = spec.privateKey;
    if (algorithm) spec.keyAlgorithm = rename(algorithm, KEY_ALGORITHMS, false);
    if (encoding) spec.keyEncoding = rename(encoding, KEY_ENCODINGS, false);
    if (size) spec.keySize = size;
    if (Object.keys(rest).length > 0) spec.privateKey = rest;
    else delete spec.privateKey;
  }
}

/** The spec changes of one kind between `version` and v1, in the direction asked. */
function convertSpec(kind: string, spec: ManifestObject, version: Version, toV1: boolean): void {
  const before = (v: Version) => rank(version) < rank(v);
  switch (kind) {
    case 'Certificate':
      if (version !== 'v1') {
        if (toV1) certificateSpecToV1(spec, version);
        else certificateSpecFromV1(spec, version);
      }
      return;
    case 'CertificateRequest':
    case 'Order':
      // The PEM CSR: spec.csr before v1beta1, spec.request since.
      if (before('v1beta1')) move(spec, toV1 ? 'csr' : 'request', toV1 ? 'request' : 'csr');
      return;
    case 'Challenge':
      if (before('v1beta1')) {
        move(spec, toV1 ? 'authzURL' : 'authorizationURL', toV1 ? 'authorizationURL' : 'authzURL');
        if ('type' in spec) spec.type = rename(spec.type, CHALLENGE_TYPES, toV1);
      }
      return;
    default:
      // Issuer and ClusterIssuer have the same fields in every version.
      return;
  }
}

/** An error in a manifest, naming the object it is about. */
export class ConversionError extends Error {}

function describe(object: ManifestObject): string {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '(no name)';
  return `${String(object.kind)} ${JSON.stringify(name)}`;
}

/** The group and version of an apiVersion, e.g. ['cert-manager.io', 'v1alpha2']; [] for core's "v1". */
function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** Whether this object is of a cert-manager group (and so converted rather than passed through). */
export function isCertManagerObject(object: ManifestObject): boolean {
  if (typeof object.apiVersion !== 'string') return false;
  return (CERT_MANAGER_GROUPS as readonly string[]).includes(splitApiVersion(object.apiVersion)[0]);
}

/**
 * `object` converted to `target` (a version of its group), as a new object: objects of other groups are
 * returned as they are. An unknown version or kind of a cert-manager group is a ConversionError.
 */
export function convertObject(object: ManifestObject, target: Version = 'v1'): ManifestObject {
  if (!isCertManagerObject(object)) return object;
  const [group, version] = splitApiVersion(object.apiVersion as string);
  if (!(VERSIONS as readonly string[]).includes(version)) {
    throw new ConversionError(
      `${describe(object)}: ${group}/${version} is not a version of ${group} (${VERSIONS.join(', ')})`,
    );
  }
  const kind = String(object.kind);
  if (!KINDS[group].includes(kind)) {
    throw new ConversionError(
      `${describe(object)}: ${group} has no kind ${kind} (${KINDS[group].join(', ')})`,
    );
  }
  const converted = structuredClone(object);
  const spec = isObject(converted.spec) ? converted.spec : undefined;
  if (spec) {
    convertSpec(kind, spec, version as Version, true);
    convertSpec(kind, spec, target, false);
  }
  converted.apiVersion = `${group}/${target}`;
  return converted;
}

/**
 * The version `--output-version` names, checked: cmctl takes a group/version; certkit converts both groups
 * to the same version, so `cert-manager.io/v1alpha2` applies to acme.cert-manager.io objects too.
 */
export function parseOutputVersion(value: string): Version {
  const [group, version] = splitApiVersion(value);
  if (group !== '' && !(CERT_MANAGER_GROUPS as readonly string[]).includes(group)) {
    throw new ConversionError(
      `--output-version ${value}: not a cert-manager group (${CERT_MANAGER_GROUPS.join(', ')})`,
    );
  }
  if (!(VERSIONS as readonly string[]).includes(version)) {
    throw new ConversionError(`--output-version ${value}: no such version (${VERSIONS.join(', ')})`);
  }
  return version as Version;
}
