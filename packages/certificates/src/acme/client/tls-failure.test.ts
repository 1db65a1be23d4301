import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { untrustedChainMessage } from './tls-failure.ts';

function tlsError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('untrustedChainMessage', () => {
  const nodeText =
    'unable to verify the first certificate; if the root CA is installed locally, try running Node.js with --use-system-ca';

  it("says what to set on the Issuer instead of Node's advice", () => {
    assert.equal(
      untrustedChainMessage(tlsError(nodeText, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'), false),
      "tls: failed to verify certificate: x509: certificate signed by unknown authority (unable to verify the first certificate): give the CA that signed the server's certificate in spec.acme.caBundle",
    );
    assert.equal(
      untrustedChainMessage(
        tlsError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN'),
        true,
      ),
      "tls: failed to verify certificate: x509: certificate signed by unknown authority (self-signed certificate in certificate chain): spec.acme.caBundle does not hold the CA that signed the server's certificate",
    );
  });

  it('leaves every other failure to its own message', () => {
    assert.equal(
      untrustedChainMessage(tlsError('certificate has expired', 'CERT_HAS_EXPIRED'), false),
      undefined,
    );
    assert.equal(
      untrustedChainMessage(tlsError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), true),
      undefined,
    );
    assert.equal(untrustedChainMessage(new Error('no code'), false), undefined);
    assert.equal(untrustedChainMessage('not an error', false), undefined);
  });
});
