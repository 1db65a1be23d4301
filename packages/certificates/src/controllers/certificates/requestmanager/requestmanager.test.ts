/**
 * The request manager's reconcile, one table row per case of cert-manager's
 * requestmanager_controller_test.go, on the in-memory client: the Certificate, its next key and its
 * CertificateRequests in; the requests created or deleted and the Events out.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateRequest, CertificateSpec } from '../../../api/types.ts';
import { parseCertificateRequest, publicKeysEqual } from '../../../pki/index.ts';
import {
  BASE_SPEC,
  certificate,
  certificateRequest,
  condition,
  FakeEnvironment,
  formatTime,
  HOUR,
  ISSUED_AT,
  keyPair,
  type KeyPair,
  nextKeySecret,
  NOW,
  requestCondition,
} from '@certkit/testenv/controllers/fake-environment';
import { requestManagerReconciler } from './requestmanager.ts';

let next: KeyPair;
let other: KeyPair;

before(async () => {
  next = await keyPair();
  other = await keyPair();
});

interface Row {
  name: string;
  certificate?: () => Certificate;
  secrets?: (cert: Certificate) => Secret[];
  requests?: (cert: Certificate) => CertificateRequest[];
  writes: string[];
  events?: (string | RegExp)[];
  check?: (env: FakeEnvironment) => void;
}

/** Issuing since `since`, next key in web-next, at `revision`. */
const issuing = (spec: Partial<CertificateSpec> = {}, revision?: number, since = ISSUED_AT) =>
  certificate(spec, {
    ...(revision === undefined ? {} : { revision }),
    nextPrivateKeySecretName: 'web-next',
    conditions: [condition('Issuing', 'True', 'DoesNotExist', '', since)],
  });
const withKey = (c: Certificate) => [nextKeySecret(c, 'web-next', next.key)];
const CREATE_1 = 'create certificaterequests.cert-manager.io web-1';
const REQUESTED_1 = 'Normal Requested: Created new CertificateRequest resource "web-1"';
const pendingFor = (c: Certificate, pair = next, revision = 1) => [
  certificateRequest(c, revision, pair.csrPem, {}, 'web-next'),
];

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist', writes: [] },
  {
    name: 'does nothing without an Issuing condition',
    certificate: () => certificate(),
    secrets: withKey,
    writes: [],
  },
  {
    name: 'does nothing when Issuing is False',
    certificate: () => certificate({}, { conditions: [condition('Issuing', 'False', 'Failed')] }),
    secrets: withKey,
    writes: [],
  },
  {
    name: 'does nothing when status.nextPrivateKeySecretName is not set',
    certificate: () => certificate({}, { conditions: [condition('Issuing', 'True', 'DoesNotExist')] }),
    secrets: withKey,
    writes: [],
  },
  { name: 'does nothing when the next-key Secret does not exist', certificate: () => issuing(), writes: [] },
  {
    name: 'does nothing when the next-key Secret has no data',
    certificate: () => issuing(),
    secrets: (c) => [nextKeySecret(c, 'web-next', undefined)],
    writes: [],
  },
  {
    name: 'does nothing when the next-key Secret holds invalid data',
    certificate: () => issuing(),
    secrets: (c) => [{ ...nextKeySecret(c, 'web-next', undefined), data: { 'tls.key': 'Z2FyYmFnZQ==' } }],
    writes: [],
  },
  {
    name: 'creates the request for revision 1 when none exists, with an event',
    certificate: () => issuing(),
    secrets: withKey,
    writes: [CREATE_1],
    events: [REQUESTED_1],
    check: (env) => {
      const cr = env.written<CertificateRequest>('create', 'certificaterequests.cert-manager.io')[0];
      assert.deepEqual(cr.metadata.annotations, {
        'cert-manager.io/certificate-revision': '1',
        'cert-manager.io/private-key-secret-name': 'web-next',
        'cert-manager.io/certificate-name': 'web',
      });
      assert.deepEqual(
        cr.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
        [['Certificate', 'web', 'uid-web', true]],
      );
      assert.deepEqual(cr.spec.issuerRef, BASE_SPEC.issuerRef);
      assert.equal(cr.spec.duration, '3h');
      const csr = parseCertificateRequest(Buffer.from(cr.spec.request, 'base64').toString());
      assert.ok(publicKeysEqual(csr.publicKey, next.key), 'the CSR is for the next key');
      assert.deepEqual(csr.dnsNames, ['web.example']);
    },
  },
  {
    name: 'creates the request for the next revision (current + 1), leaving the current one alone',
    certificate: () => issuing({}, 4),
    secrets: withKey,
    requests: (c) => pendingFor(c, next, 4),
    writes: ['create certificaterequests.cert-manager.io web-5'],
    events: ['Normal Requested: Created new CertificateRequest resource "web-5"'],
  },
  {
    name: 'does nothing when a request valid for the spec and key exists and is pending',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => pendingFor(c),
    writes: [],
  },
  {
    name: 'deletes a request without the revision annotation and makes a new one',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => {
      const cr = pendingFor(c)[0];
      delete cr.metadata.annotations!['cert-manager.io/certificate-revision'];
      cr.metadata.name = 'web-old';
      return [cr];
    },
    writes: ['delete certificaterequests.cert-manager.io web-old', CREATE_1],
    events: [REQUESTED_1],
  },
  {
    name: 'recreates the request when its CSR is not for the next key',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => pendingFor(c, other),
    writes: ['delete certificaterequests.cert-manager.io web-1', CREATE_1],
    events: [REQUESTED_1],
  },
  {
    name: 'recreates the request when it no longer matches the spec',
    certificate: () => issuing({ duration: '2h' }),
    secrets: withKey,
    requests: (c) => pendingFor({ ...c, spec: { ...c.spec, duration: '3h' } }),
    writes: ['delete certificaterequests.cert-manager.io web-1', CREATE_1],
    events: [REQUESTED_1],
  },
  {
    name: 'deletes a request holding invalid CSR data and makes a new one',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => {
      const cr = pendingFor(c)[0];
      return [{ ...cr, spec: { ...cr.spec, request: 'Z2FyYmFnZQ==' } }];
    },
    writes: ['delete certificaterequests.cert-manager.io web-1', CREATE_1],
    events: [REQUESTED_1],
  },
  {
    name: 'does nothing when several matching requests exist for the next revision',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => [
      pendingFor(c)[0],
      { ...pendingFor(c)[0], metadata: { ...pendingFor(c)[0].metadata, name: 'web-1-copy' } },
    ],
    writes: [],
  },
  {
    name: 'recreates a request that failed during an earlier issuance',
    certificate: () => issuing({}, undefined, NOW),
    secrets: withKey,
    requests: (c) => [
      certificateRequest(c, 1, next.csrPem, {
        failureTime: formatTime(ISSUED_AT),
        conditions: [requestCondition('Ready', 'False', 'Failed', 'the CA said no')],
      }),
    ],
    writes: ['delete certificaterequests.cert-manager.io web-1', CREATE_1],
    events: [REQUESTED_1],
  },
  {
    name: 'leaves a request that failed during this issuance (the issuing controller ends it)',
    certificate: () => issuing({}, undefined, ISSUED_AT),
    secrets: withKey,
    requests: (c) => [
      certificateRequest(c, 1, next.csrPem, {
        failureTime: formatTime(new Date(ISSUED_AT.getTime() + HOUR / 2)),
        conditions: [requestCondition('Ready', 'False', 'Failed', 'the CA said no')],
      }),
    ],
    writes: [],
  },
  {
    // cert-manager's webhook refuses such a spec (here, a malformed IP range): no request is made for it.
    name: 'does nothing for a spec the webhook would refuse',
    certificate: () => issuing({ isCA: true, nameConstraints: { permitted: { ipRanges: ['10.0.0.0/33'] } } }),
    secrets: withKey,
    writes: [],
  },
];

const matches = (actual: string[], expected: (string | RegExp)[]) => {
  assert.equal(actual.length, expected.length, `got ${JSON.stringify(actual)}`);
  for (const [i, e] of expected.entries()) {
    if (typeof e === 'string') assert.equal(actual[i], e);
    else assert.match(actual[i], e);
  }
};

describe('certificates-request-manager reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const cert = row.certificate?.();
      const env = await FakeEnvironment.start({
        certificates: cert ? [cert] : [],
        secrets: cert && row.secrets ? row.secrets(cert) : [],
        requests: cert && row.requests ? row.requests(cert) : [],
      });
      try {
        await env.reconcile(requestManagerReconciler(env.ctx));
        assert.deepEqual(env.writes(), row.writes);
        matches(env.events(), row.events ?? []);
        row.check?.(env);
      } finally {
        await env.stop();
      }
    });
  }
});
