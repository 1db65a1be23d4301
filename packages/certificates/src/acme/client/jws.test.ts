import assert from 'node:assert/strict';
import { createHmac, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { describe, it } from 'node:test';
import { jwkThumbprint, loadAccountKey } from './account-key.ts';
import { decodeEabHmacKey, externalAccountBinding, signRequest } from './jws.ts';

const decode = (part: string | undefined): unknown =>
  JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'));

describe('account keys', () => {
  it('computes the RFC 7638 §3.1 example thumbprint', async () => {
    const jwk = {
      kty: 'RSA',
      n:
        '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs' +
        'tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5' +
        'hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    assert.equal(await jwkThumbprint(jwk), 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('derives alg, public JWK (no private members) and thumbprint from RSA, P-256 and P-384 keys', async () => {
    const rsa = await loadAccountKey(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
    assert.equal(rsa.algorithm, 'RS256');
    assert.deepEqual(Object.keys(rsa.publicJwk).sort(), ['e', 'kty', 'n']);
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const ec = await loadAccountKey(p256.export({ format: 'pem', type: 'sec1' }));
    assert.equal(ec.algorithm, 'ES256');
    assert.deepEqual(Object.keys(ec.publicJwk).sort(), ['crv', 'kty', 'x', 'y']);
    assert.equal(ec.thumbprint, await jwkThumbprint(createPublicKey(p256).export({ format: 'jwk' })));
    const p384 = await loadAccountKey(generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey);
    assert.equal(p384.algorithm, 'ES384');
  });

  it('refuses public keys and key types ACME accounts cannot use', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    await assert.rejects(loadAccountKey(publicKey), /must be a private key/);
    await assert.rejects(loadAccountKey(privateKey), /unsupported ACME account key type ed25519/);
    const secp256k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
    await assert.rejects(loadAccountKey(secp256k1), /unsupported ACME account key curve secp256k1/);
  });
});

describe('request JWS (RFC 8555 §6.2)', () => {
  it('carries the jwk before registration and the kid after, and verifies with the account key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = await loadAccountKey(privateKey);
    const url = 'https://acme.example/new-account';
    const withJwk = await signRequest({ key, url, nonce: 'n1', payload: { termsOfServiceAgreed: true } });
    assert.deepEqual(decode(withJwk.protected), { alg: 'ES256', nonce: 'n1', url, jwk: key.publicJwk });
    assert.deepEqual(decode(withJwk.payload), { termsOfServiceAgreed: true });
    // ES256 signatures are r||s (64 bytes), not DER: verify as JWS does.
    const signature = Buffer.from(withJwk.signature, 'base64url');
    assert.equal(signature.length, 64);
    assert.ok(
      verify(
        'sha256',
        Buffer.from(`${withJwk.protected}.${withJwk.payload}`),
        { key: publicKey, dsaEncoding: 'ieee-p1363' },
        signature,
      ),
    );

    const withKid = await signRequest({
      key,
      url,
      nonce: 'n2',
      kid: 'https://acme.example/acct/1',
      payload: {},
    });
    assert.deepEqual(decode(withKid.protected), {
      alg: 'ES256',
      nonce: 'n2',
      url,
      kid: 'https://acme.example/acct/1',
    });
    assert.equal(withKid.payload, 'e30', 'an empty object, as for accepting a challenge');
  });

  it('signs POST-as-GET with an empty payload (§6.3), RS256 with PKCS#1 v1.5', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const key = await loadAccountKey(privateKey);
    const jws = await signRequest({ key, url: 'https://a/o/1', nonce: 'n', kid: 'k', payload: undefined });
    assert.equal(jws.payload, '');
    assert.equal((decode(jws.protected) as { alg: string }).alg, 'RS256');
    assert.ok(
      verify('sha256', Buffer.from(`${jws.protected}.`), publicKey, Buffer.from(jws.signature, 'base64url')),
    );
  });

  it('binds an external account (§7.3.4): HS256 over the account JWK, kid = key ID, no nonce', async () => {
    const key = await loadAccountKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const hmacKey = decodeEabHmacKey('zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W');
    const url = 'https://acme.example/new-account';
    const eab = await externalAccountBinding({ keyID: 'kid-1', hmacKey, url, accountJwk: key.publicJwk });
    assert.deepEqual(decode(eab.protected), { alg: 'HS256', kid: 'kid-1', url });
    assert.deepEqual(decode(eab.payload), key.publicJwk);
    const mac = createHmac('sha256', hmacKey).update(`${eab.protected}.${eab.payload}`).digest('base64url');
    assert.equal(eab.signature, mac);
  });

  it('reads the EAB MAC key as unpadded base64url only, as cert-manager does', () => {
    assert.deepEqual(Buffer.from(decodeEabHmacKey('AAEC_-8')), Buffer.from([0, 1, 2, 0xff, 0xef]));
    assert.throws(() => decodeEabHmacKey('AAECAw=='), /not valid unpadded base64url/);
    assert.throws(() => decodeEabHmacKey('AA+/'), /not valid unpadded base64url/);
    assert.throws(
      () => decodeEabHmacKey('AAECA'),
      /not valid unpadded base64url/,
      'a length no encoding gives',
    );
    assert.throws(() => decodeEabHmacKey(''), /is empty/);
  });
});
