/**
 * signer-approval.ts: the signer names an approval of a request is checked against, as cert-manager's
 * webhook builds them, and kube's guess of a resource name.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CertificateRequest } from '../../api/types.ts';
import { guessResource, signerNames } from './signer-approval.ts';

const request = (issuerRef: CertificateRequest['spec']['issuerRef']) =>
  ({ metadata: { name: 'r', namespace: 'team' }, spec: { request: '', issuerRef } }) as CertificateRequest;

describe('signer approval', () => {
  it('names the signers as cert-manager does: wildcard, then namespace.name or name', () => {
    const namespaced = request({ name: 'vault', kind: 'VaultIssuer', group: 'example.com' });
    assert.deepEqual(signerNames('vaultissuers', 'example.com', true, namespaced), [
      'vaultissuers.example.com/*',
      'vaultissuers.example.com/team.vault',
    ]);
    assert.deepEqual(signerNames('vaultclusterissuers', 'example.com', false, namespaced), [
      'vaultclusterissuers.example.com/*',
      'vaultclusterissuers.example.com/vault',
    ]);
  });

  it("guesses a kind's resource as kube does, without discovery", () => {
    assert.equal(guessResource('VaultIssuer'), 'vaultissuers');
    assert.equal(guessResource('GoogleCASClusterIssuer'), 'googlecasclusterissuers');
    assert.equal(guessResource('Policy'), 'policies');
    assert.equal(guessResource('Class'), 'classes');
  });
});
