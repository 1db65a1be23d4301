import type { Challenge } from '../../../api/types.ts';
import { isFinalState } from '../orders/sync.ts';

/**
 * Which Challenges start processing next (cert-manager's acmechallenges/scheduler): never two at once for the
 * same name and type (a wildcard and its apex share one DNS-01 record name, so they take turns), oldest
 * first, at most `max` processing in all and at most 20 started per pass. Pure: the caller marks them.
 */

/** cert-manager's maxChallengesPerSchedule. */
export const MAX_SCHEDULED_PER_PASS = 20;

const pairOf = (ch: Challenge) => `${ch.spec.dnsName}\0${ch.spec.type}`;

function created(ch: Challenge): number {
  return Date.parse(ch.metadata.creationTimestamp ?? '') || 0;
}

export function scheduleChallenges(all: readonly Challenge[], max: number): Challenge[] {
  // Every Challenge still marked processing counts, final ones included, as upstream counts them.
  const processing = all.filter((ch) => ch.status?.processing === true);
  const busy = new Set(processing.map(pairOf));
  const room = Math.min(MAX_SCHEDULED_PER_PASS, max - processing.length);
  if (room <= 0) return [];
  const candidates = all
    .filter(
      (ch) => !ch.metadata.deletionTimestamp && !ch.status?.processing && !isFinalState(ch.status?.state),
    )
    .sort((a, b) => created(a) - created(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  const picked: Challenge[] = [];
  for (const ch of candidates) {
    if (picked.length >= room) break;
    const pair = pairOf(ch);
    if (busy.has(pair)) continue;
    busy.add(pair);
    picked.push(ch);
  }
  return picked;
}
