/** The request-reading helpers and the mapping of signing errors to cert-manager's reasons. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../../api/types.ts';
import { SigningError } from '../../pki/index.ts';
import { awaitsApproval } from './approver.ts';
import { isFinal } from './conditions.ts';
import { requestedDuration } from './request.ts';
import { needsWork, signingFailure } from './signer.ts';

const cr = (
  extra: Partial<CertificateRequest['spec']> = {},
  conditions: object[] = [],
): CertificateRequest => ({
  metadata: { name: 'r', namespace: 'ns' },
  spec: { request: '', issuerRef: { name: 'i' }, ...extra },
  status: { conditions: conditions as never },
});

describe('requestedDuration', () => {
  it('defaults to 90 days when unset or zero, and parses Go durations', () => {
    assert.equal(requestedDuration(cr()), 90 * 24 * 3600_000);
    assert.equal(requestedDuration(cr({ duration: '0s' })), 90 * 24 * 3600_000);
    assert.equal(requestedDuration(cr({ duration: '2h30m' })), 2.5 * 3600_000);
  });
  it('calls an unparseable duration an invalid request', () => {
    assert.throws(() => requestedDuration(cr({ duration: 'soon' })), {
      name: 'SigningError',
      reason: 'InvalidRequest',
    });
  });
});

describe('signingFailure', () => {
  it("uses each signer's reasons", () => {
    const invalid = new SigningError('InvalidRequest', 'bad csr');
    assert.deepEqual(signingFailure('ca', invalid), {
      failed: {
        reason: 'SigningError',
        message: 'Error generating certificate template: bad csr',
      },
    });
    assert.equal(
      (signingFailure('selfsigned', invalid) as { failed: { reason: string } }).failed.reason,
      'ErrorGenerating',
    );
    const mismatch = signingFailure(
      'selfsigned',
      new SigningError('KeyMismatch', 'CSR not signed by referenced private key'),
    );
    assert.equal((mismatch as { failed: { reason: string } }).failed.reason, 'ErrorKeyMatch');
    const issuer = signingFailure('ca', new SigningError('InvalidIssuer', 'expired'));
    assert.deepEqual(issuer, {
      failed: { reason: 'SigningError', message: 'Error signing certificate: expired' },
    });
  });
});

describe('request states', () => {
  const approved = { type: 'Approved', status: 'True' };
  const denied = { type: 'Denied', status: 'True' };
  it('approves only what is neither approved, denied nor final', () => {
    assert.equal(awaitsApproval(cr()), true);
    assert.equal(awaitsApproval(cr({}, [approved])), false);
    assert.equal(awaitsApproval(cr({}, [denied])), false);
    assert.equal(awaitsApproval(cr({}, [{ type: 'Ready', status: 'False', reason: 'Failed' }])), false);
    assert.equal(awaitsApproval(cr({}, [{ type: 'Ready', status: 'True', reason: 'Issued' }])), false);
  });
  it('keeps denied requests in play until Ready records the denial', () => {
    assert.equal(isFinal(cr({}, [denied])), true);
    assert.equal(needsWork(cr({}, [denied])), true);
    assert.equal(needsWork(cr({}, [denied, { type: 'Ready', status: 'False', reason: 'Denied' }])), false);
    assert.equal(needsWork(cr({}, [approved, { type: 'Ready', status: 'False', reason: 'Pending' }])), true);
    assert.equal(needsWork(cr({}, [approved, { type: 'InvalidRequest', status: 'True' }])), false);
  });
});
