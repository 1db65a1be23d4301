import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateStatus } from '../../../api/types.ts';
import { type ConditionValue, setCertificateCondition } from './status.ts';

describe('setCertificateCondition', () => {
  const now = new Date('2030-01-01T00:00:00.500Z');
  const issuing: ConditionValue = { type: 'Issuing', status: 'True', reason: 'DoesNotExist', message: 'm' };

  it('sets observedGeneration from the Certificate read, and leaves it out without one', () => {
    const status: CertificateStatus = {};
    setCertificateCondition(status, issuing, 4, now);
    assert.deepEqual(status.conditions, [
      { ...issuing, lastTransitionTime: '2030-01-01T00:00:00Z', observedGeneration: 4 },
    ]);
    setCertificateCondition(status, { ...issuing, reason: 'Expired' }, undefined, new Date('2031-01-01Z'));
    assert.deepEqual(status.conditions, [
      { ...issuing, reason: 'Expired', lastTransitionTime: '2030-01-01T00:00:00Z' },
    ]);
  });

  it('replaces the status’s list rather than changing the one it held', () => {
    const held = Object.freeze([
      Object.freeze({ type: 'Ready', status: 'True' as const, lastTransitionTime: '2029-01-01T00:00:00Z' }),
    ]);
    const status: CertificateStatus = { conditions: held as CertificateStatus['conditions'] };
    setCertificateCondition(
      status,
      { type: 'Ready', status: 'False', reason: 'Expired', message: 'x' },
      1,
      now,
    );
    assert.notEqual(status.conditions, held);
    assert.equal(held[0].status, 'True');
    assert.deepEqual(status.conditions, [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Expired',
        message: 'x',
        lastTransitionTime: '2030-01-01T00:00:00Z',
        observedGeneration: 1,
      },
    ]);
  });

  it('writes only type, status, reason and message of the value given', () => {
    const status: CertificateStatus = {};
    const violation = { ...issuing, windowError: 'not for the API' } as ConditionValue;
    setCertificateCondition(status, violation, 1, now);
    assert.deepEqual(Object.keys(status.conditions![0]).sort(), [
      'lastTransitionTime',
      'message',
      'observedGeneration',
      'reason',
      'status',
      'type',
    ]);
  });
});
