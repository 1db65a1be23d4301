import { goString } from '../acme/go-json.ts';

/**
 * The objects `certkit up` installs from deploy/ (the CRDs, deploy/rbac.yaml) carry what a first
 * `kubectl apply -f deploy/` would have left on them: the `kubectl.kubernetes.io/last-applied-configuration`
 * annotation. A user who then applies deploy/ with kubectl, as on a cluster where that was the first apply,
 * gets no "missing the last-applied-configuration annotation" warning, and kubectl's three-way merge starts
 * from the file as it was installed (docs/adr/1865).
 */

/** An object as a manifest holds it: only its annotations matter here. */
export interface ManifestObject {
  metadata?: { annotations?: Record<string, string> };
}

/** The annotation client-side `kubectl apply` keeps the applied configuration in. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The annotation's value for `obj` as read from a manifest, byte for byte what kubectl writes (its
 * GetModifiedConfiguration): the object without that annotation, with `metadata.annotations` present (empty
 * when there is none), in Go's encoding/json of unstructured data (keys sorted by their bytes, no spaces,
 * <, >, & and U+2028/U+2029 escaped), and the encoder's newline. Equal bytes are what let a later apply of
 * the same file say `unchanged`.
 */
export function lastAppliedConfiguration(obj: ManifestObject): string {
  const { [LAST_APPLIED_ANNOTATION]: _previous, ...annotations } = obj.metadata?.annotations ?? {};
  return `${goUnstructuredJSON({ ...obj, metadata: { ...obj.metadata, annotations } })}\n`;
}

/** `obj` with the annotation a first `kubectl apply` of it writes. */
export function withLastAppliedConfiguration<T extends ManifestObject>(obj: T): T {
  return {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...obj.metadata?.annotations, [LAST_APPLIED_ANNOTATION]: lastAppliedConfiguration(obj) },
    },
  };
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Go's json.Encoder over a map[string]interface{} from a manifest: every object's keys sorted. */
function goUnstructuredJSON(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goString(value);
  if (Array.isArray(value)) return `[${value.map(goUnstructuredJSON).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => byBytes(a, b));
    return `{${entries.map(([k, v]) => `${goString(k)}:${goUnstructuredJSON(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
