import assert from 'node:assert/strict';
import type { KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateRequest, CertificateSpec } from '../../../api/types.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  signCertificate,
} from '../../../pki/index.ts';
import type { PolicyInput } from './gather.ts';
import {
  certificateMatchesSpec,
  CurrentCertificateHasExpired,
  CurrentCertificateNearingExpiry,
  CurrentCertificateRequestMismatchesSpec,
  evaluate,
  invalidSpec,
  issuerRefsEqual,
  readinessPolicyChain,
  requestMatchesSpec,
  SecretCertificateNameAnnotationsMismatch,
  SecretDoesNotExist,
  SecretIssuerAnnotationsMismatch,
  SecretIsMissingData,
  SecretPrivateKeyMismatchesSpec,
  SecretPublicKeyDiffersFromCurrentCertificateRequest,
  SecretPublicKeysDiffer,
  triggerPolicyChain,
} from './policies.ts';
import { parseCertificate } from '../../../pki/index.ts';
import { leanSecret } from '../../cache-transforms.ts';
import { isStrippedSecret } from '../../secret-facts.ts';

const HOUR = 60 * 60 * 1000;
const issuedAt = new Date('2026-03-01T00:00:00Z');
const b64 = (text: string) => Buffer.from(text).toString('base64');

const baseSpec: CertificateSpec = {
  secretName: 'web-tls',
  issuerRef: { name: 'ca' },
  dnsNames: ['web.example', 'www.web.example'],
  privateKey: { algorithm: 'ECDSA' },
  duration: '3h',
};

function certificate(spec: Partial<CertificateSpec> = {}, status: Certificate['status'] = {}): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'apps', uid: 'uid-web', generation: 1 },
    spec: { ...baseSpec, ...spec },
    status,
  };
}

interface Issued {
  key: KeyObject;
  csrPem: string;
  certPem: string;
}

async function issue(spec: CertificateSpec, key?: KeyObject): Promise<Issued> {
  key ??= await generatePrivateKey({ algorithm: 'ECDSA' });
  const csrPem = await buildCertificateRequest(spec, key);
  const { certPem } = await signCertificate({
    csrPem,
    duration: 3 * HOUR,
    isCA: false,
    usages: spec.usages,
    issuer: { selfSignedKey: key },
    now: issuedAt,
  });
  return { key, csrPem, certPem };
}

function secretFor(issued: Issued, annotations: Record<string, string> = {}): Secret {
  return {
    metadata: {
      name: 'web-tls',
      namespace: 'apps',
      annotations: {
        'cert-manager.io/certificate-name': 'web',
        'cert-manager.io/issuer-name': 'ca',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-group': 'cert-manager.io',
        ...annotations,
      },
    },
    type: 'kubernetes.io/tls',
    data: { 'tls.key': b64(encodePrivateKey(issued.key, 'PKCS8')), 'tls.crt': b64(issued.certPem) },
  };
}

function requestFor(spec: CertificateSpec, csrPem: string, revision = 1): CertificateRequest {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: {
      name: `web-${revision}`,
      namespace: 'apps',
      annotations: { 'cert-manager.io/certificate-revision': String(revision) },
    },
    spec: {
      request: b64(csrPem),
      issuerRef: spec.issuerRef,
      ...(spec.duration ? { duration: spec.duration } : {}),
      ...(spec.usages ? { usages: spec.usages } : {}),
      ...(spec.isCA ? { isCA: true } : {}),
    },
  };
}

describe('certificate policies', () => {
  let good: Issued;
  let other: Issued;
  const now = new Date(issuedAt.getTime() + HOUR);

  before(async () => {
    good = await issue(baseSpec);
    other = await issue(baseSpec);
  });

  const input = (over: Partial<PolicyInput> = {}): PolicyInput => ({
    certificate: certificate({}, { revision: 1 }),
    secret: secretFor(good),
    currentRevisionRequest: requestFor(baseSpec, good.csrPem),
    now,
    ...over,
  });

  it('finds nothing wrong with an up-to-date Secret and request', () => {
    assert.equal(evaluate(triggerPolicyChain, input()), undefined);
    assert.equal(evaluate(readinessPolicyChain, input()), undefined);
  });

  it('SecretDoesNotExist', () => {
    assert.deepEqual(SecretDoesNotExist(input({ secret: undefined })), {
      reason: 'DoesNotExist',
      message: 'Issuing certificate as Secret does not exist',
    });
    assert.equal(evaluate(triggerPolicyChain, input({ secret: undefined }))?.reason, 'DoesNotExist');
  });

  it('SecretIsMissingData', () => {
    const secret = secretFor(good);
    assert.match(SecretIsMissingData(input({ secret: { ...secret, data: undefined } }))!.message, /any data/);
    assert.match(
      SecretIsMissingData(input({ secret: { ...secret, data: { 'tls.crt': secret.data!['tls.crt'] } } }))!
        .message,
      /private key/,
    );
    assert.match(
      SecretIsMissingData(
        input({ secret: { ...secret, data: { 'tls.key': secret.data!['tls.key'], 'tls.crt': '' } } }),
      )!.message,
      /a certificate/,
    );
    assert.equal(SecretIsMissingData(input()), undefined);
  });

  it('SecretPublicKeysDiffer', () => {
    const mixed = secretFor(good);
    mixed.data!['tls.key'] = b64(encodePrivateKey(other.key, 'PKCS8'));
    assert.deepEqual(SecretPublicKeysDiffer(input({ secret: mixed })), {
      reason: 'InvalidKeyPair',
      message: 'Issuing certificate as Secret contains a private key that does not match the certificate',
    });
    const badKey = secretFor(good);
    badKey.data!['tls.key'] = b64('not a key');
    assert.equal(SecretPublicKeysDiffer(input({ secret: badKey }))?.reason, 'InvalidKeyPair');
    const badCert = secretFor(good);
    badCert.data!['tls.crt'] = b64('not a certificate');
    assert.equal(SecretPublicKeysDiffer(input({ secret: badCert }))?.reason, 'InvalidCertificate');
  });

  it('SecretIssuerAnnotationsMismatch', () => {
    const byOther = secretFor(good, { 'cert-manager.io/issuer-name': 'other' });
    assert.deepEqual(SecretIssuerAnnotationsMismatch(input({ secret: byOther })), {
      reason: 'IncorrectIssuer',
      message: 'Issuing certificate as Secret was previously issued by "Issuer.cert-manager.io/other"',
    });
    // Empty kind and group mean the defaults.
    const defaults = secretFor(good, {
      'cert-manager.io/issuer-kind': '',
      'cert-manager.io/issuer-group': '',
    });
    assert.equal(SecretIssuerAnnotationsMismatch(input({ secret: defaults })), undefined);
    // A pre-created Secret without annotations matches default refs only.
    const bare: Secret = { ...secretFor(good), metadata: { name: 'web-tls' } };
    assert.equal(SecretIssuerAnnotationsMismatch(input({ secret: bare })), undefined);
    const cluster = input({
      secret: bare,
      certificate: certificate({ issuerRef: { name: 'ca', kind: 'ClusterIssuer' } }),
    });
    assert.equal(SecretIssuerAnnotationsMismatch(cluster)?.reason, 'IncorrectIssuer');
  });

  it('SecretCertificateNameAnnotationsMismatch', () => {
    const forOther = secretFor(good, { 'cert-manager.io/certificate-name': 'api' });
    assert.equal(
      SecretCertificateNameAnnotationsMismatch(input({ secret: forOther }))?.reason,
      'IncorrectCertificate',
    );
    assert.equal(SecretCertificateNameAnnotationsMismatch(input()), undefined);
  });

  it('SecretPrivateKeyMismatchesSpec', () => {
    const rsa = input({ certificate: certificate({ privateKey: { algorithm: 'RSA' } }) });
    assert.deepEqual(SecretPrivateKeyMismatchesSpec(rsa), {
      reason: 'SecretMismatch',
      message: 'Existing private key is not up to date for spec: [spec.privateKey.algorithm]',
    });
    const p384 = input({ certificate: certificate({ privateKey: { algorithm: 'ECDSA', size: 384 } }) });
    assert.match(SecretPrivateKeyMismatchesSpec(p384)!.message, /\[spec\.privateKey\.size\]/);
  });

  it('SecretPublicKeyDiffersFromCurrentCertificateRequest', () => {
    const request = requestFor(baseSpec, other.csrPem);
    assert.deepEqual(
      SecretPublicKeyDiffersFromCurrentCertificateRequest(input({ currentRevisionRequest: request })),
      {
        reason: 'SecretMismatch',
        message: 'Secret contains a private key that does not match the current CertificateRequest',
      },
    );
    assert.equal(
      SecretPublicKeyDiffersFromCurrentCertificateRequest(input({ currentRevisionRequest: undefined })),
      undefined,
    );
  });

  it('CurrentCertificateRequestMismatchesSpec compares the current request with the spec', () => {
    const changed = input({ certificate: certificate({ dnsNames: ['web.example'] }, { revision: 1 }) });
    assert.deepEqual(CurrentCertificateRequestMismatchesSpec(changed), {
      reason: 'RequestChanged',
      message: 'Fields on existing CertificateRequest resource not up to date: [spec.dnsNames]',
    });
  });

  it('CurrentCertificateRequestMismatchesSpec falls back to the certificate without a request', () => {
    const noRequest = { currentRevisionRequest: undefined };
    assert.equal(CurrentCertificateRequestMismatchesSpec(input(noRequest)), undefined);
    // A name may move between commonName and dnsNames.
    const moved = certificate({ commonName: 'web.example', dnsNames: ['www.web.example'] });
    assert.equal(
      CurrentCertificateRequestMismatchesSpec(input({ ...noRequest, certificate: moved })),
      undefined,
    );
    const changed = certificate({ dnsNames: ['web.example', 'api.web.example'] });
    assert.deepEqual(CurrentCertificateRequestMismatchesSpec(input({ ...noRequest, certificate: changed })), {
      reason: 'SecretMismatch',
      message: 'Issuing certificate as Existing issued Secret is not up to date for spec: [spec.dnsNames]',
    });
  });

  it('CurrentCertificateNearingExpiry renews at the renewal time (2/3 of a 3h certificate: after 2h)', () => {
    const at = (ms: number) => input({ now: new Date(issuedAt.getTime() + ms) });
    assert.equal(CurrentCertificateNearingExpiry(at(2 * HOUR - 1000)), undefined);
    assert.equal(CurrentCertificateNearingExpiry(at(2 * HOUR))?.reason, 'Renewing');
    const disabled = input({
      now: new Date(issuedAt.getTime() + 4 * HOUR),
      certificate: certificate({ renewal: { policy: 'Disabled' } }),
    });
    assert.equal(CurrentCertificateNearingExpiry(disabled), undefined);
    assert.equal(evaluate(triggerPolicyChain, at(2 * HOUR + 1))?.reason, 'Renewing');
    // Readiness does not care about renewal, only expiry.
    assert.equal(evaluate(readinessPolicyChain, at(2 * HOUR + 1)), undefined);
  });

  it('CurrentCertificateHasExpired', () => {
    const at = (ms: number) => input({ now: new Date(issuedAt.getTime() + ms) });
    assert.equal(CurrentCertificateHasExpired(at(3 * HOUR)), undefined);
    assert.deepEqual(CurrentCertificateHasExpired(at(3 * HOUR + 1000)), {
      reason: 'Expired',
      message: 'Certificate expired on Sun, 01 Mar 2026 03:00:00 UTC',
    });
    assert.equal(evaluate(readinessPolicyChain, at(4 * HOUR))?.reason, 'Expired');
  });

  it('invalidSpec reports what the webhook would refuse', () => {
    const violation = invalidSpec(certificate({ dnsNames: [], secretName: 'web-tls' }));
    assert.equal(violation?.reason, 'InvalidSpec');
    assert.match(violation!.message, /at least one of/);
    assert.equal(invalidSpec(certificate()), undefined);
  });
});

describe('requestMatchesSpec', () => {
  it('ignores order, default issuer kind and group, and equivalent spellings', async () => {
    const spec: CertificateSpec = {
      ...baseSpec,
      commonName: 'web',
      subject: { organizations: ['B', 'A'] },
      ipAddresses: ['10.0.0.1', '::1'],
      usages: ['server auth', 'digital signature'],
      duration: '2160h',
    };
    const { csrPem } = await issue(spec);
    const request = requestFor(spec, csrPem);
    const same: CertificateSpec = {
      ...spec,
      dnsNames: ['www.web.example', 'web.example'],
      subject: { organizations: ['A', 'B'] },
      ipAddresses: ['0:0:0:0:0:0:0:1', '10.0.0.1'],
      usages: ['digital signature', 'server auth'],
      duration: '2160h0m0s',
      issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' },
    };
    assert.deepEqual(requestMatchesSpec(request, same), []);
    assert.ok(issuerRefsEqual({ name: 'ca' }, { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' }));
  });

  it('lists every field that changed', async () => {
    const { csrPem } = await issue(baseSpec);
    const request = requestFor(baseSpec, csrPem);
    const changed: CertificateSpec = {
      ...baseSpec,
      commonName: 'web',
      dnsNames: ['web.example'],
      isCA: true,
      usages: ['server auth'],
      duration: '4h',
      issuerRef: { name: 'ca', kind: 'ClusterIssuer' },
      subject: { organizations: ['Org'], postalCodes: ['1000'] },
    };
    assert.deepEqual(requestMatchesSpec(request, changed), [
      'spec.dnsNames',
      'spec.commonName',
      'spec.subject.organizations',
      'spec.subject.postCodes',
      'spec.isCA',
      'spec.usages',
      'spec.duration',
      'spec.issuerRef',
    ]);
  });

  it('compares a literal subject byte for byte', async () => {
    const spec: CertificateSpec = { ...baseSpec, literalSubject: 'CN=web,OU=B,OU=A,O=Corp' };
    const { csrPem } = await issue(spec);
    assert.deepEqual(requestMatchesSpec(requestFor(spec, csrPem), spec), []);
    assert.deepEqual(
      requestMatchesSpec(requestFor(spec, csrPem), { ...spec, literalSubject: 'CN=web,OU=A,OU=B,O=Corp' }),
      ['spec.literalSubject'],
    );
  });

  it('throws on an unreadable CSR', () => {
    const request = requestFor(baseSpec, 'garbage');
    assert.throws(() => requestMatchesSpec(request, baseSpec));
  });

  it('certificateMatchesSpec compares SANs loosely', async () => {
    const { certPem } = await issue({ ...baseSpec, commonName: 'web.example', ipAddresses: ['10.0.0.1'] });
    const info = parseCertificate(certPem);
    assert.deepEqual(certificateMatchesSpec(info, { ...baseSpec, ipAddresses: ['10.0.0.1'] }), []);
    assert.deepEqual(certificateMatchesSpec(info, { ...baseSpec, commonName: 'other', ipAddresses: [] }), [
      'spec.commonName',
      'spec.ipAddresses',
    ]);
  });
});

describe('certificate policies on a Secret cached as facts (docs/adr/1140)', () => {
  let good: Issued;
  let other: Issued;
  const now = new Date(issuedAt.getTime() + HOUR);

  before(async () => {
    good = await issue(baseSpec);
    other = await issue(baseSpec);
  });

  /** The Secret as the controller's cache holds it. */
  const cached = (secret: Secret): Secret => {
    const lean = leanSecret(structuredClone(secret) as never) as Secret;
    assert.ok(isStrippedSecret(lean), 'held as facts');
    for (const value of Object.values(lean.data ?? {})) {
      assert.doesNotMatch(
        value,
        /^LS0tLS1CRUdJTiB[A-Za-z0-9+/]*/u,
        'no PEM held in the data but the CA bundle',
      );
    }
    return lean;
  };

  const input = (over: Partial<PolicyInput> = {}): PolicyInput => ({
    certificate: certificate({}, { revision: 1 }),
    secret: secretFor(good),
    currentRevisionRequest: requestFor(baseSpec, good.csrPem),
    now,
    ...over,
  });

  /** The first violation of both chains, for the Secret with its bytes and as the cache holds it. */
  const judged = (over: Partial<PolicyInput>) => {
    const bytes = input(over);
    const facts = { ...bytes, secret: cached(bytes.secret!) };
    return {
      bytes: [evaluate(triggerPolicyChain, bytes), evaluate(readinessPolicyChain, bytes)],
      facts: [evaluate(triggerPolicyChain, facts), evaluate(readinessPolicyChain, facts)],
    };
  };

  it('finds nothing wrong with an up-to-date Secret', () => {
    assert.deepEqual(judged({}).facts, [undefined, undefined]);
  });

  it('notices a key that is not the certificate’s', () => {
    const mixed = secretFor(good);
    mixed.data!['tls.key'] = b64(encodePrivateKey(other.key, 'PKCS8'));
    const { bytes, facts } = judged({ secret: mixed });
    assert.equal(facts[0]?.reason, 'InvalidKeyPair');
    assert.deepEqual(facts, bytes);
  });

  it('notices a key of the wrong algorithm or size for the spec', () => {
    for (const privateKey of [{ algorithm: 'RSA' as const }, { algorithm: 'ECDSA' as const, size: 384 }]) {
      const { bytes, facts } = judged({ certificate: certificate({ privateKey }, { revision: 1 }) });
      assert.equal(facts[0]?.reason, 'SecretMismatch');
      assert.deepEqual(facts, bytes);
    }
  });

  it('notices a key pair that is not the current request’s', () => {
    const { bytes, facts } = judged({ secret: secretFor(other) });
    assert.match(facts[0]?.message ?? '', /does not match the current CertificateRequest/);
    assert.deepEqual(facts, bytes);
  });

  it('compares the certificate’s names with the spec when the request is gone', () => {
    const spec = certificate({ dnsNames: ['web.example'] }, { revision: 1 });
    const { bytes, facts } = judged({ certificate: spec, currentRevisionRequest: undefined });
    assert.match(facts[0]?.message ?? '', /spec\.dnsNames/);
    assert.deepEqual(facts, bytes);
  });

  it('notices a removed or changed issuer annotation', () => {
    const removed = secretFor(good);
    delete removed.metadata!.annotations!['cert-manager.io/issuer-name'];
    const { bytes, facts } = judged({ secret: removed });
    assert.equal(facts[0]?.reason, 'IncorrectIssuer');
    assert.deepEqual(facts, bytes);
  });

  it('renews and expires by the certificate’s dates', () => {
    for (const at of [2.5 * HOUR, 4 * HOUR]) {
      const { bytes, facts } = judged({ now: new Date(issuedAt.getTime() + at) });
      assert.ok(facts[0], `a violation ${at / HOUR} h after issuance`);
      assert.deepEqual(facts, bytes);
    }
  });

  it('keeps Secrets whose key or certificate does not parse, or that carry more than a key pair, whole', () => {
    const badKey = secretFor(good);
    badKey.data!['tls.key'] = b64('not a key');
    const keystore = secretFor(good);
    keystore.data!['keystore.p12'] = b64('p12');
    for (const secret of [badKey, keystore]) {
      const lean = leanSecret(structuredClone(secret) as never) as Secret;
      assert.equal(isStrippedSecret(lean), false);
      assert.deepEqual(lean.data, secret.data);
    }
  });
});
