import type { Certificate } from '../../api/types.ts';

/**
 * Which events wake a sub-controller that acts in every state, but in some states only on some events (the
 * issuing controller between issuances; docs/adr/1181). Beside `mayAct` (docs/adr/1150), which filters by
 * state alone. The sub-controller's own requeues are not filtered.
 */
export interface WakeFilter {
  /** A Certificate's update, as the event brings it before and after. */
  update(old: Certificate, cert: Certificate): boolean;
  /**
   * An event of something the cached Certificate does not name, but controls: a CertificateRequest, or a
   * Secret other than its spec.secretName (a next key). The Secret it names always wakes it.
   */
  controlled(cert: Certificate): boolean;
}
