import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { createTestCa } from '@certkit/testenv/pki/auth-certs';
import { algorithmOf, keyId, signingKeyFromPem, verificationKeysFromPem } from './keys.ts';

const ec = (namedCurve: string) => generateKeyPairSync('ec', { namedCurve });

describe('ServiceAccount keys', () => {
  it('derives the key id kube-apiserver derives: base64url SHA-256 of the DER SubjectPublicKeyInfo', () => {
    const { publicKey } = ec('P-256');
    const expected = createHash('sha256')
      .update(publicKey.export({ type: 'spki', format: 'der' }))
      .digest('base64url');
    assert.equal(keyId(publicKey), expected);
    assert.doesNotMatch(keyId(publicKey), /[=+/]/);
  });

  it('signs RSA with RS256 and ECDSA by curve; refuses other keys', () => {
    assert.equal(algorithmOf(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey), 'RS256');
    assert.equal(algorithmOf(ec('P-256').publicKey), 'ES256');
    assert.equal(algorithmOf(ec('P-384').publicKey), 'ES384');
    assert.equal(algorithmOf(ec('P-521').publicKey), 'ES512');
    assert.throws(() => algorithmOf(ec('secp256k1').publicKey), /unsupported elliptic curve secp256k1/);
    assert.throws(
      () => algorithmOf(generateKeyPairSync('ed25519').publicKey),
      /unsupported key type ed25519: must be RSA or ECDSA/,
    );
  });

  it('reads a signing key from PKCS#8 and SEC 1 PEM, and says which file is not one', () => {
    const { privateKey, publicKey } = ec('P-256');
    for (const type of ['pkcs8', 'sec1'] as const) {
      const key = signingKeyFromPem(privateKey.export({ type, format: 'pem' }) as string, 'sa.key');
      assert.equal(key.kid, keyId(publicKey));
      assert.equal(key.alg, 'ES256');
    }
    assert.throws(
      () => signingKeyFromPem('nothing', '/etc/sa.key'),
      /^Error: \/etc\/sa\.key: not a PEM private key/,
    );
  });

  it('reads every public key of a key file: public keys, private keys and certificates', async () => {
    const a = ec('P-256');
    const b = ec('P-384');
    const ca = await createTestCa('key-file-ca');
    const pem = [
      a.publicKey.export({ type: 'spki', format: 'pem' }),
      b.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      ca.certPem,
    ].join('');
    const keys = verificationKeysFromPem(pem, 'keys.pem');
    assert.deepEqual(
      keys.map((k) => k.kid),
      [keyId(a.publicKey), keyId(b.publicKey), keyId(new X509Certificate(ca.certPem).publicKey)],
    );
    assert.throws(() => verificationKeysFromPem('no pem here', 'keys.pem'), /keys\.pem holds no PEM key/);
    assert.throws(
      () => verificationKeysFromPem('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n', 'k.pem'),
      /k\.pem: PEM block 1 \(PUBLIC KEY\)/,
    );
  });
});
