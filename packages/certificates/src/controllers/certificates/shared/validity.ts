import { formatTime } from '@certkit/apimachinery';
import type { CertificateSpec, CertificateStatus } from '../../../api/types.ts';
import { renewalTime } from './renewal.ts';
import { setField } from './status.ts';

/**
 * status.notBefore, notAfter and renewalTime, from the validity of the certificate in the Secret; cleared when
 * there is none. The readiness controller keeps them in line with the Secret; the issuing controller sets them
 * in the write that moves the revision on, so that a Certificate never shows a new revision with the previous
 * certificate's dates (and the trigger's wake-up at status.renewalTime is the new one at once).
 */
export function setValidity(
  status: CertificateStatus,
  validity: { notBefore: Date; notAfter: Date } | undefined,
  spec: CertificateSpec,
): void {
  if (!validity) {
    setField(status, 'notBefore', undefined);
    setField(status, 'notAfter', undefined);
    setField(status, 'renewalTime', undefined);
    return;
  }
  const { notBefore, notAfter } = validity;
  status.notBefore = formatTime(notBefore);
  status.notAfter = formatTime(notAfter);
  const renewal = renewalTime(notBefore, notAfter, spec);
  setField(status, 'renewalTime', renewal && formatTime(renewal));
}
