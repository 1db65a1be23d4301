import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateKeystores } from '../../../api/types.ts';
import { encodePrivateKey } from '../../../pki/index.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import { applyKeystores, KeystoreError, keystoresToWrite } from './keystores.ts';

const certificate = (keystores?: CertificateKeystores): Certificate => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'app', namespace: 'default' },
  spec: { secretName: 'app-tls', issuerRef: { name: 'ca' }, keystores },
});

const both: CertificateKeystores = {
  jks: { create: true, password: 'jks-pw' },
  pkcs12: { create: true, password: 'p12-pw' },
};

const b64 = (text: string) => Buffer.from(text).toString('base64');
/** A Secret holding some bytes under each of `keys` (empty for keys given as ''). */
const secretWith = (data: Record<string, string>): Secret => ({
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});

describe('keystoresToWrite', () => {
  it('at issuance: every wanted format', () => {
    assert.deepEqual(keystoresToWrite(certificate(both), undefined, true), ['jks', 'pkcs12']);
    assert.deepEqual(
      keystoresToWrite(
        certificate({ jks: { create: false, password: 'x' }, pkcs12: both.pkcs12 }),
        undefined,
        true,
      ),
      ['pkcs12'],
    );
    assert.deepEqual(keystoresToWrite(certificate(), undefined, true), []);
  });

  it('between issuances: only a wanted keystore that is missing, or its truststore while there is a CA', () => {
    const cert = certificate(both);
    const all = { 'keystore.jks': 'a', 'truststore.jks': 'b', 'keystore.p12': 'c', 'truststore.p12': 'd' };
    assert.deepEqual(keystoresToWrite(cert, secretWith({ ...all, 'ca.crt': 'e' }), false), []);
    assert.deepEqual(keystoresToWrite(cert, secretWith({ 'keystore.p12': 'c', 'ca.crt': 'e' }), false), [
      'jks',
      'pkcs12',
    ]);
    // Without a CA no truststore is due.
    assert.deepEqual(
      keystoresToWrite(cert, secretWith({ 'keystore.jks': 'a', 'keystore.p12': 'c' }), false),
      [],
    );
    assert.deepEqual(keystoresToWrite(cert, secretWith({ 'keystore.jks': '', 'keystore.p12': 'c' }), false), [
      'jks',
    ]);
  });
});

describe('applyKeystores', () => {
  const material = async (withCa: boolean) => {
    const ca = await rootCa();
    const leaf = await issue({
      spec: { dnsNames: ['app.example.com'] },
      issuer: { certPem: ca.certPem, key: ca.key },
    });
    return {
      privateKey: encodePrivateKey(leaf.key, 'PKCS1'),
      certificate: leaf.certPem,
      ...(withCa ? { ca: ca.certPem } : {}),
    };
  };

  it('encodes the formats it has passwords for, truststores only with a CA', async () => {
    const data: Record<string, string> = { 'truststore.jks': b64('stale') };
    applyKeystores(data, certificate(both), await material(false), { jks: 'jks-pw', pkcs12: 'p12-pw' });
    assert.deepEqual(Object.keys(data).sort(), ['keystore.jks', 'keystore.p12']);
    assert.equal(Buffer.from(data['keystore.jks'], 'base64').readUInt32BE(0), 0xfeedfeed, 'JKS magic');
    assert.equal(Buffer.from(data['keystore.p12'], 'base64')[0], 0x30, 'a DER SEQUENCE');

    applyKeystores(data, certificate(both), await material(true), { jks: 'jks-pw', pkcs12: 'p12-pw' });
    assert.deepEqual(Object.keys(data).sort(), [
      'keystore.jks',
      'keystore.p12',
      'truststore.jks',
      'truststore.p12',
    ]);
  });

  it('keeps wanted keystores it has no password for, and removes unwanted ones', async () => {
    const kept = { 'keystore.jks': b64('jks'), 'keystore.p12': b64('p12'), 'truststore.p12': b64('t') };
    const data = { ...kept };
    applyKeystores(data, certificate(both), await material(true), {});
    assert.deepEqual(data, kept);
    applyKeystores(data, certificate({ pkcs12: { create: false, password: 'x' } }), await material(true), {});
    assert.deepEqual(data, {});
  });

  it('turns an encoding failure into a KeystoreError naming the format', async () => {
    const source = { ...(await material(false)), certificate: 'no PEM here' };
    assert.throws(
      () => applyKeystores({}, certificate(both), source, { pkcs12: 'p12-pw' }),
      (err: unknown) =>
        err instanceof KeystoreError &&
        err.reason === 'KeystoreEncodingFailed' &&
        err.message === 'error encoding PKCS12 bundle: tls.crt holds no certificate',
    );
  });
});
