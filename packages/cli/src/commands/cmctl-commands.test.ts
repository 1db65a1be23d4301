import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newNotFound, StatusError } from '@certkit/apimachinery';
import type { CertificateRequest } from '@certkit/certificates/api/types';
import { simpleError, withBareVerbosity } from './check-api.ts';
import { certificateFromManifest, isSigned } from './create-certificaterequest.ts';

/** The pure parts of check api and create certificaterequest: error wording, manifest reading, waiting. */

describe('check api: what a failed check says', () => {
  const server = 'https://127.0.0.1:6443';

  it('an unknown resource (no CRDs) says the CRDs are missing; a missing object does not', () => {
    const noRoute = new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      code: 404,
    });
    assert.equal(
      simpleError(noRoute, server),
      'the cert-manager CRDs are not yet installed on the Kubernetes API server',
    );
    const namespace = newNotFound({ group: '', resource: 'namespaces' }, 'nope');
    assert.equal(simpleError(namespace, server), 'namespaces "nope" not found');
  });

  it('a refused connection, found however deep the client wrapped it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const wrapped = new Error('request failed', { cause: new AggregateError([refused]) });
    assert.equal(
      simpleError(wrapped, server),
      `the API server at ${server} refused the connection: is it running?`,
    );
  });

  it('an untrusted certificate and a timeout, in words', () => {
    const tls = Object.assign(new Error('self-signed certificate in certificate chain'), {
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    assert.equal(
      simpleError(tls, server),
      "the API server's certificate is not trusted: self-signed certificate in certificate chain (is the kubeconfig's certificate-authority-data the server's CA?)",
    );
    const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    assert.equal(simpleError(timeout, server), `the API server at ${server} did not answer in time`);
  });
});

describe("check api's -v, as cmctl's optional level", () => {
  it('a bare -v (last, or before another flag) is level 2; -v N and -vN keep their level', () => {
    assert.deepEqual(withBareVerbosity(['--wait=1m', '-v']), ['--wait=1m', '--v=2']);
    assert.deepEqual(withBareVerbosity(['-v', '--wait', '1m']), ['--v=2', '--wait', '1m']);
    assert.deepEqual(withBareVerbosity(['--v']), ['--v=2']);
    assert.deepEqual(withBareVerbosity(['-v', '4']), ['-v', '4']);
    assert.deepEqual(withBareVerbosity(['-v3', '--v=1']), ['-v3', '--v=1']);
  });
});

describe('create certificaterequest: the manifest and the wait', () => {
  const certificate =
    'apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: c}\nspec: {issuerRef: {name: ca}, secretName: s}\n';

  it('reads one cert-manager.io/v1 Certificate, as YAML or JSON', () => {
    assert.equal(certificateFromManifest(certificate, 'f').spec.issuerRef.name, 'ca');
    const json = JSON.stringify({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      spec: { issuerRef: { name: 'x' } },
    });
    assert.equal(certificateFromManifest(json, 'f').spec.issuerRef.name, 'x');
  });

  it('reads an older version as cmctl does, converted to v1', () => {
    const old =
      'apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: c}\n' +
      'spec: {issuerRef: {name: ca}, secretName: s, keyAlgorithm: ecdsa, keySize: 384, uriSANs: [spiffe://a]}\n';
    const v1 = certificateFromManifest(old, 'f');
    assert.equal(v1.apiVersion, 'cert-manager.io/v1');
    assert.deepEqual(v1.spec.privateKey, { algorithm: 'ECDSA', size: 384 });
    assert.deepEqual(v1.spec.uris, ['spiffe://a']);
  });

  it('refuses anything else with one line naming the file', () => {
    assert.throws(
      () => certificateFromManifest('', 'f.yaml'),
      /^Error: no objects found in manifest file "f\.yaml"\. Expected one Certificate object$/,
    );
    assert.throws(
      () => certificateFromManifest(`${certificate}---\n${certificate}`, 'f'),
      /multiple objects found/,
    );
    assert.throws(
      () => certificateFromManifest('apiVersion: v1\nkind: Secret\n', 'f'),
      /^Error: f holds a Secret, not a cert-manager\.io Certificate$/,
    );
    assert.throws(
      () => certificateFromManifest(certificate.replace('v1', 'v2'), 'f'),
      /^Error: f: Certificate "c": cert-manager\.io\/v2 is not a version of cert-manager\.io \(v1alpha2, v1alpha3, v1beta1, v1\)$/,
    );
    assert.throws(() => certificateFromManifest('a: [', 'f'), /^Error: error parsing f: /);
    assert.throws(
      () => certificateFromManifest(certificate.replace('issuerRef: {name: ca}, ', ''), 'f'),
      /the Certificate has no spec\.issuerRef\.name/,
    );
  });

  const request = (status: CertificateRequest['status']) =>
    ({
      metadata: { name: 'r' },
      spec: { issuerRef: { name: 'ca' }, request: '' },
      status,
    }) as CertificateRequest;

  it('waits while pending, stops when signed, and fails at once when denied or failed', () => {
    assert.equal(isSigned(request(undefined)), false);
    assert.equal(
      isSigned(request({ conditions: [{ type: 'Ready', status: 'False', reason: 'Pending' }] })),
      false,
    );
    // Ready without the certificate yet is not signed.
    assert.equal(
      isSigned(request({ conditions: [{ type: 'Ready', status: 'True', reason: 'Issued' }] })),
      false,
    );
    assert.equal(
      isSigned(
        request({ conditions: [{ type: 'Ready', status: 'True', reason: 'Issued' }], certificate: 'eA==' }),
      ),
      true,
    );
    assert.throws(
      () =>
        isSigned(
          request({ conditions: [{ type: 'Denied', status: 'True', reason: 'Policy', message: 'no' }] }),
        ),
      /^Error: CertificateRequest r was denied: no$/,
    );
    assert.throws(
      () =>
        isSigned(
          request({ conditions: [{ type: 'Ready', status: 'False', reason: 'Failed', message: 'bad CSR' }] }),
        ),
      /^Error: CertificateRequest r failed: bad CSR$/,
    );
  });
});
