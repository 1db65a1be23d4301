import type { MetricsRegistry } from '@certkit/runtime';
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';

/**
 * `certmanager_certificate_challenge_status`, as cert-manager's ACME collector exports it
 * (internal/collectors/acme_collector.go upstream): for every Challenge in the cache, one series per state in
 * upstream's order, 1 for the state it is in and 0 for the others, labelled with its status, name, reason
 * and whether it is processing. Read from the Challenge informer's store when scraped, as upstream reads its
 * lister, so issuing costs nothing more and a deleted Challenge's series simply stop.
 */

/** Upstream's list of states, with "" (no state yet) in its place. */
export const CHALLENGE_METRIC_STATES = [
  'ready',
  'valid',
  'errored',
  'expired',
  'invalid',
  'processing',
  '',
  'pending',
] as const;

/**
 * The context whose Challenges each registry reports. A process runs one controller; a test process that
 * starts several on the shared default registry reports the one started last (a metric read from a function
 * has one owner in the registry, so the function is registered once and looks its context up here).
 */
const reported = new WeakMap<MetricsRegistry, ControllerContext>();

export function registerChallengeMetrics(metrics: MetricsRegistry, ctx: ControllerContext): void {
  const registered = reported.has(metrics);
  reported.set(metrics, ctx);
  if (registered) return;
  metrics.gaugeFunc('certmanager_certificate_challenge_status', 'The status of certificate challenges', () =>
    challengeStatusSeries(reported.get(metrics)?.challenges.getStore().list() ?? []),
  );
}

/** The gauge's series for these Challenges. */
export function* challengeStatusSeries(challenges: Iterable<Challenge>) {
  for (const ch of challenges) {
    const current = ch.status?.state ?? '';
    for (const status of CHALLENGE_METRIC_STATES) {
      const labels = {
        status,
        domain: ch.spec.dnsName,
        reason: ch.status?.reason ?? '',
        // Go's fmt.Sprint of the bool.
        processing: String(ch.status?.processing ?? false),
        name: ch.metadata.name ?? '',
        namespace: ch.metadata.namespace ?? '',
        type: ch.spec.type,
      };
      yield [labels, status === current ? 1 : 0] as const;
    }
  }
}
