/**
 * The issuing controller's reconcile, one table row per case of cert-manager's issuing_controller_test.go,
 * on the in-memory client: the Certificate (Issuing=True, the next key named in its status), the next-key
 * Secret and the CertificateRequests in; the Secret written, the status (never Ready) and the Events out.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type {
  Certificate,
  CertificateRequest,
  CertificateSpec,
  CertificateStatus,
} from '../../../api/types.ts';
import { parseCertificate, parsePrivateKey, publicKeysEqual } from '../../../pki/index.ts';
import {
  certificate,
  certificateRequest,
  condition,
  FakeEnvironment,
  formatTime,
  HOUR,
  ISSUED_AT,
  issuedStatus,
  keyPair,
  nextKeySecret,
  NOW,
  requestCondition,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';
import { STRIPPED_BYTES_IDLE_MS, strippedBytes } from '../../stripped-bytes.ts';
import { issuingReconciler } from './issuing.ts';

// Made before the table, which uses them (ECDSA: a few milliseconds).
const next = await keyPair();
const other = await keyPair();
const expired = await keyPair(undefined, new Date(ISSUED_AT.getTime() - 4 * HOUR), next.key);

const STATUS = 'update certificates.cert-manager.io/status web';
const FAILED_MESSAGE = 'The certificate request has failed to complete and will be retried: the CA said no';

interface Row {
  name: string;
  certificate?: () => Certificate;
  secrets?: (cert: Certificate) => Secret[];
  requests?: (cert: Certificate) => CertificateRequest[];
  writes: string[];
  /** Checks of the status written. */
  status?: (status: CertificateStatus, before: Certificate) => void;
  events?: (string | RegExp)[];
  check?: (env: FakeEnvironment) => void;
}

/** Issuing since ISSUED_AT, the next key in web-next. */
const issuing = (
  status: CertificateStatus = {},
  spec: Partial<CertificateSpec> = {},
  annotations?: Record<string, string>,
) => {
  const cert = certificate(spec, {
    nextPrivateKeySecretName: 'web-next',
    ...status,
    conditions: [...(status.conditions ?? []), condition('Issuing', 'True', 'DoesNotExist')],
  });
  if (annotations) cert.metadata.annotations = annotations;
  return cert;
};
const withKey = (c: Certificate) => [nextKeySecret(c, 'web-next', next.key)];
const request =
  (status: CertificateRequest['status'], pair = next) =>
  (c: Certificate) => [certificateRequest(c, 1, pair.csrPem, status, 'web-next')];
const failedNow = request({
  failureTime: formatTime(NOW),
  conditions: [requestCondition('Ready', 'False', 'Failed', 'the CA said no')],
});
const issuedRequest = request(issuedStatus(next));

/** Issuing=False with `reason`, one more attempt, the failure time now; never Ready. */
const failure =
  (reason: string, message: string, attempts = 1) =>
  (status: CertificateStatus) => {
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [['Issuing', 'False', reason, message]],
    );
    assert.equal(status.failedIssuanceAttempts, attempts);
    assert.equal(status.lastFailureTime, formatTime(NOW));
  };

/** Issuance complete: the revision on, Issuing gone, the failure fields and the next key's name cleared. */
const success = (status: CertificateStatus, before: Certificate) => {
  assert.equal(status.revision, 1);
  assert.equal(
    status.conditions?.find((c) => c.type === 'Issuing'),
    undefined,
  );
  assert.deepEqual(
    status.conditions ?? [],
    before.status?.conditions?.filter((c) => c.type !== 'Issuing') ?? [],
    "Ready untouched: it is the readiness controller's",
  );
  assert.equal(status.nextPrivateKeySecretName, undefined);
  assert.equal(status.failedIssuanceAttempts, undefined);
  assert.equal(status.lastFailureTime, undefined);
  assert.equal(status.notBefore, formatTime(ISSUED_AT));
  assert.equal(status.notAfter, formatTime(new Date(ISSUED_AT.getTime() + 3 * HOUR)));
  assert.equal(status.renewalTime, formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR)));
};
const ISSUED_EVENT = 'Normal Issuing: The certificate has been successfully issued';

/** The Secret written holds the next key and the signed certificate and CA. */
const secretHoldsIssued = (env: FakeEnvironment) => {
  const written = env
    .written<Secret>('update', 'secrets')
    .concat(env.written<Secret>('create', 'secrets'))
    .at(-1)!;
  const key = parsePrivateKey(Buffer.from(written.data?.['tls.key'] ?? '', 'base64'));
  assert.ok(publicKeysEqual(key, next.key), 'the next key');
  assert.equal(Buffer.from(written.data?.['tls.crt'] ?? '', 'base64').toString(), next.certPem);
  assert.equal(Buffer.from(written.data?.['ca.crt'] ?? '', 'base64').toString(), next.certPem);
  assert.equal(written.metadata?.annotations?.['cert-manager.io/certificate-name'], 'web');
};

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist', writes: [] },
  {
    name: 'does nothing when the Certificate is not issuing (and has no Secret to repair)',
    certificate: () => certificate(),
    requests: issuedRequest,
    writes: [],
  },
  {
    name: 'does nothing when Issuing is False',
    certificate: () => certificate({}, { conditions: [condition('Issuing', 'False', 'Failed')] }),
    secrets: withKey,
    requests: issuedRequest,
    writes: [],
  },
  {
    name: 'does nothing without status.nextPrivateKeySecretName',
    certificate: () => certificate({}, { conditions: [condition('Issuing', 'True', 'DoesNotExist')] }),
    secrets: withKey,
    requests: issuedRequest,
    writes: [],
  },
  {
    name: 'does nothing while there is no request',
    certificate: () => issuing(),
    secrets: withKey,
    writes: [],
  },
  {
    name: 'does nothing while there are two requests for the revision',
    certificate: () => issuing(),
    secrets: withKey,
    requests: (c) => [
      ...issuedRequest(c),
      { ...issuedRequest(c)[0], metadata: { ...issuedRequest(c)[0].metadata, name: 'web-1-copy' } },
    ],
    writes: [],
  },
  {
    name: 'does nothing while the request is pending',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({ conditions: [requestCondition('Ready', 'False', 'Pending', 'waiting')] }),
    writes: [],
  },
  {
    name: 'does nothing when the failed request does not match the spec (the request manager replaces it)',
    certificate: () => issuing({}, { duration: '2h' }),
    secrets: withKey,
    requests: (c) => failedNow({ ...c, spec: { ...c.spec, duration: '3h' } }),
    writes: [],
  },
  {
    name: 'does nothing when the request failed during an earlier issuance',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({
      failureTime: formatTime(new Date(ISSUED_AT.getTime() - HOUR)),
      conditions: [requestCondition('Ready', 'False', 'Failed', 'the CA said no')],
    }),
    writes: [],
  },
  {
    name: 'fails the issuance on a failed request: Issuing=False, 1 attempt, failure time, Warning',
    certificate: () => issuing(),
    secrets: withKey,
    requests: failedNow,
    writes: [STATUS],
    status: failure('Failed', FAILED_MESSAGE),
    events: [`Warning Failed: ${FAILED_MESSAGE}`],
  },
  {
    name: 'counts the fifth failed attempt',
    certificate: () => issuing({ failedIssuanceAttempts: 4, lastFailureTime: formatTime(ISSUED_AT) }),
    secrets: withKey,
    requests: failedNow,
    writes: [STATUS],
    status: failure('Failed', FAILED_MESSAGE, 5),
    events: [`Warning Failed: ${FAILED_MESSAGE}`],
  },
  {
    name: 'does nothing on a failed request when the next key does not exist',
    certificate: () => issuing(),
    requests: failedNow,
    writes: [],
  },
  {
    name: 'does nothing on an issued request when the next key cannot be parsed',
    certificate: () => issuing(),
    secrets: (c) => [{ ...nextKeySecret(c, 'web-next', undefined), data: { 'tls.key': 'Z2FyYmFnZQ==' } }],
    requests: issuedRequest,
    writes: [],
  },
  {
    name: 'does nothing on an issued request whose CSR is not for the next key',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request(issuedStatus(other), other),
    writes: [],
  },
  {
    name: 'does nothing on a denied request whose CSR is not for the next key',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({ conditions: [requestCondition('Denied', 'True', 'Denied', 'no')] }, other),
    writes: [],
  },
  {
    name: 'stores the certificate, CA and next key in a new Secret, moves the revision on, never writes Ready',
    certificate: () => issuing(),
    secrets: withKey,
    requests: issuedRequest,
    writes: ['create secrets web-tls', STATUS],
    status: success,
    events: [ISSUED_EVENT],
    check: secretHoldsIssued,
  },
  {
    name: 'stores them in the existing Secret, leaving the Ready condition as it was',
    certificate: () => issuing({ conditions: [condition('Ready', 'False', 'DoesNotExist', 'no Secret')] }),
    secrets: (c) => [...withKey(c), tlsSecret(c, undefined)],
    requests: issuedRequest,
    writes: ['update secrets web-tls', STATUS],
    status: success,
    events: [ISSUED_EVENT],
    check: secretHoldsIssued,
  },
  {
    name: 'clears lastFailureTime and failedIssuanceAttempts of earlier failures on success',
    certificate: () => issuing({ failedIssuanceAttempts: 2, lastFailureTime: formatTime(ISSUED_AT) }),
    secrets: withKey,
    requests: issuedRequest,
    writes: ['create secrets web-tls', STATUS],
    status: success,
    events: [ISSUED_EVENT],
  },
  {
    name: 'fails the issuance on a denied request without a Ready condition',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({ conditions: [requestCondition('Denied', 'True', 'Denied', 'the CA said no')] }),
    writes: [STATUS],
    status: failure('Denied', FAILED_MESSAGE),
    events: [`Warning Denied: ${FAILED_MESSAGE}`],
  },
  {
    name: 'fails the issuance on an issued request that is also denied (Denied wins)',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({
      ...issuedStatus(next),
      conditions: [
        ...issuedStatus(next)!.conditions!,
        requestCondition('Denied', 'True', 'Denied', 'the CA said no'),
      ],
    }),
    writes: [STATUS],
    status: failure('Denied', FAILED_MESSAGE),
    events: [`Warning Denied: ${FAILED_MESSAGE}`],
  },
  {
    name: 'fails the issuance on a request marked invalid',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({
      conditions: [
        requestCondition('Ready', 'False', 'Pending', 'waiting'),
        requestCondition('InvalidRequest', 'True', 'InvalidRequest', 'the CA said no'),
      ],
    }),
    writes: [STATUS],
    status: failure('InvalidRequest', FAILED_MESSAGE),
    events: [`Warning InvalidRequest: ${FAILED_MESSAGE}`],
  },
  {
    name: 'fails the issuance when the certificate is for another public key than the CSR',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request({ ...issuedStatus(other) }),
    writes: [STATUS],
    status: failure(
      'InvalidCertificate',
      'The certificate request has failed to complete and will be retried: Issuer returned a certificate with a public key that does not match the CSR. This usually indicates a misconfigured issuer.',
    ),
    events: [/^Warning InvalidCertificate: .*does not match the CSR/],
  },
  {
    name: 'fails the issuance when the certificate has already expired',
    certificate: () => issuing(),
    secrets: withKey,
    requests: request(issuedStatus(expired)),
    writes: [STATUS],
    status: failure(
      'InvalidCertificate',
      `The certificate request has failed to complete and will be retried: Issuer returned an already expired certificate (notAfter: ${formatTime(new Date(ISSUED_AT.getTime() - HOUR))}). This usually indicates an expired CA certificate in the issuer.`,
    ),
    events: [/^Warning InvalidCertificate: .*already expired certificate/],
  },
  {
    name: 'with the temporary-certificate annotation and a pending request, writes a temporary certificate',
    certificate: () => issuing({}, {}, { 'cert-manager.io/issue-temporary-certificate': 'true' }),
    secrets: withKey,
    requests: request({ conditions: [requestCondition('Ready', 'False', 'Pending', 'waiting')] }),
    writes: ['create secrets web-tls'],
    events: ['Normal Issuing: Issued temporary certificate'],
    check: (env) => {
      const written = env.written<Secret>('create', 'secrets')[0];
      const cert = parseCertificate(Buffer.from(written.data?.['tls.crt'] ?? '', 'base64').toString());
      assert.ok(publicKeysEqual(cert.publicKey, next.key), 'for the next key');
      assert.equal(cert.issuer.commonName, 'cert-manager.local');
    },
  },
  {
    name: 'with the temporary-certificate annotation and a failed request, fails the issuance',
    certificate: () => issuing({}, {}, { 'cert-manager.io/issue-temporary-certificate': 'true' }),
    secrets: withKey,
    requests: failedNow,
    writes: [STATUS],
    status: failure('Failed', FAILED_MESSAGE),
    events: [`Warning Failed: ${FAILED_MESSAGE}`],
  },
];

const matches = (actual: string[], expected: (string | RegExp)[]) => {
  assert.equal(actual.length, expected.length, `got ${JSON.stringify(actual)}`);
  for (const [i, e] of expected.entries()) {
    if (typeof e === 'string') assert.equal(actual[i], e);
    else assert.match(actual[i], e);
  }
};

describe('certificates-issuing reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const cert = row.certificate?.();
      const env = await FakeEnvironment.start({
        certificates: cert ? [cert] : [],
        secrets: cert && row.secrets ? row.secrets(cert) : [],
        requests: cert && row.requests ? row.requests(cert) : [],
      });
      try {
        await env.reconcile(issuingReconciler(env.ctx));
        // Never the next key: deleting it is the key manager's, once Issuing is gone.
        assert.deepEqual(env.writes(), row.writes);
        if (row.status) row.status(env.lastStatus()!, cert!);
        matches(env.events(), row.events ?? []);
        row.check?.(env);
      } finally {
        await env.stop();
      }
    });
  }
});

describe('certificates-issuing reads an issued request’s bytes', () => {
  const requestGets = (env: FakeEnvironment) =>
    env.client.actions.filter(
      (a) => a.verb === 'get' && a.resource === 'certificaterequests.cert-manager.io',
    );

  for (const held of [true, false]) {
    it(
      held
        ? 'from what the cache transform took out, without a GET, while they are held'
        : 'with a GET once the held bytes were let go',
      async () => {
        const cert = issuing();
        const env = await FakeEnvironment.start({
          certificates: [cert],
          secrets: withKey(cert),
          requests: issuedRequest(cert),
        });
        try {
          // The informer stripped the seeded request as it cached it, and held its bytes.
          if (!held) strippedBytes.releaseIfIdle(Date.now() + STRIPPED_BYTES_IDLE_MS);
          await env.reconcile(issuingReconciler(env.ctx));
          assert.deepEqual(env.writes(), ['create secrets web-tls', STATUS]);
          secretHoldsIssued(env);
          success(env.lastStatus()!, cert);
          assert.equal(requestGets(env).length, held ? 0 : 1);
        } finally {
          await env.stop();
        }
      },
    );
  }
});

describe('certificates-issuing on a copy its own status write replaced', () => {
  it('does nothing until the cache shows the write: no second issuance, no GET, no refused write', async () => {
    const cert = issuing();
    const env = await FakeEnvironment.start({
      certificates: [cert],
      secrets: withKey(cert),
      requests: issuedRequest(cert),
    });
    try {
      const store = env.ctx.certificates.getStore();
      const replaced = store.list()[0];
      await env.reconcile(issuingReconciler(env.ctx));
      assert.deepEqual(env.writes(), ['create secrets web-tls', STATUS]);
      const actions = env.client.actions.length;
      // Writing the Secret woke the controller again, and that reconcile runs before the watch brings the
      // Certificate its status write made: the cache still holds the copy the write replaced (put back here,
      // in the same synchronous step as the reconcile's read of it).
      store.update(replaced);
      assert.equal(await env.reconcile(issuingReconciler(env.ctx)), undefined, 'no requeue');
      assert.deepEqual(env.client.actions.slice(actions), [], 'no request at all');
      assert.deepEqual(env.events(), [ISSUED_EVENT], 'issued once');
    } finally {
      await env.stop();
    }
  });
});
