/**
 * Which of an issuer's solvers answers an authorization, exactly as cert-manager picks it
 * (pkg/util/solverpicker, pkg/controller/acmeorders/selectors): solvers are scanned in order, each one
 * usable only if the authorization offers a challenge of its type; a dnsNames hit beats everything, then
 * the longest matching dnsZone, then the most matchLabels; on a tie the earlier solver stays. A solver
 * without a selector is a default, taken only while nothing else is picked. Wildcards are only solvable
 * by DNS-01 because ACME servers offer nothing else for them (RFC 8555 §7.1.3), which this honours by
 * looking at the offered challenges, not at the name.
 */

import type {
  ACMEAuthorization,
  ACMEChallenge,
  ACMEChallengeSolver,
  CertificateDNSNameSelector,
} from '../../api/acme-types.ts';
import { AcmeWireChallengeTypes } from '../../api/acme-constants.ts';

/** How well one sub-selector matched: whether it did, and its weight. */
interface Match {
  matches: boolean;
  count: number;
}

/** matchLabels: every pair on the Order's labels; the weight is the number of pairs. */
export function matchLabels(selector: CertificateDNSNameSelector, labels: Record<string, string>): Match {
  const required = Object.entries(selector.matchLabels ?? {});
  if (required.length === 0) return { matches: true, count: 0 };
  for (const [key, value] of required) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return { matches: false, count: 0 };
  }
  return { matches: true, count: required.length };
}

/** dnsNames: the name (`*.` + identifier for a wildcard) listed exactly; weight 1 however many match. */
export function matchDNSNames(selector: CertificateDNSNameSelector, name: string): Match {
  const names = selector.dnsNames ?? [];
  if (names.length === 0) return { matches: true, count: 0 };
  return names.includes(name) ? { matches: true, count: 1 } : { matches: false, count: 0 };
}

/**
 * A name's labels from the right, each with the dot that follows it, as miekg/dns splits them: the last
 * label of `example.com.` is `com.`, of `example.com` it is `com`, so the two do not compare equal.
 */
function labelsFromRight(name: string): string[] {
  if (name === '.' || name === '') return [];
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '.') {
      parts.push(name.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < name.length) parts.push(name.slice(start));
  return parts.reverse();
}

/** dns.CountLabel. */
export function countLabels(name: string): number {
  return labelsFromRight(name).length;
}

/** dns.CompareDomainName: how many labels two names share from the right, ASCII case-insensitively. */
export function compareDomainName(a: string, b: string): number {
  const left = labelsFromRight(a);
  const right = labelsFromRight(b);
  let n = 0;
  while (n < left.length && n < right.length && asciiLower(left[n]) === asciiLower(right[n])) n++;
  return n;
}

const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** dnsZones: a zone whose every label ends the name; the weight is the label count of the longest one. */
export function matchDNSZones(selector: CertificateDNSNameSelector, name: string): Match {
  const zones = selector.dnsZones ?? [];
  if (zones.length === 0) return { matches: true, count: 0 };
  let longest = 0;
  for (const zone of zones) {
    const shared = compareDomainName(zone, name);
    if (shared === countLabels(zone) && shared > longest) longest = shared;
  }
  return { matches: longest > 0, count: longest };
}

export interface PickedSolver {
  /** The solver (a copy: callers may change it, e.g. for the Order's override annotations). */
  solver: ACMEChallengeSolver;
  /** Its index in the issuer's list, for messages. */
  index: number;
  /** The first challenge the authorization offers of the solver's type. */
  challenge: ACMEChallenge;
}

/** The first offered challenge a solver can answer. */
function challengeFor(
  solver: ACMEChallengeSolver,
  challenges: readonly ACMEChallenge[],
): ACMEChallenge | undefined {
  return challenges.find(
    (c) =>
      (c.type === AcmeWireChallengeTypes.http01 && solver.http01) ||
      (c.type === AcmeWireChallengeTypes.dns01 && solver.dns01),
  );
}

/** Is `candidate`'s match weightier than the current pick's? False keeps the current (earlier) one. */
function outranks(candidate: Weights, current: Weights): boolean {
  const candidateNamed = candidate.dnsNames > 0;
  const currentNamed = current.dnsNames > 0;
  if (candidateNamed !== currentNamed) return candidateNamed;
  if (!candidateNamed) {
    const candidateZoned = candidate.dnsZones > 0;
    const currentZoned = current.dnsZones > 0;
    if (candidateZoned !== currentZoned) return candidateZoned;
  }
  if (candidate.dnsZones !== current.dnsZones) return candidate.dnsZones > current.dnsZones;
  return candidate.labels > current.labels;
}

interface Weights {
  labels: number;
  dnsNames: number;
  dnsZones: number;
}

/**
 * The solver for one authorization of an Order, or undefined when none can be used (the Order then waits,
 * as upstream, with a Warning event).
 */
export function pickSolver(
  authorization: Pick<ACMEAuthorization, 'identifier' | 'wildcard' | 'challenges'>,
  solvers: readonly ACMEChallengeSolver[],
  orderLabels: Record<string, string> = {},
): PickedSolver | undefined {
  const name = authorization.wildcard
    ? `*.${authorization.identifier ?? ''}`
    : (authorization.identifier ?? '');
  const challenges = authorization.challenges ?? [];
  let picked: (PickedSolver & { weights: Weights }) | undefined;
  solvers.forEach((solver, index) => {
    const challenge = challengeFor(solver, challenges);
    if (!challenge) return;
    if (!solver.selector) {
      // A default fills an empty pick only; it never displaces anything, not even an earlier default.
      if (!picked) picked = { solver, index, challenge, weights: { labels: 0, dnsNames: 0, dnsZones: 0 } };
      return;
    }
    const labels = matchLabels(solver.selector, orderLabels);
    const dnsNames = matchDNSNames(solver.selector, name);
    const dnsZones = matchDNSZones(solver.selector, name);
    if (!labels.matches || !dnsNames.matches || !dnsZones.matches) return;
    const weights = { labels: labels.count, dnsNames: dnsNames.count, dnsZones: dnsZones.count };
    if (!picked || outranks(weights, picked.weights)) picked = { solver, index, challenge, weights };
  });
  if (!picked) return undefined;
  return { solver: structuredClone(picked.solver), index: picked.index, challenge: { ...picked.challenge } };
}
