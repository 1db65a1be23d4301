import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import { encodePrivateKey, generatePrivateKey, parseCertificate } from '../pki/index.ts';
import { leanObject, leanSecret } from './cache-transforms.ts';
import {
  IDLE_RELEASE_MS,
  releaseIdleParses,
  secretCertificateDigest,
  secretCertificateFacts,
  secretKeyFacts,
  secretPrivateKey,
  valueOf,
} from './parsed.ts';
import { digestToken } from './request-facts.ts';
import {
  certificateFacts,
  certificateFactsText,
  isPlainCertificateData,
  isStrippedSecret,
  keyFacts,
  keyFactsText,
  readCertificateFactsText,
  readKeyFactsText,
} from './secret-facts.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const b64 = (s: string) => Buffer.from(s).toString('base64');
/** "-----BEGIN" in base64 at each of its three alignments, and in the clear. */
const PEM_MARKERS = ['LS0tLS1CRUdJTi', 'tLS0tLUJFR0lO', 'LS0tLUJFR0lO', '-----BEGIN'];

type Ca = Awaited<ReturnType<typeof rootCa>>;

async function certificateSecret(ca: Ca, i = 0): Promise<Secret> {
  const name = `s${i}`;
  const leaf = await issue({
    spec: {
      dnsNames: [`${name}.a.example`, `${name}.b.example`],
      commonName: `${name}.a.example`,
      subject: { organizations: ['certkit'] },
    },
    issuer: { certPem: ca.certPem, key: ca.key },
  });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${name}-tls`,
      namespace: 'ns',
      uid: `u${i}`,
      labels: { 'controller.cert-manager.io/fao': 'true' },
    },
    type: 'kubernetes.io/tls',
    data: {
      'tls.key': b64(encodePrivateKey(leaf.key, 'PKCS8')),
      'tls.crt': b64(leaf.certPem),
      'ca.crt': b64(leaf.caPem),
    },
  };
}

describe('certificate Secrets cached as facts', () => {
  it('facts read back from their text equal the facts of the bytes', async () => {
    const ca = await rootCa();
    const secret = await certificateSecret(ca);
    const tlsCrt = secret.data!['tls.crt'];
    const info = parseCertificate(Buffer.from(tlsCrt, 'base64'));
    const facts = certificateFacts(info, tlsCrt);
    assert.deepEqual(readCertificateFactsText(certificateFactsText(facts)), facts);
    assert.equal(facts.digest, digestToken(tlsCrt));
    assert.deepEqual(facts.subject.organizations, ['certkit']);
    const key = valueOf(secretPrivateKey(secret));
    assert.deepEqual(readKeyFactsText(keyFactsText(keyFacts(key))), {
      algorithm: 'ECDSA',
      size: 256,
      publicKeyDigest: facts.publicKeyDigest,
    });
    const rsa = keyFacts(await generatePrivateKey({ algorithm: 'RSA', size: 2048 }));
    assert.deepEqual(readKeyFactsText(keyFactsText(rsa)), rsa);
    assert.equal(rsa.size, 2048);
  });

  it('the cache holds no PEM of a certificate Secret but its shared CA bundle, and reads the same facts', async () => {
    const ca = await rootCa();
    const secret = await certificateSecret(ca);
    const cached = leanSecret(structuredClone(secret) as never) as Secret;
    assert.ok(isStrippedSecret(cached));
    assert.deepEqual(Object.keys(cached.data!).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    for (const key of ['tls.crt', 'tls.key']) {
      assert.ok(!PEM_MARKERS.some((m) => cached.data![key].includes(m)), `${key} holds no PEM`);
    }
    assert.equal(cached.data!['ca.crt'], secret.data!['ca.crt']);
    assert.deepEqual(valueOf(secretCertificateFacts(cached)), valueOf(secretCertificateFacts(secret)));
    assert.deepEqual(valueOf(secretKeyFacts(cached)), valueOf(secretKeyFacts(secret)));
    assert.equal(secretCertificateDigest(cached), digestToken(secret.data!['tls.crt']));
    // Asking for the bytes is an error that says to read them live, never a wrong key.
    assert.match(String((secretPrivateKey(cached) as { error: Error }).error), /read it live/);
    // Idempotent: a cached Secret passes through as it is.
    assert.deepEqual(leanSecret(structuredClone(cached) as never), cached);
  });

  it('only a plain key pair is cached as facts', () => {
    const pair = { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' };
    assert.equal(isPlainCertificateData(pair), true);
    assert.equal(isPlainCertificateData({ ...pair, 'ca.crt': 'Y2E=' }), true);
    assert.equal(
      isPlainCertificateData({ ...pair, 'ca.crt': '' }),
      false,
      'an empty ca.crt is repaired from bytes',
    );
    assert.equal(isPlainCertificateData({ ...pair, 'tls-combined.pem': 'eA==' }), false, 'output formats');
    assert.equal(isPlainCertificateData({ ...pair, 'keystore.jks': 'eA==' }), false, 'keystores');
    assert.equal(isPlainCertificateData({ 'tls.key': 'a2V5' }), false, 'a next-key Secret');
    assert.equal(isPlainCertificateData({ ...pair, 'tls.key': '' }), false);
  });

  it('hold a certificate Secret in less heap than its bytes took', async (t) => {
    const ca = await rootCa();
    const count = 300;
    const secrets: Secret[] = [];
    for (let i = 0; i < count; i++) secrets.push(await certificateSecret(ca, i));
    const growth = (transform: (secret: Secret) => unknown) => {
      releaseIdleParses(Date.now() + IDLE_RELEASE_MS);
      gc();
      const before = process.memoryUsage().heapUsed;
      const kept = secrets.map((secret) => transform(JSON.parse(JSON.stringify(secret)) as Secret));
      // What the parses cost is held by the bounded parse caches until they go idle (docs/adr/1112).
      releaseIdleParses(Date.now() + IDLE_RELEASE_MS);
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      assert.equal(kept.length, count, 'kept alive until measured');
      return grown / count;
    };
    const withBytes = growth((secret) => leanObject(secret as never));
    const asFacts = growth((secret) => leanSecret(secret as never));
    // ECDSA P-256 with two DNS names: ~1.3 KB of base64 key and certificate (the CA bundle is one string
    // for all, shared in both forms once the transform shares it) give way to ~0.4 KB of facts texts.
    t.diagnostic(`per Secret: ${withBytes.toFixed(0)} bytes with its bytes, ${asFacts.toFixed(0)} as facts`);
    assert.ok(
      withBytes - asFacts > 600,
      `per Secret: ${withBytes.toFixed(0)} bytes with its bytes, ${asFacts.toFixed(0)} as facts`,
    );
  });
});
