import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fromAcmeState, isFailureState, isFinalState } from './sync.ts';

describe('ACME states', () => {
  it('keeps the states the CRDs admit, and reads deactivated and revoked authorizations as invalid', () => {
    for (const state of ['pending', 'ready', 'processing', 'valid', 'invalid', 'expired']) {
      assert.equal(fromAcmeState(state), state);
    }
    assert.equal(fromAcmeState('deactivated'), 'invalid');
    assert.equal(fromAcmeState('revoked'), 'invalid');
  });

  it("has cert-manager's failure and final states (ready is neither)", () => {
    assert.deepEqual(
      ['valid', 'ready', 'pending', 'processing', 'invalid', 'expired', 'errored', undefined].map((s) => [
        s,
        isFailureState(s),
        isFinalState(s),
      ]),
      [
        ['valid', false, true],
        ['ready', false, false],
        ['pending', false, false],
        ['processing', false, false],
        ['invalid', true, true],
        ['expired', true, true],
        ['errored', true, true],
        [undefined, false, false],
      ],
    );
  });
});
