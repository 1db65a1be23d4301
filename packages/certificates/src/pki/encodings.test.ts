import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  additionalOutputData,
  COMBINED_PEM_KEY,
  combinedPem,
  DER_KEY,
  joinCertificateChain,
  privateKeyDer,
  splitCertificateChain,
} from './encodings.ts';
import { encodePrivateKey, generatePrivateKey, publicKeysEqual } from './keys.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';

describe('additionalOutputData', () => {
  it('DER is the DER inside tls.key, in whichever encoding tls.key uses', async () => {
    const key = await generatePrivateKey({ algorithm: 'RSA' });
    const pkcs1 = encodePrivateKey(key, 'PKCS1');
    const pkcs8 = encodePrivateKey(key, 'PKCS8');
    assert.ok(privateKeyDer(pkcs1).equals(key.export({ type: 'pkcs1', format: 'der' })));
    assert.ok(privateKeyDer(pkcs8).equals(key.export({ type: 'pkcs8', format: 'der' })));
    const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
    const sec1 = additionalOutputData([{ type: 'DER' }], encodePrivateKey(ec), '')[DER_KEY];
    assert.ok(publicKeysEqual(createPrivateKey({ key: sec1, format: 'der', type: 'sec1' }), ec));
  });

  it('CombinedPEM is the key PEM, a newline, then the chain', async () => {
    const root = await rootCa();
    const leaf = await issue({ spec: { commonName: 'x' }, issuer: { certPem: root.certPem, key: root.key } });
    const keyPem = encodePrivateKey(leaf.key);
    const data = additionalOutputData([{ type: 'CombinedPEM' }, { type: 'DER' }], keyPem, leaf.certPem);
    assert.equal(data[COMBINED_PEM_KEY].toString(), `${keyPem}\n${leaf.certPem}`);
    assert.equal(combinedPem(keyPem, leaf.certPem), `${keyPem}\n${leaf.certPem}`);
    assert.deepEqual(Object.keys(data).sort(), [DER_KEY, COMBINED_PEM_KEY].sort());
    assert.deepEqual(additionalOutputData(['DER'], keyPem, leaf.certPem)[DER_KEY], privateKeyDer(keyPem));
    assert.deepEqual(additionalOutputData(undefined, keyPem, leaf.certPem), {});
  });

  it('rejects unknown formats', () => {
    assert.throws(
      () => additionalOutputData([{ type: 'JKS' }], '', ''),
      /unknown additional output format JKS/,
    );
  });
});

describe('splitCertificateChain / joinCertificateChain', () => {
  it('splits a bundle into certificates and joins them back', async () => {
    const root = await rootCa();
    const intermediate = await issue({
      spec: { commonName: 'int', isCA: true },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: intermediate.certPem + root.certPem, key: intermediate.key },
    });
    const parts = splitCertificateChain(`# comment\n${leaf.certPem}\n\n`);
    assert.equal(parts.length, 2);
    assert.equal(parts[1], intermediate.certPem);
    assert.equal(joinCertificateChain(parts), leaf.certPem);
    assert.equal(joinCertificateChain([parts[0].trimEnd(), parts[1]]), leaf.certPem);
  });
});
