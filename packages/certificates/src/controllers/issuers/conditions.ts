import type { GenericIssuer, IssuerCondition } from '../../api/types.ts';
import { findCondition } from '../conditions.ts';

/** An issuer's Ready condition, as the CertificateRequests waiting on the issuer read it. */

export function issuerReadyCondition(issuer: GenericIssuer): IssuerCondition | undefined {
  return findCondition(issuer.status?.conditions, 'Ready');
}

/**
 * Ready=True for the issuer's current generation. cert-manager looks at type and status only; we also refuse a
 * Ready computed for an older spec (say, before secretName changed), since the issuer controller reconciles
 * the new generation at once and its readiness event then wakes the waiting requests.
 */
export function isIssuerReady(issuer: GenericIssuer): boolean {
  const ready = issuerReadyCondition(issuer);
  if (ready?.status !== 'True') return false;
  const generation = issuer.metadata?.generation;
  return (
    ready.observedGeneration === undefined ||
    generation === undefined ||
    ready.observedGeneration === generation
  );
}
