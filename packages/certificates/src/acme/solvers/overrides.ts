/**
 * The Order annotations that change the chosen HTTP-01 solver (pkg/controller/acmeorders/util.go
 * applyIngressParameterAnnotationOverrides and applyGatewayAPIAnnotationParentRefOverride). They travel
 * Certificate → CertificateRequest → Order, set by users or by the ingress and gateway shims, so that one
 * issuer serves Ingresses of several classes and Gateways of several names.
 */

import { AcmeAnnotations } from '../../api/acme-constants.ts';
import type { ACMEChallengeSolver, GatewayParentReference } from '../../api/acme-types.ts';

export interface OrderMeta {
  namespace?: string;
  annotations?: Record<string, string>;
}

/**
 * Applies the overrides to `solver` in place (pass a copy). Throws, with upstream's message, when the
 * annotations contradict each other or leave an HTTPRoute without parents.
 */
export function applyHTTP01Overrides(solver: ACMEChallengeSolver, order: OrderMeta): void {
  applyIngressOverrides(solver, order.annotations);
  applyParentRefOverride(solver, order);
}

function applyIngressOverrides(solver: ACMEChallengeSolver, annotations: Record<string, string> | undefined) {
  const ingress = solver.http01?.ingress;
  if (!ingress || !annotations) return;
  const has = (key: string) => Object.hasOwn(annotations, key);
  const name = has(AcmeAnnotations.http01IngressNameOverride);
  const className = has(AcmeAnnotations.http01IngressClassOverride);
  const ingressClassName = has(AcmeAnnotations.http01IngressClassNameOverride);
  if ([name, className, ingressClassName].filter(Boolean).length > 1) {
    throw new Error('may not specify more than one of: name, class, ingressClassName override annotations');
  }
  if (!name && !className && !ingressClassName) return;
  // Any one override replaces all three ways of choosing the Ingress.
  delete ingress.class;
  delete ingress.ingressClassName;
  delete ingress.name;
  if (name) ingress.name = annotations[AcmeAnnotations.http01IngressNameOverride];
  if (className) ingress.class = annotations[AcmeAnnotations.http01IngressClassOverride];
  if (ingressClassName)
    ingress.ingressClassName = annotations[AcmeAnnotations.http01IngressClassNameOverride];
}

function applyParentRefOverride(solver: ACMEChallengeSolver, order: OrderMeta) {
  const route = solver.http01?.gatewayHTTPRoute;
  const annotations = order.annotations;
  if (!route || !annotations) return;
  const hasName = Object.hasOwn(annotations, AcmeAnnotations.http01ParentRefName);
  const hasKind = Object.hasOwn(annotations, AcmeAnnotations.http01ParentRefKind);
  if (hasName !== hasKind) {
    throw new Error('cannot specify only one of parentRefName, parentRefKind override annotations');
  }
  if (hasName && hasKind) {
    const name = annotations[AcmeAnnotations.http01ParentRefName];
    const kind = annotations[AcmeAnnotations.http01ParentRefKind];
    const namespace = annotations[AcmeAnnotations.http01ParentRefNamespace] || (order.namespace ?? '');
    // The issuer's parentRef for the same parent is replaced; one without a kind matches any kind. Section
    // names are not compared (upstream does not either).
    const kept = (route.parentRefs ?? []).filter(
      (ref) =>
        !(ref.namespace === namespace && ref.name === name && (ref.kind === undefined || ref.kind === kind)),
    );
    const override: GatewayParentReference = { name, namespace, kind };
    route.parentRefs = [...kept, override];
  }
  if ((route.parentRefs ?? []).length === 0) {
    throw new Error('must specify parentRefs either through annotations or solver config');
  }
}
