import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError, type KubeObject } from '@certkit/apimachinery';
import { certManagerAdmission } from './admission.ts';

const GROUP = 'cert-manager.io';

/** A Certificate whose spec the webhook refuses (stored before a rule existed, or where no webhook ran). */
const invalidCertificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'old', namespace: 'apps' },
  spec: { secretName: 'old-tls', issuerRef: { name: 'ca' }, commonName: 'old', privateKey: { size: -1 } },
} as KubeObject;

const request = (conditions: object[]) =>
  ({
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name: 'r', namespace: 'apps' },
    spec: { request: 'x', issuerRef: { name: 'ca' } },
    status: { conditions },
  }) as KubeObject;

const approved = { type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'ok' };

describe('certManagerAdmission', () => {
  it('judges a spec on create and update of the main resource', () => {
    const errors = certManagerAdmission(GROUP, 'Certificate', invalidCertificate, undefined);
    assert.deepEqual(errors.map(formatFieldError), [
      'spec.privateKey.size: Invalid value: -1: must be between 2048 and 8192 for rsa keyAlgorithm',
    ]);
    assert.equal(
      certManagerAdmission(GROUP, 'Certificate', invalidCertificate, invalidCertificate).length,
      1,
    );
  });

  it('does not judge a spec on a status update, which cannot change it', () => {
    const withStatus = { ...invalidCertificate, status: { conditions: [] } } as KubeObject;
    assert.deepEqual(
      certManagerAdmission(GROUP, 'Certificate', withStatus, invalidCertificate, 'status'),
      [],
    );
    const typeless = { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i' }, spec: {} };
    assert.deepEqual(
      certManagerAdmission(GROUP, 'Issuer', typeless as KubeObject, typeless as KubeObject, 'status'),
      [],
    );
  });

  it("judges a CertificateRequest's approval conditions on a status update", () => {
    const before = request([approved]);
    assert.deepEqual(
      certManagerAdmission(
        GROUP,
        'CertificateRequest',
        request([approved, { type: 'Ready', status: 'False' }]),
        before,
        'status',
      ),
      [],
    );
    const errors = certManagerAdmission(
      GROUP,
      'CertificateRequest',
      request([{ ...approved, status: 'False' }]),
      before,
      'status',
    );
    assert.deepEqual(errors.map(formatFieldError), [
      "status.conditions: Forbidden: 'Approved' condition may not be modified once set",
      'status.conditions.Approved: Invalid value: "False": "Approved" condition may only be set to True',
    ]);
    // An absent field equals its zero value, as in Go's DeepEqual of the typed condition.
    const { message: _dropped, ...withoutMessage } = approved;
    assert.deepEqual(
      certManagerAdmission(
        GROUP,
        'CertificateRequest',
        request([withoutMessage]),
        request([{ ...approved, message: '' }]),
        'status',
      ),
      [],
    );
  });

  it('leaves other groups alone', () => {
    assert.deepEqual(certManagerAdmission('example.com', 'Certificate', invalidCertificate, undefined), []);
  });
});
