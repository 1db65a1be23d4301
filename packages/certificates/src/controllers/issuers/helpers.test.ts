/** The issuer helpers that need no API server: readiness, the CA key pair reader, stale-read tracking. */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Issuer } from '../../api/types.ts';
import { encodePrivateKey, generatePrivateKey } from '../../pki/index.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import { cachedCaKeyPair, caKeyPairFromSecret, InvalidDataError } from './ca-keypair.ts';
import { isIssuerReady } from './conditions.ts';
import { StaleReads } from './stale-reads.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('isIssuerReady', () => {
  const issuer = (status: 'True' | 'False', observedGeneration?: number): Issuer => ({
    metadata: { name: 'i', generation: 2 },
    spec: { selfSigned: {} },
    status: { conditions: [{ type: 'Ready', status, observedGeneration }] },
  });
  it('wants Ready=True for the current generation', () => {
    assert.equal(isIssuerReady(issuer('True', 2)), true);
    assert.equal(isIssuerReady(issuer('True')), true);
    assert.equal(isIssuerReady(issuer('True', 1)), false);
    assert.equal(isIssuerReady(issuer('False', 2)), false);
  });
});

describe('caKeyPairFromSecret', () => {
  const secret = (data: Record<string, string>) => ({ metadata: { name: 'ca', namespace: 'ns' }, data });

  it('reads tls.key and tls.crt, and appends ca.crt to the chain', async () => {
    const root = await rootCa();
    const intermediate = await issue({
      spec: { commonName: 'intermediate', isCA: true },
      issuer: { certPem: root.certPem, key: root.key },
    });
    const pair = caKeyPairFromSecret(
      secret({
        'tls.crt': b64(intermediate.certPem),
        'tls.key': b64(encodePrivateKey(intermediate.key, 'PKCS8')),
        'ca.crt': b64(root.certPem),
      }),
    );
    assert.equal(pair.cert.subject.commonName, 'intermediate');
    // tls.crt holds the intermediate alone (the issued chain leaves the root out); ca.crt adds the root.
    assert.equal(pair.certPem.match(/BEGIN CERTIFICATE/g)?.length, 2);
    assert.ok(pair.certPem.endsWith(root.certPem.endsWith('\n') ? root.certPem : `${root.certPem}\n`));
    // What the CA signer then does with it: leaf + intermediate served, the root as the CA.
    const leaf = await issue({
      spec: { commonName: 'leaf' },
      issuer: { certPem: pair.certPem, key: pair.key },
    });
    assert.equal(leaf.certPem.match(/BEGIN CERTIFICATE/g)?.length, 2);
    assert.equal(leaf.caPem, root.certPem);
  });

  it('says what is missing or unreadable, as InvalidDataError', async () => {
    const key = b64(encodePrivateKey(await generatePrivateKey({ algorithm: 'ECDSA' }), 'PKCS8'));
    assert.throws(() => caKeyPairFromSecret(secret({ 'tls.crt': b64('x') })), {
      name: 'InvalidDataError',
      message: `no private key data for "tls.key" in secret 'ns/ca'`,
    });
    assert.throws(() => caKeyPairFromSecret(secret({ 'tls.key': key })), {
      message: `no certificate data for "tls.crt" in secret 'ns/ca'`,
    });
    assert.throws(
      () => caKeyPairFromSecret(secret({ 'tls.key': key, 'tls.crt': b64('junk') })),
      InvalidDataError,
    );
    assert.throws(
      () => caKeyPairFromSecret(secret({ 'tls.key': b64('junk'), 'tls.crt': b64('junk') })),
      InvalidDataError,
    );
  });
});

describe('cachedCaKeyPair', () => {
  const versioned = (uid: string, resourceVersion: string, data: Record<string, string>) => ({
    metadata: { name: 'ca', namespace: 'ns', uid, resourceVersion },
    data,
  });

  it('parses a Secret version once, even from different objects (live GETs), and again when it changes', async () => {
    const root = await rootCa();
    const data = { 'tls.crt': b64(root.certPem), 'tls.key': b64(encodePrivateKey(root.key)) };
    const first = cachedCaKeyPair(versioned('uid-1', '10', data));
    assert.equal(cachedCaKeyPair(versioned('uid-1', '10', { ...data })), first, 'same uid and version');
    const changed = cachedCaKeyPair(versioned('uid-1', '11', data));
    assert.notEqual(changed, first, 'a new resourceVersion is parsed again');
    assert.equal(changed.cert.subject.commonName, first.cert.subject.commonName);
  });

  it('remembers invalid data as the same InvalidDataError, and parses objects without a version each time', () => {
    const bad = versioned('uid-2', '5', { 'tls.key': b64('junk'), 'tls.crt': b64('junk') });
    let thrown: unknown;
    assert.throws(
      () => cachedCaKeyPair(bad),
      (err) => ((thrown = err), err instanceof InvalidDataError),
    );
    assert.throws(
      () => cachedCaKeyPair({ ...bad }),
      (err) => err === thrown,
    );
    const unversioned = { metadata: { name: 'ca', namespace: 'ns' }, data: bad.data };
    assert.throws(() => cachedCaKeyPair(unversioned), InvalidDataError);
  });
});

describe('StaleReads', () => {
  it('reports the replaced version as stale until the cache moves on', () => {
    const stale = new StaleReads();
    assert.equal(stale.isStale('ns/a', '1'), false);
    stale.wrote('ns/a', '1');
    assert.equal(stale.isStale('ns/a', '1'), true);
    assert.equal(stale.isStale('ns/a', '2'), false);
    assert.equal(stale.isStale('ns/a', '1'), false, 'forgotten once the cache moved on');
  });
});
