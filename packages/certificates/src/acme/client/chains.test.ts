import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePem, decodePemBlocks } from '../../pki/pem.ts';
import { issue } from '@certkit/testenv/pki/ca';
import { chainMatchesPreferred, topIssuerCommonName } from './chains.ts';

describe('preferredChain matching', () => {
  it('looks at the issuer of the top-most certificate only, as cert-manager does', async () => {
    const root = await issue({ spec: { commonName: 'Example Root X1', isCA: true } });
    const intermediate = await issue({
      spec: { commonName: 'Example Intermediate', isCA: true },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const leaf = await issue({
      spec: { dnsNames: ['www.example.test'] },
      issuer: { certPem: intermediate.certPem, key: intermediate.key },
    });
    // The signer appends its issuer's chain; a server's chain is leaf then intermediate.
    const first = (pem: string) => encodePem('CERTIFICATE', decodePemBlocks(pem)[0].der);
    const chain = first(leaf.certPem) + first(intermediate.certPem);
    assert.equal(topIssuerCommonName(chain), 'Example Root X1');
    assert.ok(chainMatchesPreferred(chain, 'Example Root X1'));
    // The leaf's issuer is in the chain too, but it is not the top's issuer: no match.
    assert.ok(!chainMatchesPreferred(chain, 'Example Intermediate'));
    assert.equal(topIssuerCommonName(first(leaf.certPem)), 'Example Intermediate');
    assert.equal(topIssuerCommonName(''), undefined);
  });
});
