import { jsonEqual } from '@certkit/apimachinery';
import type { CertificateRequest } from '../../../api/types.ts';

/**
 * Whether a CertificateRequest update changed nothing but the message of its Ready=False/Pending condition.
 * An ACME request does that at every state of its Order ("Waiting on certificate issuance from order …:
 * \"pending\"", then "ready", …), as upstream's does. No Certificate controller reads a Pending message (only
 * Failed ones, and the reasons), so these updates need not wake the six of them: an ACME issuance made
 * about 18 such reconciles per Certificate that could change nothing (bench:acme).
 */
export function onlyPendingMessageChanged(old: CertificateRequest, cr: CertificateRequest): boolean {
  const before = readyOf(old);
  const after = readyOf(cr);
  if (!before || !after || before.message === after.message) return false;
  if (before.reason !== 'Pending' || after.reason !== 'Pending' || before.status !== after.status)
    return false;
  return jsonEqual(withoutReadyMessage(old), withoutReadyMessage(cr));
}

function readyOf(cr: CertificateRequest) {
  return cr.status?.conditions?.find((c) => c.type === 'Ready');
}

/** The request as compared: no resourceVersion or managedFields, and the Ready message blanked. */
function withoutReadyMessage(cr: CertificateRequest): unknown {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = cr.metadata ?? {};
  return {
    ...cr,
    metadata,
    status: {
      ...cr.status,
      conditions: cr.status?.conditions?.map((c) => (c.type === 'Ready' ? { ...c, message: '' } : c)),
    },
  };
}
