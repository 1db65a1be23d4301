import { isConflict, isNotFound } from '@certkit/apimachinery';
import { Controller, keyFor, type Request, type Result } from '@certkit/runtime';
import { ACME_API_VERSION, AcmeKinds } from '../../../api/acme-constants.ts';
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { acmeRateLimiter } from '../orders/controller.ts';
import { CHALLENGES_CONTROLLER } from './controller-name.ts';
import { scheduleChallenges } from './scheduler.ts';
import { ChallengeSync, type HTTP01Passes } from './sync.ts';

/**
 * The Challenges controller and its scheduler (cert-manager's `challenges` controller): the scheduler marks
 * Challenges `processing` within `--max-concurrent-challenges`, and the controller works each one through
 * ChallengeSync. The scheduler is itself a controller with one key that runs a pass, then comes back a second
 * later (as upstream's 1 s ticker) or sooner on a Challenge event; being a controller it runs on the leader only.
 */

export { CHALLENGES_CONTROLLER };
export const CHALLENGES_SCHEDULER = 'challenges-scheduler';
const SCHEDULER_PERIOD_MS = 1_000;
const SCHEDULER_KEY: Request = { name: 'schedule' };

export function newChallengesController(ctx: ControllerContext): Controller {
  const checkedAt = new Map<string, number>();
  const http01Passes = new Map<string, HTTP01Passes>();
  const controller = new Controller({
    name: CHALLENGES_CONTROLLER,
    async reconcile(request, signal): Promise<Result | void> {
      const ch = ctx.challenges.getStore().get(keyFor(request.namespace, request.name));
      if (!ch) return;
      return new ChallengeSync(ctx, ch, checkedAt, http01Passes).run(signal);
    },
    maxConcurrentReconciles: ctx.options.maxConcurrentReconciles,
    rateLimiter: acmeRateLimiter(),
    log: ctx.log,
  });
  const enqueue = (ch: Challenge) =>
    controller.enqueue({ namespace: ch.metadata.namespace, name: ch.metadata.name ?? '' });
  ctx.challenges.addEventHandler({
    onAdd: enqueue,
    onUpdate: (_old, ch) => enqueue(ch),
    onDelete: (ch) => {
      const uid = 'metadata' in ch ? ch.metadata.uid : ch.obj?.metadata.uid;
      if (uid) {
        checkedAt.delete(uid);
        http01Passes.delete(uid);
      }
    },
  });
  return controller;
}

export function newChallengeScheduler(ctx: ControllerContext): Controller {
  async function reconcile(): Promise<Result> {
    const picked = scheduleChallenges(ctx.challenges.getStore().list(), ctx.options.maxConcurrentChallenges);
    for (const ch of picked) {
      try {
        await ctx.challengeClient.update(
          {
            ...ch,
            apiVersion: ACME_API_VERSION,
            kind: AcmeKinds.Challenge,
            status: { ...ch.status, processing: true },
          },
          { subresource: 'status' },
        );
      } catch (err) {
        // Changed or gone meanwhile: the next pass sees the new state.
        if (isConflict(err) || isNotFound(err)) continue;
        throw err;
      }
      ctx.recorder
        .from(CHALLENGES_CONTROLLER)
        .normal(
          { ...ch, apiVersion: ACME_API_VERSION, kind: AcmeKinds.Challenge },
          'Started',
          'Challenge scheduled for processing',
        );
    }
    return { requeueAfter: SCHEDULER_PERIOD_MS };
  }
  const scheduler = new Controller({
    name: CHALLENGES_SCHEDULER,
    reconcile,
    maxConcurrentReconciles: 1,
    log: ctx.log,
  });
  ctx.challenges.addEventHandler({ onAdd: () => scheduler.enqueue(SCHEDULER_KEY) });
  return scheduler;
}
