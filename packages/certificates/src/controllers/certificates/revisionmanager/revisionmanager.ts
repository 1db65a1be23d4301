import type { Reconciler } from '@certkit/runtime';
import { Defaults } from '../../../api/constants.ts';
import type { Certificate, CertificateRequest } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { deleteRequests } from '../shared/delete-requests.ts';
import { liveCertificate, ownedRequests, requestRevision } from '../shared/gather.ts';
import { hasCondition } from '../shared/status.ts';

/**
 * certificates-revision-manager: once a Certificate is Ready, deletes the CertificateRequests it owns beyond
 * spec.revisionHistoryLimit (default 1), oldest revision first, so that requests do not pile up renewal
 * after renewal (cert-manager issue #5838).
 */

export const REVISION_MANAGER_CONTROLLER = 'certificates-revision-manager';

/** The owned requests to delete to keep `limit`, oldest revision first; unnumbered ones are not counted. */
export function requestsBeyondLimit(
  requests: readonly CertificateRequest[],
  limit: number,
): CertificateRequest[] {
  if (limit >= requests.length) return [];
  const numbered = requests
    .map((cr) => ({ cr, revision: requestRevision(cr) }))
    .filter((r): r is { cr: CertificateRequest; revision: number } => r.revision !== undefined)
    .sort((a, b) => a.revision - b.revision);
  const excess = numbered.length - limit;
  return excess > 0 ? numbered.slice(0, excess).map((r) => r.cr) : [];
}

/**
 * Whether the revision manager may do anything for the Certificate in this state: only once it is Ready. Its
 * event handlers wake it only then (index.ts): becoming Ready is a Certificate event.
 */
export function revisionManagerMayAct(cert: Certificate): boolean {
  return hasCondition(cert, 'Ready', 'True');
}

export function revisionManagerReconciler(ctx: ControllerContext): Reconciler {
  return async (request, signal) => {
    const cert = liveCertificate(ctx, request);
    if (!cert || !revisionManagerMayAct(cert)) return;
    const limit = cert.spec.revisionHistoryLimit ?? Defaults.revisionHistoryLimit;
    for (const cr of requestsBeyondLimit(ownedRequests(ctx, cert), limit)) {
      ctx.log({
        level: 'info',
        msg: 'garbage collecting old certificate request revision',
        namespace: cr.metadata.namespace,
        name: cr.metadata.name,
        revision: requestRevision(cr),
      });
      await deleteRequests(ctx, [cr], signal);
    }
  };
}
