import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issuerKindOfType, signerIssuerRef } from './signer-name.ts';

describe('signerIssuerRef', () => {
  it('reads an Issuer as namespace, then name (dots allowed after the first)', () => {
    assert.deepEqual(signerIssuerRef('issuers.cert-manager.io/sandbox.my-ca'), {
      type: 'issuers',
      group: 'cert-manager.io',
      namespace: 'sandbox',
      name: 'my-ca',
    });
    assert.deepEqual(signerIssuerRef('issuers.cert-manager.io/sandbox.ca.v2'), {
      type: 'issuers',
      group: 'cert-manager.io',
      namespace: 'sandbox',
      name: 'ca.v2',
    });
  });

  it('reads a ClusterIssuer as one name, dots and all', () => {
    assert.deepEqual(signerIssuerRef('clusterissuers.cert-manager.io/root.example'), {
      type: 'clusterissuers',
      group: 'cert-manager.io',
      namespace: '',
      name: 'root.example',
    });
  });

  it('reads a name without a dot as a name without a namespace, whatever the type', () => {
    assert.deepEqual(signerIssuerRef('issuers.cert-manager.io/lonely'), {
      type: 'issuers',
      group: 'cert-manager.io',
      namespace: '',
      name: 'lonely',
    });
  });

  it('keeps the group as written, so that other groups can be told apart', () => {
    assert.equal(signerIssuerRef('issuers.example.com/ns.ca')?.group, 'example.com');
    assert.equal(signerIssuerRef('kubernetes.io/kube-apiserver-client')?.type, 'kubernetes');
  });

  it('refuses malformed names', () => {
    for (const name of [
      '',
      'issuers.cert-manager.io',
      'a/b/c',
      'issuers/ns.name',
      'issuers.cert-manager.io/',
      'issuers.cert-manager.io/.x',
    ])
      assert.equal(signerIssuerRef(name), undefined, name);
  });
});

describe('issuerKindOfType', () => {
  it('knows issuers and clusterissuers only', () => {
    assert.equal(issuerKindOfType('issuers'), 'Issuer');
    assert.equal(issuerKindOfType('clusterissuers'), 'ClusterIssuer');
    assert.equal(issuerKindOfType('Issuers'), undefined);
    assert.equal(issuerKindOfType('signers'), undefined);
  });
});
