import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import { newChallengeScheduler, newChallengesController } from './challenges/controller.ts';
import { newOrdersController } from './orders/controller.ts';

/**
 * The acme.cert-manager.io controllers: Orders, Challenges and the Challenge scheduler, with their event
 * handlers on the context's informers. The ACME signer that creates Orders is a CertificateRequest controller.
 */
export function registerAcmeControllers(ctx: ControllerContext): Controller[] {
  return [newOrdersController(ctx), newChallengesController(ctx), newChallengeScheduler(ctx)];
}

export { CHALLENGES_CONTROLLER, CHALLENGES_SCHEDULER } from './challenges/controller.ts';
export { ORDERS_CONTROLLER } from './orders/controller.ts';
