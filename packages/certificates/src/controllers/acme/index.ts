import type { Controller } from '@certkit/runtime';
import type { ControllerContext } from '../context.ts';
import {
  CHALLENGES_CONTROLLER,
  newChallengeScheduler,
  newChallengesController,
} from './challenges/controller.ts';
import { newOrdersController, ORDERS_CONTROLLER } from './orders/controller.ts';

/**
 * The acme.cert-manager.io controllers: Orders, Challenges and the Challenge scheduler, with their event
 * handlers on the context's informers. The ACME signer that creates Orders is a CertificateRequest controller.
 */
export function registerAcmeControllers(
  ctx: ControllerContext,
  enabled: (name: string) => boolean = () => true,
): Controller[] {
  const controllers: Controller[] = [];
  if (enabled(ORDERS_CONTROLLER)) controllers.push(newOrdersController(ctx));
  // The scheduler is part of cert-manager's challenges controller: enabled and disabled with it.
  if (enabled(CHALLENGES_CONTROLLER))
    controllers.push(newChallengesController(ctx), newChallengeScheduler(ctx));
  return controllers;
}

export { CHALLENGES_CONTROLLER, CHALLENGES_SCHEDULER } from './challenges/controller.ts';
export { ORDERS_CONTROLLER } from './orders/controller.ts';
