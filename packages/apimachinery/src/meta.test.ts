import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newControllerRef } from './meta.ts';

describe('newControllerRef', () => {
  it("names the owner by the given kind and the owner's name and uid, as the blocking controller", () => {
    const owner = { metadata: { name: 'web', namespace: 'default', uid: 'b7f2c1' } };
    assert.deepEqual(newControllerRef(owner, 'acme.cert-manager.io/v1', 'Order'), {
      apiVersion: 'acme.cert-manager.io/v1',
      kind: 'Order',
      name: 'web',
      uid: 'b7f2c1',
      controller: true,
      blockOwnerDeletion: true,
    });
  });
});
