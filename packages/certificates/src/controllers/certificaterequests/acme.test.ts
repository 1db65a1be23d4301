import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { describe, it } from 'node:test';
import type { CertificateRequest, Issuer } from '../../api/types.ts';
import { buildCertificateRequest } from '../../pki/index.ts';
import type { IssuerHandle } from '../issuers/generic.ts';
import { orderSpecFor } from './acme.ts';

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

async function request(
  spec: Parameters<typeof buildCertificateRequest>[0],
  duration?: string,
): Promise<CertificateRequest> {
  const pem = await buildCertificateRequest(spec, privateKey);
  return {
    metadata: { name: 'web-1', namespace: 'ns', uid: 'cr-uid' },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      issuerRef: { name: 'le' },
      ...(duration ? { duration } : {}),
    },
  } as CertificateRequest;
}

function issuer(acme: Record<string, unknown> = {}): IssuerHandle {
  const spec = { acme: { server: 'https://acme.test/dir', privateKeySecretRef: { name: 'k' }, ...acme } };
  return { kind: 'Issuer', issuer: { metadata: { name: 'le', namespace: 'ns' }, spec } as Issuer };
}

describe('orderSpecFor', () => {
  it("takes the CSR's names and the request's issuerRef", async () => {
    const cr = await request({
      commonName: 'www.example.test',
      dnsNames: ['www.example.test', 'example.test'],
      ipAddresses: ['192.0.2.1'],
    });
    assert.deepEqual(orderSpecFor(cr, issuer()), {
      request: cr.spec.request,
      issuerRef: { name: 'le' },
      commonName: 'www.example.test',
      dnsNames: ['www.example.test', 'example.test'],
      ipAddresses: ['192.0.2.1'],
    });
  });

  it('carries the duration only with enableDurationFeature, and the issuer profile', async () => {
    const cr = await request({ dnsNames: ['a.example.test'] }, '1h');
    const without = orderSpecFor(cr, issuer());
    assert.ok('request' in without && without.duration === undefined);
    const withDuration = orderSpecFor(cr, issuer({ enableDurationFeature: true, profile: 'shortlived' }));
    assert.ok('request' in withDuration);
    assert.equal(withDuration.duration, '1h');
    assert.equal(withDuration.profile, 'shortlived');
  });

  it('fails a request whose CN is not among its SANs (InvalidOrder), and an unreadable CSR', async () => {
    const cr = await request({ commonName: 'cn.example.test', dnsNames: ['other.example.test'] });
    const outcome = orderSpecFor(cr, issuer());
    assert.ok('failed' in outcome);
    assert.equal(outcome.failed.reason, 'InvalidOrder');
    // Upstream's text, word for word (certificaterequests/acme/acme.go), with Go's %s of the two lists.
    assert.equal(
      outcome.failed.message,
      'The CSR PEM requests a commonName that is not present in the list of dnsNames or ipAddresses. ' +
        'If a commonName is set, ACME requires that the value is also present in the list of dnsNames or ' +
        'ipAddresses: "cn.example.test" does not exist in [other.example.test] or []',
    );

    const garbage = { ...cr, spec: { ...cr.spec, request: Buffer.from('not a CSR').toString('base64') } };
    const unreadable = orderSpecFor(garbage, issuer());
    assert.ok('failed' in unreadable);
    assert.equal(unreadable.failed.reason, 'RequestParsingError');
  });
});
