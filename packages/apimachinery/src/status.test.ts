import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isStatus, newBadRequest, newStatusError, StatusError } from './status.ts';

describe('newStatusError', () => {
  it('builds a Failure Status with the code, reason, message and details given', () => {
    const err = newStatusError(409, 'Conflict', 'Apply failed with 1 conflict', {
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.x' }],
    });
    assert.ok(err instanceof StatusError);
    assert.deepEqual(err.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict',
      reason: 'Conflict',
      code: 409,
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.x' }],
      },
    });
    assert.ok(isStatus(err.status));
  });

  it('leaves details out when none are given, as the named constructors do', () => {
    const err = newStatusError(415, 'UnsupportedMediaType', 'no');
    assert.equal('details' in err.status, false);
    assert.deepEqual(err.status, {
      ...newBadRequest('no').status,
      reason: 'UnsupportedMediaType',
      code: 415,
    });
  });
});
