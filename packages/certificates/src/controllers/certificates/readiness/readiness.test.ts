/**
 * The readiness controller's reconcile, one table row per case of cert-manager's readiness_controller_test.go
 * (and certkit's own: invalid specs, renewal windows, a completing issuance), on the in-memory client: the
 * seeded Certificate, Secret and CertificateRequests in, the status written and the Events out.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateRequest, CertificateStatus } from '../../../api/types.ts';
import {
  BASE_SPEC,
  certificate,
  certificateRequest,
  condition,
  FakeEnvironment,
  formatTime,
  HOUR,
  ISSUED_AT,
  issuedStatus,
  keyPair,
  type KeyPair,
  NOW,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';
import { READY_MESSAGE, readinessReconciler } from './readiness.ts';

let pair: KeyPair;
let other: KeyPair;

before(async () => {
  pair = await keyPair();
  other = await keyPair();
});

interface Row {
  name: string;
  certificate?: () => Certificate;
  secret?: (cert: Certificate) => Secret | undefined;
  requests?: (cert: Certificate) => CertificateRequest[];
  now?: Date;
  /** The Ready condition written (without lastTransitionTime), or undefined for no status write at all. */
  ready?: { status: 'True' | 'False'; reason: string; message: string | RegExp };
  /** Other status fields to check in the write. */
  status?: (status: CertificateStatus) => void;
  /** The Events recorded, each as `Type Reason: message` or a pattern for it. */
  events?: (string | RegExp)[];
}

const issued = (): Certificate => certificate({}, { revision: 1 });
const currentRequest = (cert: Certificate) => [certificateRequest(cert, 1, pair.csrPem, issuedStatus(pair))];
const validity = (status: CertificateStatus) => {
  assert.equal(status.notBefore, formatTime(ISSUED_AT));
  assert.equal(status.notAfter, formatTime(new Date(ISSUED_AT.getTime() + 3 * HOUR)));
  // Two thirds of the three hours (cert-manager's default renewBefore is a third of the duration).
  assert.equal(status.renewalTime, formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR)));
};
const noValidity = (status: CertificateStatus) => {
  assert.equal(status.notBefore, undefined);
  assert.equal(status.notAfter, undefined);
  assert.equal(status.renewalTime, undefined);
};

/** What validateCertificate says of a Certificate naming nothing to certify. */
const NO_NAMES =
  'Certificate spec is invalid: spec: Invalid value: "": at least one of commonName (from the commonName field or from a literalSubject), dnsNames, emailSANs, ipAddresses, otherNames, or uriSANs must be set';

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist', certificate: undefined },
  {
    name: 'Ready=True for a valid certificate in the Secret, with the validity dates',
    certificate: issued,
    secret: (c) => tlsSecret(c, pair),
    requests: currentRequest,
    ready: { status: 'True', reason: 'Ready', message: READY_MESSAGE },
    status: validity,
  },
  {
    name: 'Ready=False DoesNotExist when the Secret is missing (a new Certificate)',
    certificate: () => certificate(),
    ready: {
      status: 'False',
      reason: 'DoesNotExist',
      message: 'Issuing certificate as Secret does not exist',
    },
    status: noValidity,
  },
  {
    name: 'Ready=False MissingData when the Secret has no data',
    certificate: issued,
    secret: (c) => {
      const s = tlsSecret(c, undefined);
      delete s.data;
      return s;
    },
    ready: {
      status: 'False',
      reason: 'MissingData',
      message: 'Issuing certificate as Secret does not contain any data',
    },
    status: noValidity,
  },
  {
    name: 'Ready=False MissingData when the Secret has no private key',
    certificate: issued,
    secret: (c) => {
      const s = tlsSecret(c, pair);
      delete s.data!['tls.key'];
      return s;
    },
    ready: {
      status: 'False',
      reason: 'MissingData',
      message: 'Issuing certificate as Secret does not contain a private key',
    },
  },
  {
    name: 'Ready=False MissingData when the Secret has no certificate',
    certificate: issued,
    secret: (c) => {
      const s = tlsSecret(c, pair);
      delete s.data!['tls.crt'];
      return s;
    },
    ready: {
      status: 'False',
      reason: 'MissingData',
      message: 'Issuing certificate as Secret does not contain a certificate',
    },
  },
  {
    name: 'Ready=False InvalidKeyPair when the Secret holds a corrupt key',
    certificate: issued,
    secret: (c) => ({
      ...tlsSecret(c, pair),
      data: { ...tlsSecret(c, pair).data, 'tls.key': 'Z2FyYmFnZQ==' },
    }),
    ready: {
      status: 'False',
      reason: 'InvalidKeyPair',
      message: /^Issuing certificate as Secret contains invalid private key data/,
    },
  },
  {
    name: 'Ready=False InvalidCertificate when the Secret holds a corrupt certificate',
    certificate: issued,
    secret: (c) => ({
      ...tlsSecret(c, pair),
      data: { ...tlsSecret(c, pair).data, 'tls.crt': 'Z2FyYmFnZQ==' },
    }),
    ready: {
      status: 'False',
      reason: 'InvalidCertificate',
      message: /^Issuing certificate as Secret contains an invalid certificate/,
    },
    status: noValidity,
  },
  {
    name: 'Ready=False InvalidKeyPair when key and certificate do not match',
    certificate: issued,
    secret: (c) => ({
      ...tlsSecret(c, pair),
      data: { ...tlsSecret(c, pair).data, 'tls.key': tlsSecret(c, other).data!['tls.key'] },
    }),
    requests: currentRequest,
    ready: {
      status: 'False',
      reason: 'InvalidKeyPair',
      message: 'Issuing certificate as Secret contains a private key that does not match the certificate',
    },
  },
  {
    name: 'Ready=False RequestChanged when the current request no longer matches the spec',
    certificate: () => certificate({ duration: '2h' }, { revision: 1 }),
    secret: (c) => tlsSecret(c, pair),
    requests: (c) => [certificateRequest({ ...c, spec: BASE_SPEC }, 1, pair.csrPem, issuedStatus(pair))],
    ready: {
      status: 'False',
      reason: 'RequestChanged',
      message: /^Fields on existing CertificateRequest resource not up to date: \[spec\.duration\]/,
    },
  },
  {
    name: 'Ready=False Expired once the certificate has expired',
    certificate: issued,
    secret: (c) => tlsSecret(c, pair),
    requests: currentRequest,
    now: new Date(ISSUED_AT.getTime() + 4 * HOUR),
    ready: {
      status: 'False',
      reason: 'Expired',
      message: 'Certificate expired on Sun, 01 Mar 2026 03:00:00 UTC',
    },
    status: validity,
  },
  {
    name: 'Ready=False InvalidSpec with one Warning event for a spec the webhook would refuse',
    certificate: () => certificate({ dnsNames: [] }),
    ready: { status: 'False', reason: 'InvalidSpec', message: /^Certificate spec is invalid: / },
    events: [`Warning InvalidSpec: ${NO_NAMES}`],
  },
  {
    name: 'no second InvalidSpec event when the Certificate already says so',
    certificate: () => {
      const c = certificate({ dnsNames: [] });
      return { ...c, status: { conditions: [condition('Ready', 'False', 'InvalidSpec', NO_NAMES)] } };
    },
    ready: undefined,
    events: [],
  },
  {
    name: 'Ready=False WindowError with a Warning when no renewal window can be found',
    certificate: () =>
      certificate(
        { renewal: { policy: 'RenewBefore', windows: [{ cron: '0 0 30 2 *', windowDuration: '1h' }] } },
        { revision: 1 },
      ),
    secret: (c) => tlsSecret(c, pair),
    requests: (c) => [certificateRequest(c, 1, pair.csrPem, issuedStatus(pair))],
    ready: { status: 'False', reason: 'WindowError', message: /^Could not calculate renewal time: / },
    events: [/^Warning WindowError: Could not calculate renewal time: /],
  },
];

describe('certificates-readiness reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const cert = row.certificate?.();
      const env = await FakeEnvironment.start(
        {
          certificates: cert ? [cert] : [],
          secrets: cert && row.secret ? [row.secret(cert)].filter((s) => s !== undefined) : [],
          requests: cert && row.requests ? row.requests(cert) : [],
        },
        { now: row.now ?? NOW },
      );
      try {
        await env.reconcile(readinessReconciler(env.ctx));
        if (!row.ready) {
          assert.deepEqual(env.writes(), []);
        } else {
          assert.deepEqual(env.writes(), ['update certificates.cert-manager.io/status web']);
          const status = env.lastStatus()!;
          const ready = status.conditions?.find((c) => c.type === 'Ready');
          assert.equal(ready?.status, row.ready.status);
          assert.equal(ready?.reason, row.ready.reason);
          if (typeof row.ready.message === 'string') assert.equal(ready?.message, row.ready.message);
          else assert.match(ready?.message ?? '', row.ready.message);
          assert.equal(ready?.observedGeneration, 1);
          row.status?.(status);
        }
        const events = env.events();
        assert.equal(events.length, (row.events ?? []).length, `events: ${events.join('; ')}`);
        for (const [i, expected] of (row.events ?? []).entries()) {
          if (typeof expected === 'string') assert.equal(events[i], expected);
          else assert.match(events[i], expected);
        }
      } finally {
        await env.stop();
      }
    });
  }

  it('keeps the other conditions, and moves lastTransitionTime only when Ready flips', async () => {
    const issuing = condition('Issuing', 'True', 'Renewing', 'renewing');
    const wasFalse = condition(
      'Ready',
      'False',
      'DoesNotExist',
      'Issuing certificate as Secret does not exist',
    );
    const cert = certificate({}, { revision: 1, conditions: [wasFalse, issuing] });
    const env = await FakeEnvironment.start({
      certificates: [cert],
      secrets: [tlsSecret(cert, pair)],
      requests: currentRequest(cert),
    });
    try {
      await env.reconcile(readinessReconciler(env.ctx));
      const conditions = env.lastStatus()?.conditions ?? [];
      assert.deepEqual(
        conditions.find((c) => c.type === 'Issuing'),
        issuing,
      );
      const ready = conditions.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'True');
      assert.equal(ready?.lastTransitionTime, formatTime(NOW), 'flipped: moved to now');
    } finally {
      await env.stop();
    }
  });

  it('writes nothing when the status is already what it computes', async () => {
    const cert = issued();
    const first = await FakeEnvironment.start({
      certificates: [cert],
      secrets: [tlsSecret(cert, pair)],
      requests: currentRequest(cert),
    });
    let status: CertificateStatus;
    try {
      await first.reconcile(readinessReconciler(first.ctx));
      status = first.lastStatus()!;
    } finally {
      await first.stop();
    }
    const settled = { ...cert, status };
    const env = await FakeEnvironment.start({
      certificates: [settled],
      secrets: [tlsSecret(settled, pair)],
      requests: currentRequest(settled),
    });
    try {
      const result = await env.reconcile(readinessReconciler(env.ctx));
      assert.deepEqual(env.writes(), []);
      // It still looks again when the certificate expires, for Ready to turn False then.
      assert.equal(result?.requeueAfter, ISSUED_AT.getTime() + 3 * HOUR - NOW.getTime() + 1000);
    } finally {
      await env.stop();
    }
  });

  it('does nothing on a copy its own status write replaced, until the cache shows the write', async () => {
    const cert = issued();
    const env = await FakeEnvironment.start({
      certificates: [cert],
      secrets: [tlsSecret(cert, pair)],
      requests: currentRequest(cert),
    });
    try {
      const store = env.ctx.certificates.getStore();
      const replaced = store.list()[0];
      await env.reconcile(readinessReconciler(env.ctx));
      assert.deepEqual(env.writes(), ['update certificates.cert-manager.io/status web']);
      const actions = env.client.actions.length;
      // Woken again before the watch brings the version its write made: the cache still holds the replaced
      // copy (put back here, in the same synchronous step as the reconcile's read of it).
      store.update(replaced);
      assert.equal(await env.reconcile(readinessReconciler(env.ctx)), undefined, 'no requeue');
      assert.deepEqual(env.client.actions.slice(actions), [], 'no request at all');
    } finally {
      await env.stop();
    }
  });

  it('stands aside while issuing is completing (Secret already holds the next revision)', async () => {
    const next = await keyPair();
    const cert = certificate({}, { revision: 1, conditions: [condition('Issuing', 'True', 'Renewing')] });
    const env = await FakeEnvironment.start({
      certificates: [cert],
      secrets: [tlsSecret(cert, next)],
      requests: [...currentRequest(cert), certificateRequest(cert, 2, next.csrPem, issuedStatus(next))],
    });
    try {
      await env.reconcile(readinessReconciler(env.ctx));
      assert.deepEqual(env.writes(), []);
    } finally {
      await env.stop();
    }
  });
});
