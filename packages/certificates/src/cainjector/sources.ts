import type { KubeObject } from '@certkit/apimachinery';
import { Annotations } from '../api/constants.ts';

/**
 * Where a target's CA comes from, read from its annotations as cainjector reads them: a Secret
 * (`cert-manager.io/inject-ca-from-secret: NS/NAME`), a Certificate's Secret (`cert-manager.io/inject-ca-from:
 * NS/NAME`) or the API server's own CA (`cert-manager.io/inject-apiserver-ca: "true"`). When several are set
 * the first of that order that is enabled wins.
 */
export type CASource =
  | { kind: 'secret'; namespace: string; name: string }
  | { kind: 'certificate'; namespace: string; name: string }
  | { kind: 'apiserver' };

/** A source annotation that names no `namespace/name`: nothing to read until the annotation is fixed. */
export interface InvalidSource {
  kind: 'invalid';
  annotation: string;
  value: string;
}

/** The annotations a target may carry, the only ones its stripped cache entry keeps. */
export const SOURCE_ANNOTATIONS = [
  Annotations.injectCAFromSecret,
  Annotations.injectCAFrom,
  Annotations.injectAPIServerCA,
] as const;

/** Which sources are on: cainjector's --enable-certificates-data-source turns the Certificate one off. */
export interface SourceSettings {
  certificates: boolean;
}

/** `NS/NAME` split at its first `/`, or undefined when either part is missing (cainjector logs and skips). */
export function splitNamespacedName(value: string): { namespace: string; name: string } | undefined {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return undefined;
  return { namespace: value.slice(0, slash), name: value.slice(slash + 1) };
}

/** The source a target asks for, an invalid one, or undefined when it asks for none. */
export function caSourceFor(obj: KubeObject, settings: SourceSettings): CASource | InvalidSource | undefined {
  const annotations = obj.metadata?.annotations ?? {};
  const fromSecret = annotations[Annotations.injectCAFromSecret];
  if (fromSecret !== undefined) {
    const name = splitNamespacedName(fromSecret);
    return name
      ? { kind: 'secret', ...name }
      : { kind: 'invalid', annotation: Annotations.injectCAFromSecret, value: fromSecret };
  }
  const fromCertificate = annotations[Annotations.injectCAFrom];
  if (settings.certificates && fromCertificate !== undefined) {
    const name = splitNamespacedName(fromCertificate);
    return name
      ? { kind: 'certificate', ...name }
      : { kind: 'invalid', annotation: Annotations.injectCAFrom, value: fromCertificate };
  }
  if (annotations[Annotations.injectAPIServerCA] === 'true') return { kind: 'apiserver' };
  return undefined;
}
