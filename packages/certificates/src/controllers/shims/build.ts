import {
  type FieldError,
  type KubeObject,
  type OwnerReference,
  formatFieldError,
  invalid,
  notSupported,
  parseGoDuration,
  required,
} from '@certkit/apimachinery';
import { AcmeAnnotations } from '../../api/acme-constants.ts';
import { API_VERSION, Defaults, Kinds } from '../../api/constants.ts';
import type { Certificate, CertificateSpec } from '../../api/types.ts';
import { isIPAddress } from '../../api/validation/formats.ts';
import { applyCertificateAnnotations, type IssuerChoice, issuerSpecificAnnotations } from './annotations.ts';
import {
  type Gateway,
  type GatewayListener,
  type Ingress,
  type IngressLike,
  type ListenerSet,
  listenersOf,
} from './ingress-like.ts';
import type { ShimKind, ShimOptions } from './options.ts';

/**
 * The Certificates an Ingress, Gateway or ListenerSet asks for (cert-manager's `buildCertificates`): one per
 * Secret its TLS entries or listeners name, with the hosts of every entry naming that Secret, and whether an existing one
 * needs rewriting (`certNeedsUpdate`).
 */

/** kubectl's `applyset.kubernetes.io/part-of` would make `kubectl apply --prune` delete the Certificates. */
const APPLYSET_LABEL = 'applyset.kubernetes.io/part-of';

/** field.ErrorList.ToAggregate().Error(): one error as itself, more in brackets. */
export function aggregate(errors: readonly FieldError[]): string {
  const texts = errors.map(formatFieldError);
  return texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
}

/** An Ingress whose TLS entries share a Secret would want two Certificates of one name: refused as a whole. */
export function duplicateSecretNameErrors(ingress: Ingress): FieldError[] {
  const paths = new Map<string, string[]>();
  (ingress.spec?.tls ?? []).forEach((tls, i) => {
    const name = tls.secretName ?? '';
    paths.set(name, [...(paths.get(name) ?? []), `spec.tls[${i}].secretName`]);
  });
  const errors: FieldError[] = [];
  for (const [name, at] of paths) {
    if (at.length > 1) {
      errors.push(
        invalid(
          at[0],
          name,
          `this secret name must only appear in a single TLS entry but is also used in ${at[1]}`,
        ),
      );
    }
  }
  return errors;
}

function ingressTLSErrors(path: string, tls: { hosts?: string[]; secretName?: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (!tls.hosts?.length) errors.push(required(`${path}.hosts`));
  if (!tls.secretName) errors.push(required(`${path}.secretName`));
  return errors;
}

function listenerErrors(
  path: string,
  listener: GatewayListener,
  namespace: string | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  if (!listener.hostname) errors.push(required(`${path}.hostname`, 'the hostname cannot be empty'));
  const tls = listener.tls;
  if (!tls) return [...errors, required(`${path}.tls`, 'the TLS block cannot be empty')];
  if (!tls.certificateRefs?.length) {
    errors.push(required(`${path}.tls.certificateRef`, 'listener has no certificateRefs'));
  } else {
    tls.certificateRefs.forEach((ref, i) => {
      const at = `${path}.tls.certificateRef[${i}]`;
      // The CRD defaults group to "" and kind to Secret.
      const group = ref.group ?? '';
      const kind = ref.kind ?? 'Secret';
      if (group !== 'core' && group !== '') errors.push(notSupported(`${at}.group`, group, ['core', '']));
      if (kind !== 'Secret' && kind !== '') errors.push(notSupported(`${at}.kind`, kind, ['Secret', '']));
      if (ref.namespace !== undefined && ref.namespace !== namespace) {
        errors.push(
          invalid(
            `${at}.namespace`,
            ref.namespace,
            'cross-namespace secret references are not allowed in listeners',
          ),
        );
      }
    });
  }
  if (tls.mode === undefined) errors.push(required(`${path}.tls.mode`, 'the mode field is required'));
  else if (tls.mode !== 'Terminate') errors.push(notSupported(`${path}.tls.mode`, tls.mode, ['Terminate']));
  return errors;
}

/**
 * Secret name → hosts, in the order the object names them. Entries that cannot be used are reported through
 * `skipped` (a BadConfig Event each) and left out.
 */
export function secretHosts(
  kind: ShimKind,
  obj: IngressLike,
  options: Pick<ShimOptions, 'gatewayAPIExtraProtocols'>,
  skipped: (message: string) => void,
): Map<string, string[]> {
  const hosts = new Map<string, string[]>();
  const add = (secret: string, more: string[]) => hosts.set(secret, [...(hosts.get(secret) ?? []), ...more]);
  if (kind === 'Ingress') {
    (obj as Ingress).spec?.tls?.forEach((tls, i) => {
      const errors = ingressTLSErrors(`spec.tls[${i}]`, tls);
      if (errors.length > 0) return skipped(`Skipped a TLS block: ${aggregate(errors)}`);
      add(tls.secretName!, tls.hosts!);
    });
    return hosts;
  }
  const ignored = (obj.metadata?.annotations?.['cert-manager.io/ignore-tls-listeners'] ?? '')
    .split(',')
    .map((name) => name.trim());
  // A ListenerSet's listeners are read as a Gateway's, with the same checks and paths (spec.listeners[i]).
  listenersOf(obj as Gateway | ListenerSet).forEach((listener, i) => {
    const tlsProtocol =
      listener.protocol === 'HTTPS' ||
      listener.protocol === 'TLS' ||
      options.gatewayAPIExtraProtocols.includes(listener.protocol);
    if (!tlsProtocol || listener.tls?.mode === 'Passthrough' || ignored.includes(listener.name)) return;
    const errors = listenerErrors(`spec.listeners[${i}]`, listener, obj.metadata?.namespace);
    if (errors.length > 0) return skipped(`Skipped a listener block: ${aggregate(errors)}`);
    for (const ref of listener.tls!.certificateRefs!) add(ref.name, [listener.hostname!]);
  });
  return hosts;
}

/** Hosts without repeats, split into DNS names and IP addresses (an Ingress host may be an IP). */
function splitHosts(hosts: string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const host of new Set(hosts)) (isIPAddress(host) ? ipAddresses : dnsNames).push(host);
  return { dnsNames, ipAddresses };
}

export interface BuildInput {
  kind: ShimKind;
  obj: IngressLike;
  issuer: IssuerChoice;
  /** The `--extra-certificate-annotations` the object carries. */
  extraAnnotations?: Record<string, string>;
}

/**
 * The Certificate for one Secret of the object: named as the Secret, labelled as the object (but for the
 * applyset label), controlled by it, with the issuer, the hosts and what the annotations ask for. Throws
 * InvalidAnnotationError for an annotation it cannot use.
 */
export function buildCertificate(input: BuildInput, secretName: string, hosts: string[]): Certificate {
  const { kind, obj, issuer } = input;
  const meta = obj.metadata ?? {};
  const { dnsNames, ipAddresses } = splitHosts(hosts);
  const spec: CertificateSpec = {
    secretName,
    issuerRef: { name: issuer.name, kind: issuer.kind, group: issuer.group },
    usages: [...Defaults.usages],
  };
  if (dnsNames.length > 0) spec.dnsNames = dnsNames;
  if (ipAddresses.length > 0) spec.ipAddresses = ipAddresses;
  applyCertificateAnnotations(spec, meta.annotations);

  const labels = { ...meta.labels };
  delete labels[APPLYSET_LABEL];
  const annotations = {
    ...input.extraAnnotations,
    ...issuerSpecificAnnotations(meta.annotations, {
      kind,
      name: meta.name ?? '',
      namespace: meta.namespace ?? '',
      parentRef: (obj as ListenerSet).spec?.parentRef,
    }),
  };
  const certificate: Certificate = {
    apiVersion: API_VERSION,
    kind: Kinds.Certificate,
    metadata: {
      name: secretName,
      namespace: meta.namespace,
      ownerReferences: [
        {
          apiVersion: obj.apiVersion ?? '',
          kind,
          name: meta.name ?? '',
          uid: meta.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec,
  };
  if (Object.keys(labels).length > 0) certificate.metadata!.labels = labels;
  if (Object.keys(annotations).length > 0) certificate.metadata!.annotations = annotations;
  return certificate;
}

/** The object's controller reference, if it has one (metav1.GetControllerOf). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

/** metav1.IsControlledBy: the controller reference names the owner's uid. */
export function isControlledBy(certificate: Certificate, owner: IngressLike): boolean {
  const ref = controllerOf(certificate);
  return ref !== undefined && ref.uid === owner.metadata?.uid;
}

const durationNs = (text: string | undefined) => {
  if (text === undefined) return undefined;
  try {
    return parseGoDuration(text);
  } catch {
    return text;
  }
};

function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const x = Object.entries(a ?? {});
  const y = b ?? {};
  return x.length === Object.keys(y).length && x.every(([k, v]) => y[k] === v);
}

/** Where a Gateway's or ListenerSet's Certificate sends the HTTP-01 solver's route (issuerSpecificAnnotations). */
export const HTTP01_PARENT_REF_ANNOTATIONS = [
  AcmeAnnotations.http01ParentRefKind,
  AcmeAnnotations.http01ParentRefName,
  AcmeAnnotations.http01ParentRefNamespace,
] as const;

/**
 * cert-manager's `certNeedsUpdate`: the fields the shim owns that differ between the existing Certificate and
 * the one it would write. Others (usages, SANs other than DNS names, the issuer's group, subject…) are
 * compared by cert-manager neither, so a change of those annotations alone waits for one of these. One addition:
 * the HTTP-01 parent reference annotations, so that turning a ListenerSet's `http01-parentreffallback` on or
 * off, or moving it to another Gateway, reaches its Certificates (cert-manager waits for another change).
 */
export function needsUpdate(existing: Certificate, wanted: Certificate): boolean {
  const a = existing.spec ?? ({} as CertificateSpec);
  const b = wanted.spec;
  if (existing.metadata?.name !== wanted.metadata?.name) return true;
  const wantedAnnotations = wanted.metadata?.annotations ?? {};
  if (AcmeAnnotations.http01ParentRefKind in wantedAnnotations) {
    const existingAnnotations = existing.metadata?.annotations ?? {};
    if (HTTP01_PARENT_REF_ANNOTATIONS.some((key) => existingAnnotations[key] !== wantedAnnotations[key]))
      return true;
  }
  if (!sameStrings(existing.metadata?.labels, wanted.metadata?.labels)) return true;
  if ((a.commonName ?? '') !== (b.commonName ?? '')) return true;
  const dnsA = a.dnsNames ?? [];
  const dnsB = b.dnsNames ?? [];
  if (dnsA.length !== dnsB.length || dnsA.some((name, i) => name !== dnsB[i])) return true;
  if (a.secretName !== b.secretName) return true;
  if (a.issuerRef?.name !== b.issuerRef.name || (a.issuerRef?.kind ?? '') !== (b.issuerRef.kind ?? ''))
    return true;
  if (a.revisionHistoryLimit !== b.revisionHistoryLimit) return true;
  const keyA = a.privateKey ?? {};
  const keyB = b.privateKey ?? {};
  const algorithm = keyA.algorithm ?? '';
  if (algorithm !== (keyB.algorithm ?? '')) return true;
  if ((keyA.encoding ?? '') !== (keyB.encoding ?? '')) return true;
  if ((keyA.rotationPolicy ?? '') !== (keyB.rotationPolicy ?? '')) return true;
  if (algorithm !== 'Ed25519' && (keyA.size ?? 0) !== (keyB.size ?? 0)) return true;
  if (durationNs(a.duration) !== durationNs(b.duration)) return true;
  if (durationNs(a.renewBefore) !== durationNs(b.renewBefore)) return true;
  return false;
}

/** Whether a Secret name is still named by one of the object's TLS entries or listeners. */
export function secretNameUsedIn(kind: ShimKind, obj: IngressLike, secretName: string): boolean {
  if (kind === 'Ingress')
    return ((obj as Ingress).spec?.tls ?? []).some((tls) => tls.secretName === secretName);
  return listenersOf(obj as Gateway | ListenerSet).some((listener) =>
    (listener.tls?.certificateRefs ?? []).some((ref) => ref.name === secretName),
  );
}
