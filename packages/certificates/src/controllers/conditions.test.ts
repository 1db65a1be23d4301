import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateCondition, IssuerCondition } from '../api/types.ts';
import { findCondition, setCondition } from './conditions.ts';

describe('setCondition', () => {
  const t1 = new Date('2030-01-01T00:00:00.123Z');
  const t2 = new Date('2030-01-02T00:00:00Z');

  it('adds a condition stamped now, at second precision', () => {
    const list = setCondition<IssuerCondition>(
      undefined,
      { type: 'Ready', status: 'False', reason: 'A' },
      t1,
    );
    assert.deepEqual(list, [
      { type: 'Ready', status: 'False', reason: 'A', lastTransitionTime: '2030-01-01T00:00:00Z' },
    ]);
  });

  it('keeps lastTransitionTime unless the status changes, and never mutates its input', () => {
    const first = Object.freeze(
      setCondition<IssuerCondition>(undefined, { type: 'Ready', status: 'False', reason: 'A' }, t1),
    );
    const reworded = setCondition(first, { type: 'Ready', status: 'False', reason: 'B' }, t2);
    assert.equal(reworded[0].lastTransitionTime, '2030-01-01T00:00:00Z');
    assert.equal(reworded[0].reason, 'B');
    const flipped = setCondition(first, { type: 'Ready', status: 'True', reason: 'C' }, t2);
    assert.equal(flipped[0].lastTransitionTime, '2030-01-02T00:00:00Z');
    assert.equal(first[0].reason, 'A');
  });

  it('stamps now when the previous condition of that status has no lastTransitionTime', () => {
    const list = setCondition<CertificateCondition>(
      [{ type: 'Ready', status: 'True', reason: 'Ready' }],
      { type: 'Ready', status: 'True', reason: 'Ready' },
      t2,
    );
    assert.equal(list[0].lastTransitionTime, '2030-01-02T00:00:00Z');
  });

  it('replaces the condition of that type where it stands and leaves the others alone', () => {
    const issuing: CertificateCondition = {
      type: 'Issuing',
      status: 'True',
      reason: 'DoesNotExist',
      message: 'first',
      lastTransitionTime: '2029-12-31T00:00:00Z',
      observedGeneration: 1,
    };
    const ready: CertificateCondition = {
      type: 'Ready',
      status: 'False',
      reason: 'DoesNotExist',
      message: 'no Secret',
      lastTransitionTime: '2029-12-31T00:00:00Z',
      observedGeneration: 1,
    };
    const list = setCondition<CertificateCondition>(
      [issuing, ready],
      { type: 'Issuing', status: 'True', reason: 'Expired', message: 'second', observedGeneration: 2 },
      t1,
    );
    assert.deepEqual(list, [
      {
        type: 'Issuing',
        status: 'True',
        reason: 'Expired',
        message: 'second',
        lastTransitionTime: '2029-12-31T00:00:00Z',
        observedGeneration: 2,
      },
      ready,
    ]);
    assert.equal(list[1], ready);
  });

  it('drops what the new condition leaves out, observedGeneration included', () => {
    const list = setCondition<CertificateCondition>(
      [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'm', observedGeneration: 3 }],
      { type: 'Ready', status: 'False', reason: 'Expired' },
      t1,
    );
    assert.deepEqual(list, [
      { type: 'Ready', status: 'False', reason: 'Expired', lastTransitionTime: '2030-01-01T00:00:00Z' },
    ]);
  });
});

describe('findCondition', () => {
  it('finds a condition by type, or nothing', () => {
    const list: IssuerCondition[] = [
      { type: 'Ready', status: 'True' },
      { type: 'Other', status: 'False' },
    ];
    assert.equal(findCondition(list, 'Other'), list[1]);
    assert.equal(findCondition(list, 'Missing'), undefined);
    assert.equal(findCondition(undefined, 'Ready'), undefined);
  });
});
