import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  encodePrivateKey,
  generatePrivateKey,
  keyMatchesSpec,
  keySize,
  parsePrivateKey,
  privateKeySpecViolations,
  publicKeyOf,
  publicKeysEqual,
  subjectPublicKeyInfo,
  type PrivateKeyEncoding,
  type PrivateKeySpec,
} from './keys.ts';

const ENCODINGS: PrivateKeyEncoding[] = ['PKCS1', 'PKCS8'];

/** Every algorithm and size cert-manager accepts (RSA at its bounds and common sizes), plus the defaults. */
const SPECS: { spec: PrivateKeySpec; type: string; size: number | undefined; pkcs1Label: string }[] = [
  { spec: {}, type: 'rsa', size: 2048, pkcs1Label: 'RSA PRIVATE KEY' },
  { spec: { algorithm: 'RSA', size: 2048 }, type: 'rsa', size: 2048, pkcs1Label: 'RSA PRIVATE KEY' },
  { spec: { algorithm: 'RSA', size: 3072 }, type: 'rsa', size: 3072, pkcs1Label: 'RSA PRIVATE KEY' },
  { spec: { algorithm: 'RSA', size: 4096 }, type: 'rsa', size: 4096, pkcs1Label: 'RSA PRIVATE KEY' },
  { spec: { algorithm: 'ECDSA' }, type: 'ec', size: 256, pkcs1Label: 'EC PRIVATE KEY' },
  { spec: { algorithm: 'ECDSA', size: 256 }, type: 'ec', size: 256, pkcs1Label: 'EC PRIVATE KEY' },
  { spec: { algorithm: 'ECDSA', size: 384 }, type: 'ec', size: 384, pkcs1Label: 'EC PRIVATE KEY' },
  { spec: { algorithm: 'ECDSA', size: 521 }, type: 'ec', size: 521, pkcs1Label: 'EC PRIVATE KEY' },
  // Ed25519 has no PKCS#1 form: PKCS1 falls back to PKCS#8, and size is ignored.
  { spec: { algorithm: 'Ed25519' }, type: 'ed25519', size: undefined, pkcs1Label: 'PRIVATE KEY' },
  { spec: { algorithm: 'Ed25519', size: 4096 }, type: 'ed25519', size: undefined, pkcs1Label: 'PRIVATE KEY' },
  // Last: an 8192-bit key takes seconds, so it is generated in the background from the start (below).
  { spec: { algorithm: 'RSA', size: 8192 }, type: 'rsa', size: 8192, pkcs1Label: 'RSA PRIVATE KEY' },
];

const rsa8192 = generatePrivateKey({ algorithm: 'RSA', size: 8192 });

describe('generatePrivateKey / encodePrivateKey / parsePrivateKey', () => {
  for (const { spec, type, size, pkcs1Label } of SPECS) {
    it(`${JSON.stringify(spec)} generates, encodes as PKCS1 and PKCS8, and parses back`, async () => {
      const key = await (spec.size === 8192 ? rsa8192 : generatePrivateKey(spec));
      assert.equal(key.type, 'private');
      assert.equal(key.asymmetricKeyType, type);
      assert.equal(keySize(key), size);
      assert.ok(keyMatchesSpec(key, spec));
      for (const encoding of ENCODINGS) {
        const pem = encodePrivateKey(key, encoding);
        const label = encoding === 'PKCS1' ? pkcs1Label : 'PRIVATE KEY';
        assert.ok(pem.startsWith(`-----BEGIN ${label}-----\n`), `${encoding}: ${pem.slice(0, 40)}`);
        assert.ok(pem.endsWith(`-----END ${label}-----\n`));
        const parsed = parsePrivateKey(pem);
        assert.ok(publicKeysEqual(parsed, key), encoding);
        assert.ok(keyMatchesSpec(parsed, spec), encoding);
        // Re-encoding the parsed key is byte-identical: the encodings are canonical.
        assert.equal(encodePrivateKey(parsed, encoding), pem);
      }
    });
  }

  it('defaults the encoding to PKCS1', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    assert.match(encodePrivateKey(key), /^-----BEGIN EC PRIVATE KEY-----/);
  });

  it('rejects sizes and algorithms cert-manager rejects', async () => {
    await assert.rejects(generatePrivateKey({ algorithm: 'RSA', size: 1024 }), {
      message: 'weak rsa key size specified: 1024. minimum key size: 2048',
    });
    await assert.rejects(generatePrivateKey({ algorithm: 'RSA', size: 8200 }), {
      message: 'rsa key size specified too big: 8200. maximum key size: 8192',
    });
    await assert.rejects(generatePrivateKey({ algorithm: 'ECDSA', size: 224 }), {
      message: 'unsupported ecdsa key size specified: 224',
    });
    await assert.rejects(
      generatePrivateKey({ algorithm: 'DSA' as never }),
      /unsupported private key algorithm/,
    );
  });

  it('rejects PEM that is not a usable private key', () => {
    assert.throws(() => parsePrivateKey('not pem'), /no PEM data/);
    assert.throws(
      () => parsePrivateKey('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
      /unexpected PEM block type/,
    );
    const encrypted = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
      cipher: 'aes-256-cbc',
      passphrase: 'secret',
    });
    assert.throws(() => parsePrivateKey(encrypted), /unexpected PEM block type "ENCRYPTED PRIVATE KEY"/);
    const x25519 = generateKeyPairSync('x25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
    assert.throws(() => parsePrivateKey(x25519), /unsupported key type x25519/);
    const p224 = generateKeyPairSync('ec', { namedCurve: 'P-224' }).privateKey.export({
      type: 'sec1',
      format: 'pem',
    });
    assert.throws(() => parsePrivateKey(p224), /unsupported ECDSA curve/);
    assert.throws(
      () => parsePrivateKey('-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n'),
      /error parsing RSA PRIVATE KEY/,
    );
  });

  it('parses only the first PEM block, as cert-manager does', async () => {
    const first = await generatePrivateKey({ algorithm: 'Ed25519' });
    const second = await generatePrivateKey({ algorithm: 'Ed25519' });
    const parsed = parsePrivateKey(encodePrivateKey(first) + encodePrivateKey(second));
    assert.ok(publicKeysEqual(parsed, first));
  });
});

describe('privateKeySpecViolations', () => {
  it('compares algorithm and size against the spec and its defaults', async () => {
    const rsa = await generatePrivateKey({ algorithm: 'RSA', size: 2048 });
    const p384 = await generatePrivateKey({ algorithm: 'ECDSA', size: 384 });
    const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
    assert.deepEqual(privateKeySpecViolations(rsa, {}), []);
    assert.deepEqual(privateKeySpecViolations(rsa, { size: 0 }), []);
    assert.deepEqual(privateKeySpecViolations(rsa, { algorithm: 'RSA', size: 4096 }), [
      'spec.privateKey.size',
    ]);
    assert.deepEqual(privateKeySpecViolations(rsa, { algorithm: 'ECDSA' }), ['spec.privateKey.algorithm']);
    assert.deepEqual(privateKeySpecViolations(p384, { algorithm: 'ECDSA' }), ['spec.privateKey.size']);
    assert.deepEqual(privateKeySpecViolations(p384, { algorithm: 'ECDSA', size: 384 }), []);
    assert.deepEqual(privateKeySpecViolations(p384, {}), ['spec.privateKey.algorithm']);
    assert.deepEqual(privateKeySpecViolations(ed, { algorithm: 'Ed25519', size: 521 }), []);
    assert.deepEqual(privateKeySpecViolations(ed, { algorithm: 'ECDSA' }), ['spec.privateKey.algorithm']);
    assert.equal(keyMatchesSpec(p384, { algorithm: 'ECDSA', size: 256 }), false);
  });
});

describe('publicKeysEqual', () => {
  it('matches private and public halves of the same key, and nothing else', async () => {
    for (const spec of [{ algorithm: 'RSA' }, { algorithm: 'ECDSA' }, { algorithm: 'Ed25519' }] as const) {
      const a = await generatePrivateKey(spec);
      const b = await generatePrivateKey(spec);
      assert.ok(publicKeysEqual(a, a));
      assert.ok(publicKeysEqual(a, publicKeyOf(a)));
      assert.ok(publicKeysEqual(publicKeyOf(a), a));
      assert.equal(publicKeysEqual(a, b), false);
    }
    const ec = await generatePrivateKey({ algorithm: 'ECDSA' });
    const ed = await generatePrivateKey({ algorithm: 'Ed25519' });
    assert.equal(publicKeysEqual(ec, ed), false);
  });

  it('treats a compressed EC point as the same key as the uncompressed one', () => {
    const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const spki = subjectPublicKeyInfo(key);
    // An uncompressed P-256 SPKI ends in 04 || x || y; rebuild it with the SEC 1 compressed point 02/03 || x.
    const x = spki.subarray(-64, -32);
    const yIsOdd = spki[spki.length - 1] & 1;
    const algorithm = spki.subarray(2, 23);
    const bits = Buffer.concat([Buffer.from([0x03, 34, 0x00, yIsOdd ? 0x03 : 0x02]), x]);
    const compressed = Buffer.concat([Buffer.from([0x30, algorithm.length + bits.length]), algorithm, bits]);
    const public1 = createPublicKey({ key: compressed, format: 'der', type: 'spki' });
    assert.ok(publicKeysEqual(key, public1));
    assert.ok(publicKeysEqual(public1, publicKeyOf(key)));
  });
});

describe('subjectPublicKeyInfo', () => {
  it('is what node:crypto exports as SPKI, for every key type and curve, from private or public keys', () => {
    const pairs = [
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
      generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      generateKeyPairSync('ec', { namedCurve: 'P-521' }),
      generateKeyPairSync('ed25519'),
    ];
    // A P-256 key with a coordinate whose top byte is zero (JWK must keep it at full width), about 1 in 128.
    for (;;) {
      const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const { x, y } = pair.publicKey.export({ format: 'jwk' });
      if (Buffer.from(x!, 'base64url')[0] !== 0 && Buffer.from(y!, 'base64url')[0] !== 0) continue;
      pairs.push(pair);
      break;
    }
    for (const { privateKey, publicKey } of pairs) {
      const expected = publicKey.export({ type: 'spki', format: 'der' });
      assert.ok(subjectPublicKeyInfo(privateKey).equals(expected), String(privateKey.asymmetricKeyType));
      assert.ok(subjectPublicKeyInfo(publicKey).equals(expected), String(publicKey.asymmetricKeyType));
    }
  });

  it('is worked out once per key object (a CSR and the key digest both ask for it)', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const first = subjectPublicKeyInfo(privateKey);
    assert.equal(subjectPublicKeyInfo(privateKey), first);
    // Another object for the same key is worked out again, to the same bytes.
    const again = createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' }));
    assert.notEqual(subjectPublicKeyInfo(again), first);
    assert.deepEqual(subjectPublicKeyInfo(again), first);
  });
});
