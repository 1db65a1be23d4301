import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeUsageStrings } from './usages.ts';

describe('kubeUsageStrings', () => {
  it('defaults to digital signature and key encipherment, and adds cert sign for a CA', () => {
    assert.deepEqual(kubeUsageStrings(undefined, false), ['digital signature', 'key encipherment']);
    assert.deepEqual(kubeUsageStrings([], true), ['digital signature', 'key encipherment', 'cert sign']);
  });

  it('lists key usages in bit order, then extended usages as given, aliases under their kube names', () => {
    assert.deepEqual(
      kubeUsageStrings(['client auth', 'key encipherment', 'signing', 'server auth', 's/mime'], false),
      ['digital signature', 'key encipherment', 'client auth', 'server auth', 'email protection'],
    );
  });

  it('refuses usages cert-manager does not know', () => {
    assert.throws(() => kubeUsageStrings(['teleport'], false), /unknown key usages: \[teleport\]/);
  });
});
