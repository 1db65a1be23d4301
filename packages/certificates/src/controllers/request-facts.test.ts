import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { issue, rootCa } from '@certkit/testenv/pki/ca';
import type { CertificateRequest } from '../api/types.ts';
import { generatePrivateKey } from '../pki/index.ts';
import { leanCertificateRequest, leanObject } from './cache-transforms.ts';
import { requestMatchesSpec } from './certificates/shared/policies.ts';
import {
  csrFacts,
  hasPublicKey,
  IDLE_RELEASE_MS,
  releaseIdleParses,
  requestCertificate,
  requestCsr,
  valueOf,
} from './parsed.ts';
import {
  digestToken,
  factsText,
  isFactsText,
  isStrippedRequest,
  parseRequestFacts,
  publicKeyDigest,
  readFactsText,
  stripIssuedRequest,
} from './request-facts.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const b64 = (s: string) => Buffer.from(s).toString('base64');
/** "-----BEGIN" in base64 at each of its three alignments, and in the clear. */
const PEM_MARKERS = ['LS0tLS1CRUdJTi', 'tLS0tLUJFR0lO', 'LS0tLUJFR0lO', '-----BEGIN'];

/** Every string in `value` (objects and arrays, walked) that carries PEM, in the clear or as base64. */
function pemStrings(value: unknown, path = '$'): string[] {
  if (typeof value === 'string') return PEM_MARKERS.some((m) => value.includes(m)) ? [path] : [];
  if (value === null || typeof value !== 'object') return [];
  if (Buffer.isBuffer(value)) return [];
  return Object.entries(value).flatMap(([key, item]) => pemStrings(item, `${path}.${key}`));
}

type Ca = Awaited<ReturnType<typeof rootCa>>;

async function issuedRequest(ready: { status: string; reason: string }, ca?: Ca, i = 0) {
  ca ??= await rootCa();
  const name = `r${i}`;
  const leaf = await issue({
    spec: { dnsNames: [`${name}.a.example`, `${name}.b.example`], commonName: `${name}.a.example` },
    issuer: { certPem: ca.certPem, key: ca.key },
  });
  const cr = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name, namespace: 'ns', uid: `u${i}`, managedFields: [{ manager: 'm' }] },
    spec: { request: b64(leaf.csrPem), issuerRef: { name: 'ca' } },
    status: {
      certificate: b64(leaf.certPem),
      ca: b64(leaf.caPem),
      conditions: [{ type: 'Ready', ...ready }],
    },
  } as unknown as CertificateRequest;
  return { cr, leaf };
}

describe('issued CertificateRequests cached as facts', () => {
  it('the cache holds no PEM or base64 bytes of an issued request, and the controllers see the same CSR', async () => {
    const { cr, leaf } = await issuedRequest({ status: 'True', reason: 'Issued' });
    const original = structuredClone(cr);
    assert.ok(pemStrings(original).length >= 3, 'the walk finds the PEM a request carries');
    const parsedBefore = valueOf(requestCsr(original));

    const cached = leanCertificateRequest(cr) as CertificateRequest;
    assert.deepEqual(pemStrings(cached), [], 'no PEM left in the cached request');
    assert.ok(isStrippedRequest(cached));
    assert.ok(isFactsText(cached.spec.request));
    assert.ok(cached.spec.request.length < 250, `facts of ${cached.spec.request.length} characters`);
    assert.equal(cached.status?.certificate, digestToken(original.status!.certificate!));
    assert.equal(cached.status?.ca, digestToken(original.status!.ca!));
    assert.deepEqual(cached.status?.conditions, original.status?.conditions, 'the rest is unchanged');
    assert.deepEqual(cached.spec.issuerRef, original.spec.issuerRef);

    // What the Certificate controllers compare: the facts equal the parse of the bytes.
    const facts = valueOf(requestCsr(cached));
    assert.deepEqual(facts, parsedBefore);
    assert.deepEqual([...facts.dnsNames], ['r0.a.example', 'r0.b.example']);
    assert.equal(facts.commonName, 'r0.a.example');
    assert.equal(hasPublicKey(leaf.key, facts.publicKeyDigest), true);
    assert.equal(
      hasPublicKey(await generatePrivateKey({ algorithm: 'ECDSA' }), facts.publicKeyDigest),
      false,
    );

    // Bytes asked of the cached copy are an error that says to read live, not a wrong answer.
    const certificate = requestCertificate(cached);
    assert.ok('error' in certificate && /read it live/.test(certificate.error.message));
    assert.ok('value' in requestCertificate(original));

    // Idempotent (informers may transform an object twice), and copies keep the facts.
    assert.equal(leanCertificateRequest(cached), cached);
    assert.deepEqual(valueOf(requestCsr(cached)), parsedBefore);
    // A copy keeps them (the signers' drafts are copies).
    assert.deepEqual(valueOf(requestCsr(structuredClone(cached))), parsedBefore);
  });

  it('an issued request is stripped with the parse the controllers made of it in flight, not a second one', async () => {
    const { cr } = await issuedRequest({ status: 'True', reason: 'Issued' }, undefined, 7);
    // The request manager compared the request while it was in flight: its CSR is in the parse cache.
    const inFlight = valueOf(requestCsr(cr));
    assert.equal(csrFacts(cr.spec.request), inFlight, 'the transform parser answers from the same cache');
    const asked: string[] = [];
    const stripped = stripIssuedRequest(structuredClone(cr), undefined, (base64) => {
      asked.push(base64);
      return csrFacts(base64);
    });
    assert.deepEqual(asked, [cr.spec.request], 'the given parser is asked, once');
    assert.deepEqual(valueOf(requestCsr(stripped)), inFlight);
    // The default still parses the bytes itself.
    assert.deepEqual(valueOf(requestCsr(stripIssuedRequest(structuredClone(cr)))), inFlight);
  });

  it('requests not issued yet keep their bytes for the signers', async () => {
    for (const ready of [
      { status: 'False', reason: 'Pending' },
      { status: 'False', reason: 'Failed' },
    ]) {
      const { cr } = await issuedRequest(ready);
      const request = cr.spec.request;
      const cached = leanCertificateRequest(cr) as CertificateRequest;
      assert.equal(cached.spec.request, request, ready.reason);
      assert.equal(isStrippedRequest(cached), false);
      assert.ok(pemStrings(cached).length >= 3);
    }
  });

  it('an issued request with an unreadable CSR keeps its bytes, so the error stays the parse error', async () => {
    const { cr } = await issuedRequest({ status: 'True', reason: 'Issued' });
    cr.spec.request = b64('not a CSR');
    const cached = leanCertificateRequest(cr) as CertificateRequest;
    assert.equal(isStrippedRequest(cached), false);
    assert.throws(() => parseRequestFacts(cr.spec.request));
    assert.ok('error' in requestCsr(cached));
  });

  it('hold an issued request in less heap than its bytes took', async (t) => {
    const ca = await rootCa();
    const count = 300;
    const requests: CertificateRequest[] = [];
    for (let i = 0; i < count; i++) {
      requests.push((await issuedRequest({ status: 'True', reason: 'Issued' }, ca, i)).cr);
    }
    // Each request cached as before (short strings shared, bytes kept) and as facts, from fresh copies.
    const growth = (transform: (cr: CertificateRequest) => unknown) => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const kept = requests.map((cr) => transform(JSON.parse(JSON.stringify(cr)) as CertificateRequest));
      // What stays: the parse caches the transform reads through let go once a burst is over.
      releaseIdleParses(Date.now() + IDLE_RELEASE_MS);
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      assert.equal(kept.length, count, 'kept alive until measured');
      return grown / count;
    };
    const withBytes = growth((cr) => leanObject(cr as never));
    const asFacts = growth((cr) => leanCertificateRequest(cr as never));
    // ECDSA P-256 with two DNS names: a CSR of ~0.6 KB and a certificate of ~1 KB of base64 (the CA bundle is
    // one string for all) give way to ~0.7 KB of facts and digests; measured ~960 bytes saved per request.
    t.diagnostic(`per request: ${withBytes.toFixed(0)} bytes with its bytes, ${asFacts.toFixed(0)} as facts`);
    assert.ok(
      withBytes - asFacts > 800,
      `per request: ${withBytes.toFixed(0)} bytes with its bytes, ${asFacts.toFixed(0)} as facts`,
    );
  });

  it('facts read back from their text equal the parse, subject attributes and name constraints included', async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const { csrPem } = await issue({
      key,
      spec: {
        commonName: 'ca.example',
        isCA: true,
        subject: { organizations: ['o'], countries: ['DE'], serialNumber: '7' },
        ipAddresses: ['10.0.0.1'],
        uris: ['spiffe://x/y'],
        emailAddresses: ['a@example.com'],
        nameConstraints: { critical: true, permitted: { dnsDomains: ['example.com'] } },
      },
    });
    const facts = parseRequestFacts(b64(csrPem));
    assert.ok(facts.nameConstraints, 'the CSR carries name constraints');
    assert.deepEqual(facts.subject.organizations, ['o']);
    assert.deepEqual(readFactsText(factsText(facts)), facts);
    assert.equal(hasPublicKey(key, readFactsText(factsText(facts)).publicKeyDigest), true);
  });

  it('the policies judge a request held as facts as they judge it with its bytes', async () => {
    const { cr } = await issuedRequest({ status: 'True', reason: 'Issued' });
    const withBytes = structuredClone(cr);
    const cached = leanCertificateRequest(cr) as CertificateRequest;
    assert.ok(isStrippedRequest(cached));
    const spec = {
      secretName: 's',
      issuerRef: { name: 'ca' },
      commonName: 'r0.a.example',
      dnsNames: ['r0.b.example', 'r0.a.example'],
    };
    const specs = [
      spec,
      { ...spec, dnsNames: ['r0.a.example'] },
      { ...spec, commonName: 'other' },
      { ...spec, subject: { organizations: ['o'] } },
      { ...spec, literalSubject: 'CN=r0.a.example' },
      { ...spec, literalSubject: 'CN=other' },
      { ...spec, ipAddresses: ['10.0.0.1'] },
    ];
    const verdicts = specs.map((s) => requestMatchesSpec(withBytes, s));
    assert.deepEqual(verdicts[0], [], 'the spec it was made for matches');
    assert.ok(
      verdicts.slice(1).some((v) => v.length > 0),
      'the others differ',
    );
    assert.deepEqual(
      specs.map((s) => requestMatchesSpec(cached, s)),
      verdicts,
    );
  });
});

describe('publicKeyDigest', () => {
  const encoderDigest = (key: KeyObject) =>
    createHash('sha256')
      .update(createPublicKey(key).export({ type: 'spki', format: 'der' }))
      .digest('base64url');

  it("is the SHA-256 of the key's SPKI as OpenSSL encodes it, for every key a Certificate can ask for and others", () => {
    const pairs = [
      generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      generateKeyPairSync('ec', { namedCurve: 'P-521' }),
      generateKeyPairSync('ed25519'),
      generateKeyPairSync('rsa', { modulusLength: 1024 }),
      // Not keys the controller makes, so not through the JWK shortcut: still digested, still compared.
      generateKeyPairSync('ec', { namedCurve: 'secp224r1' }),
      generateKeyPairSync('x25519'),
    ];
    for (const { privateKey, publicKey } of pairs) {
      const label = `${privateKey.asymmetricKeyType} ${privateKey.asymmetricKeyDetails?.namedCurve ?? ''}`;
      assert.equal(publicKeyDigest(privateKey), encoderDigest(privateKey), label);
      assert.equal(
        publicKeyDigest(publicKey),
        publicKeyDigest(privateKey),
        `${label}: a key and its public half`,
      );
    }
    const digests = new Set(pairs.map(({ privateKey }) => publicKeyDigest(privateKey)));
    assert.equal(digests.size, pairs.length, 'different keys, different digests');
  });

  it('is the same for a CSR whose key is a compressed EC point as for the key itself', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const uncompressed = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
    // The same SPKI with the point compressed (SEC 1 §2.3.3): prefix 02/03 by y's parity, then x alone.
    // P-256's SPKI: SEQUENCE(91) { AlgorithmIdentifier (21 bytes), BIT STRING { 0, 04 ‖ x ‖ y } }.
    const algorithm = uncompressed.subarray(2, 23);
    const x = uncompressed.subarray(27, 59);
    const odd = uncompressed[90]! & 1;
    const compressedSpki = Buffer.concat([
      Buffer.from([0x30, algorithm.length + 36]),
      algorithm,
      Buffer.from([0x03, 34, 0x00, odd ? 3 : 2]),
      x,
    ]);
    const compressed = createPublicKey({ key: compressedSpki, format: 'der', type: 'spki' });
    assert.ok(compressed.equals(createPublicKey(privateKey)), 'the same key material');
    assert.equal(publicKeyDigest(compressed), publicKeyDigest(privateKey));
  });
});
