import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { CONTROLLER_NAMES, newIssuerController } from './issuers.ts';

/**
 * The `issuers` controller, and the `clusterissuers` one unless the controller is scoped to a namespace
 * (cert-manager does not run it then: ClusterIssuers are cluster-wide).
 */
export function registerIssuerControllers(
  ctx: ControllerContext,
  enabled: (name: string) => boolean = () => true,
): Controller[] {
  const controllers: Controller[] = [];
  if (enabled(CONTROLLER_NAMES.Issuer)) controllers.push(newIssuerController(ctx, 'Issuer'));
  if (!ctx.options.namespace && enabled(CONTROLLER_NAMES.ClusterIssuer))
    controllers.push(newIssuerController(ctx, 'ClusterIssuer'));
  return controllers;
}

export { caSecretIndexValue, caSecretOf, CA_SECRET_INDEX, issuersForSecret } from './ca-secret.ts';
export { isIssuerReady } from './conditions.ts';
export { CONTROLLER_NAMES, newIssuerController } from './issuers.ts';
export { issuerReadiness, ReadinessReasons, type Readiness } from './readiness.ts';
