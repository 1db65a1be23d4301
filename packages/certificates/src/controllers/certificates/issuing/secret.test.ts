import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateSpec } from '../../../api/types.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  signCertificate,
} from '../../../pki/index.ts';
import {
  buildCertificateSecret,
  SECRET_TEMPLATE_KEYS_ANNOTATION,
  secretDiffers,
  type SecretContents,
} from './secret.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const text = (value: string | undefined) => Buffer.from(value ?? '', 'base64').toString();

function certificate(spec: Partial<CertificateSpec> = {}): Certificate {
  return {
    metadata: { name: 'web', namespace: 'apps', uid: 'uid-web' },
    spec: { secretName: 'web-tls', issuerRef: { name: 'ca' }, dnsNames: ['web.example'], ...spec },
  };
}

const provenance = {
  certificateName: 'web',
  issuerName: 'ca',
  issuerKind: 'Issuer',
  issuerGroup: 'cert-manager.io',
};

describe('buildCertificateSecret', () => {
  let contents: SecretContents;

  before(async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const csrPem = await buildCertificateRequest({ commonName: 'web', dnsNames: ['web.example'] }, key);
    const { certPem, caPem } = await signCertificate({
      csrPem,
      duration: 3600_000,
      isCA: false,
      issuer: { selfSignedKey: key },
    });
    contents = { privateKey: encodePrivateKey(key), certificate: certPem, ca: caPem };
  });

  it('makes a new kubernetes.io/tls Secret with data, the fao label and annotations', () => {
    const secret = buildCertificateSecret(undefined, certificate(), contents, provenance, 'Never');
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(secret.metadata, {
      name: 'web-tls',
      namespace: 'apps',
      labels: { 'controller.cert-manager.io/fao': 'true' },
      annotations: {
        'cert-manager.io/common-name': 'web',
        'cert-manager.io/alt-names': 'web.example',
        'cert-manager.io/ip-sans': '',
        'cert-manager.io/uri-sans': '',
        'cert-manager.io/certificate-name': 'web',
        'cert-manager.io/issuer-name': 'ca',
        'cert-manager.io/issuer-kind': 'Issuer',
        'cert-manager.io/issuer-group': 'cert-manager.io',
      },
    });
    assert.equal(text(secret.data!['tls.crt']), contents.certificate);
    assert.equal(text(secret.data!['tls.key']), contents.privateKey);
    assert.equal(text(secret.data!['ca.crt']), contents.ca);
  });

  it("keeps a pre-created Secret's type and foreign data, labels and annotations", () => {
    const existing: Secret = {
      metadata: { name: 'web-tls', namespace: 'apps', labels: { app: 'web' }, annotations: { note: 'mine' } },
      type: 'Opaque',
      data: { extra: b64('x') },
    };
    const secret = buildCertificateSecret(existing, certificate(), contents, provenance, 'Never');
    assert.equal(secret.type, 'Opaque');
    assert.equal(secret.data!.extra, b64('x'));
    assert.equal(secret.metadata!.labels!.app, 'web');
    assert.equal(secret.metadata!.annotations!.note, 'mine');
  });

  it('adds secretTemplate keys, records them, and removes only recorded ones once dropped', () => {
    const template = { labels: { team: 'a', tier: 'web' }, annotations: { 'example.com/owner': 'a' } };
    const first = buildCertificateSecret(
      undefined,
      certificate({ secretTemplate: template }),
      contents,
      provenance,
      'Never',
    );
    assert.equal(first.metadata!.labels!.team, 'a');
    assert.equal(first.metadata!.annotations!['example.com/owner'], 'a');
    assert.deepEqual(JSON.parse(first.metadata!.annotations![SECRET_TEMPLATE_KEYS_ANNOTATION]), {
      labels: ['team', 'tier'],
      annotations: ['example.com/owner'],
    });
    // Someone else adds a label; then "tier" and the annotation leave the template.
    first.metadata!.labels!.other = 'kept';
    const next = certificate({ secretTemplate: { labels: { team: 'b' } } });
    const second = buildCertificateSecret(first, next, contents, provenance, 'Never');
    assert.deepEqual(second.metadata!.labels, {
      team: 'b',
      other: 'kept',
      'controller.cert-manager.io/fao': 'true',
    });
    assert.equal(second.metadata!.annotations!['example.com/owner'], undefined);
    assert.deepEqual(JSON.parse(second.metadata!.annotations![SECRET_TEMPLATE_KEYS_ANNOTATION]), {
      labels: ['team'],
      annotations: [],
    });
    const third = buildCertificateSecret(second, certificate(), contents, provenance, 'Never');
    assert.equal(third.metadata!.labels!.team, undefined);
    assert.equal(third.metadata!.annotations![SECRET_TEMPLATE_KEYS_ANNOTATION], undefined);
  });

  it('writes and removes additional output formats', () => {
    const withFormats = certificate({ additionalOutputFormats: [{ type: 'DER' }, { type: 'CombinedPEM' }] });
    const secret = buildCertificateSecret(undefined, withFormats, contents, provenance, 'Never');
    assert.ok(secret.data!['key.der']);
    assert.equal(text(secret.data!['tls-combined.pem']), `${contents.privateKey}\n${contents.certificate}`);
    const without = buildCertificateSecret(secret, certificate(), contents, provenance, 'Never');
    assert.equal(without.data!['key.der'], undefined);
    assert.equal(without.data!['tls-combined.pem'], undefined);
  });

  it('follows the cleanup policy with the owner reference, and nothing else changes', () => {
    const never = buildCertificateSecret(undefined, certificate(), contents, provenance, 'Never');
    const onDelete = buildCertificateSecret(never, certificate(), contents, provenance, 'OnDelete');
    assert.deepEqual(onDelete.metadata!.ownerReferences, [
      {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        name: 'web',
        uid: 'uid-web',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.ok(secretDiffers(never, onDelete));
    const back = buildCertificateSecret(onDelete, certificate(), contents, provenance, 'Never');
    assert.equal(back.metadata!.ownerReferences, undefined);
    assert.ok(!secretDiffers(never, back));
  });

  it('drops ca.crt when the issuer gives none, and stale certificate-detail annotations', () => {
    const existing = buildCertificateSecret(undefined, certificate(), contents, provenance, 'Never');
    existing.metadata!.annotations!['cert-manager.io/email-sans'] = 'old@example.com';
    const { ca: _ca, ...withoutCa } = contents;
    const secret = buildCertificateSecret(existing, certificate(), withoutCa, {}, 'Never');
    assert.equal(secret.data!['ca.crt'], undefined);
    assert.equal(secret.metadata!.annotations!['cert-manager.io/email-sans'], undefined);
    // Without provenance, the existing provenance annotations stay.
    assert.equal(secret.metadata!.annotations!['cert-manager.io/issuer-name'], 'ca');
  });
});
