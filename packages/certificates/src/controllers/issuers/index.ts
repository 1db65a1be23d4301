import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { newIssuerController } from './issuers.ts';

/**
 * The `issuers` controller, and the `clusterissuers` one unless the controller is scoped to a namespace
 * (cert-manager does not run it then: ClusterIssuers are cluster-wide).
 */
export function registerIssuerControllers(ctx: ControllerContext): Controller[] {
  const controllers = [newIssuerController(ctx, 'Issuer')];
  if (!ctx.options.namespace) controllers.push(newIssuerController(ctx, 'ClusterIssuer'));
  return controllers;
}

export { caSecretIndexValue, caSecretOf, CA_SECRET_INDEX, issuersForSecret } from './ca-secret.ts';
export { isIssuerReady } from './conditions.ts';
export { CONTROLLER_NAMES, newIssuerController } from './issuers.ts';
export { issuerReadiness, ReadinessReasons, type Readiness } from './readiness.ts';
