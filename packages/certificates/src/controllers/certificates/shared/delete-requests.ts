import { isNotFound } from '@certkit/apimachinery';
import type { CertificateRequest } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';

/**
 * Deletes CertificateRequests a Certificate controller has decided to drop (the request manager's stale or
 * failed ones, the revision manager's beyond the history limit). The uid precondition makes sure the request
 * deleted is the one that was read, not a namesake created since; one already gone is fine.
 */
export async function deleteRequests(
  ctx: ControllerContext,
  requests: readonly CertificateRequest[],
  signal: AbortSignal,
): Promise<void> {
  for (const cr of requests) {
    try {
      await ctx.certificateRequestClient.delete(cr.metadata.namespace, cr.metadata.name ?? '', {
        signal,
        preconditions: { uid: cr.metadata.uid },
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
