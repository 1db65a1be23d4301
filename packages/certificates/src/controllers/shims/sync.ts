import { isAlreadyExists, isNotFound } from '@certkit/apimachinery';
import {
  keyFor,
  NAMESPACE_INDEX,
  type Logger,
  type ResourceClient,
  type SharedInformer,
} from '@certkit/runtime';
import type { Certificate } from '../../api/types.ts';
import type { EventRecorder } from '../events.ts';
import { FOREGROUND_DELETION_FINALIZER, hasShimAnnotation } from './annotation-keys.ts';
import { extraAnnotations, InvalidAnnotationError, issuerFor, type IssuerChoice } from './annotations.ts';
import {
  aggregate,
  buildCertificate,
  controllerOf,
  duplicateSecretNameErrors,
  HTTP01_PARENT_REF_ANNOTATIONS,
  isControlledBy,
  needsUpdate,
  secretHosts,
  secretNameUsedIn,
} from './build.ts';
import type { Ingress, IngressLike } from './ingress-like.ts';
import { shimFieldManager, type ShimKind, type ShimOptions } from './options.ts';

/**
 * One reconcile of an Ingress, Gateway or ListenerSet (cert-manager's certificate-shim `SyncFnFor`): create the
 * Certificates it asks for, rewrite those that drifted from it, delete those it no longer names, and say so in
 * Events on the object with cert-manager's reasons and messages. Loaded on the first reconcile (index.ts), so
 * that a controller with no Ingress to manage never loads it.
 */

export const ShimReasons = {
  BadConfig: 'BadConfig',
  CreateCertificate: 'CreateCertificate',
  UpdateCertificate: 'UpdateCertificate',
  DeleteCertificate: 'DeleteCertificate',
} as const;

export interface ShimSyncDeps {
  kind: ShimKind;
  certificates: SharedInformer<Certificate>;
  certificateClient: ResourceClient<Certificate>;
  recorder: EventRecorder;
  options: ShimOptions;
  log: Logger;
}

/** Whether the object is going away: deleted, or deleted in the foreground (its dependents first). */
function isBeingDeleted(obj: IngressLike): boolean {
  return (
    obj.metadata?.deletionTimestamp != null ||
    (obj.metadata?.finalizers ?? []).includes(FOREGROUND_DELETION_FINALIZER)
  );
}

export async function syncIngressLike(deps: ShimSyncDeps, obj: IngressLike): Promise<void> {
  const { kind, options, recorder } = deps;
  const annotations = obj.metadata?.annotations;
  // --auto-certificate-annotations (kubernetes.io/tls-acme) apply to Ingresses only, as in cert-manager.
  const autoAnnotations = kind === 'Ingress' ? options.autoCertificateAnnotations : [];
  if (!hasShimAnnotation(annotations, autoAnnotations) || isBeingDeleted(obj)) return;

  let issuer: IssuerChoice;
  try {
    issuer = issuerFor(annotations, options);
  } catch (err) {
    recorder.warning(
      obj,
      ShimReasons.BadConfig,
      `Could not determine issuer for ingress due to bad annotations: ${(err as Error).message}`,
    );
    return;
  }
  if (kind === 'Ingress') {
    const duplicates = duplicateSecretNameErrors(obj as Ingress);
    if (duplicates.length > 0) {
      recorder.warning(obj, ShimReasons.BadConfig, aggregate(duplicates));
      return;
    }
  }

  const extra = extraAnnotations(annotations, options.extraCertificateAnnotations);
  const hosts = secretHosts(kind, obj, options, (message) =>
    recorder.warning(obj, ShimReasons.BadConfig, message),
  );
  const wanted: Certificate[] = [];
  try {
    for (const [secretName, secretHostList] of hosts) {
      wanted.push(
        buildCertificate({ kind, obj, issuer, extraAnnotations: extra }, secretName, secretHostList),
      );
    }
  } catch (err) {
    if (!(err instanceof InvalidAnnotationError)) throw err;
    // cert-manager returns this error and retries with backoff, saying so only in its log. The annotation
    // cannot fix itself: the Event says what to change, and the Ingress's next change brings it back here.
    recorder.warning(obj, ShimReasons.BadConfig, err.message);
    return;
  }

  const store = deps.certificates.getStore();
  const fieldManager = shimFieldManager(kind);
  for (const certificate of wanted) {
    const name = certificate.metadata!.name!;
    const existing = store.get(keyFor(certificate.metadata!.namespace, name));
    if (!existing) {
      try {
        await deps.certificateClient.create(certificate.metadata!.namespace, certificate, { fieldManager });
      } catch (err) {
        // The cache has not seen it yet (our own create, a moment ago): its add event brings us back.
        if (isAlreadyExists(err)) continue;
        throw err;
      }
      recorder.normal(
        obj,
        ShimReasons.CreateCertificate,
        `Successfully created Certificate ${JSON.stringify(name)}`,
      );
      continue;
    }
    // A Certificate of that name the user wrote, or another object's, is left alone.
    if (!controllerOf(existing) || !isControlledBy(existing, obj) || !needsUpdate(existing, certificate))
      continue;
    const updated = structuredClone(existing);
    updated.spec = certificate.spec;
    updated.metadata = { ...updated.metadata, labels: certificate.metadata!.labels };
    if (certificate.metadata!.annotations) {
      updated.metadata.annotations = {
        ...updated.metadata.annotations,
        ...certificate.metadata!.annotations,
      };
      // A ListenerSet's parent reference without the fallback has no namespace: one left from the fallback
      // would send the solver's route to the ListenerSet's name in the Gateway's namespace.
      if (kind === 'ListenerSet') {
        for (const key of HTTP01_PARENT_REF_ANNOTATIONS) {
          if (!(key in certificate.metadata!.annotations)) delete updated.metadata.annotations[key];
        }
      }
    }
    await deps.certificateClient.update(updated, { fieldManager });
    recorder.normal(
      obj,
      ShimReasons.UpdateCertificate,
      `Successfully updated Certificate ${JSON.stringify(name)}`,
    );
  }

  // Certificates of TLS entries or listeners the object no longer has. Deleting the object itself leaves its
  // Certificates to the garbage collector, through their owner reference.
  const namespace = obj.metadata?.namespace ?? '';
  for (const certificate of store.byIndex(NAMESPACE_INDEX, namespace)) {
    if (!isControlledBy(certificate, obj)) continue;
    if (secretNameUsedIn(kind, obj, certificate.spec?.secretName ?? '')) continue;
    const name = certificate.metadata?.name ?? '';
    try {
      await deps.certificateClient.delete(namespace, name);
    } catch (err) {
      if (isNotFound(err)) continue;
      throw err;
    }
    recorder.normal(
      obj,
      ShimReasons.DeleteCertificate,
      `Successfully deleted unrequired Certificate ${JSON.stringify(name)}`,
    );
  }
}
