import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newNotFound, StatusError } from '@certkit/apimachinery';
import { describeConnectionError } from './cluster-errors.ts';

/** The words for a cluster without cert-manager's CRDs, which status, renew, approve and deny meet first. */

describe('a resource the server does not serve', () => {
  const unserved = () =>
    new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      code: 404,
    });
  const hint = 'are the cert-manager CRDs installed? (kubectl apply -f deploy/crds.yaml, or run certkit up)';

  it('says to install the CRDs, after the server’s words', () => {
    assert.equal(
      describeConnectionError(unserved()),
      `the server could not find the requested resource: ${hint}`,
    );
  });

  it('found through the wrapping error, whose words it keeps (cmctl’s "error when getting …")', () => {
    const wrapped = new Error(
      'error when getting Certificate resource: the server could not find the requested resource',
      { cause: unserved() },
    );
    assert.equal(describeConnectionError(wrapped), `${wrapped.message}: ${hint}`);
  });

  it('an object that is not there is not about the CRDs', () => {
    const missing = newNotFound({ group: 'cert-manager.io', resource: 'certificaterequests' }, 'nope');
    assert.equal(describeConnectionError(missing), undefined);
  });
});
