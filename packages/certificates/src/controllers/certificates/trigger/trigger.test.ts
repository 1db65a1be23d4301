/**
 * The trigger's reconcile, one table row per case of cert-manager's trigger_controller_test.go (re-issue or
 * not, failure backoff, Certificates sharing a Secret, renewal windows) and certkit's own (an invalid spec is
 * not issued), on the in-memory client: the seeded objects in; Issuing=True (the trigger's only write), the
 * Events and the requeue out.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Result } from '@certkit/runtime';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateRequest } from '../../../api/types.ts';
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
  type KeyPair,
  NOW,
  requestCondition,
  tlsSecret,
} from '@certkit/testenv/controllers/fake-environment';
import { DUPLICATE_SECRET_RECHECK_MS, triggerReconciler } from './trigger.ts';

const MINUTE = 60 * 1000;

let pair: KeyPair;

before(async () => {
  pair = await keyPair();
});

interface Row {
  name: string;
  certificates?: () => Certificate[];
  secret?: (cert: Certificate) => Secret;
  requests?: (cert: Certificate) => CertificateRequest[];
  now?: Date;
  /** Issuing=True's reason and message, or undefined when the trigger must write nothing. */
  issuing?: { reason: string; message: string };
  events?: string[];
  result?: Result;
}

const web = (status?: Certificate['status']) => certificate({}, status);
const issued = () => web({ revision: 1, renewalTime: formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR)) });
const upToDate = {
  secret: (c: Certificate) => tlsSecret(c, pair),
  requests: (c: Certificate) => [certificateRequest(c, 1, pair.csrPem, issuedStatus(pair))],
};
const DOES_NOT_EXIST = { reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' };
const failed = (attempts: number | undefined, ago: number) =>
  web({
    lastFailureTime: formatTime(new Date(NOW.getTime() - ago)),
    ...(attempts === undefined ? {} : { failedIssuanceAttempts: attempts }),
    conditions: [condition('Issuing', 'False', 'Failed', 'the CA said no', new Date(NOW.getTime() - ago))],
  });
/** The failed request of the next revision, made for the spec as it is. */
const failedRequest = (cert: Certificate) => [
  certificateRequest(cert, 1, pair.csrPem, {
    failureTime: formatTime(ISSUED_AT),
    conditions: [requestCondition('Ready', 'False', 'Failed', 'the CA said no')],
  }),
];

const rows: Row[] = [
  { name: 'does nothing for a Certificate that does not exist' },
  {
    name: 'does nothing while an issuance is under way (Issuing=True)',
    certificates: () => [web({ conditions: [condition('Issuing', 'True', 'DoesNotExist')] })],
  },
  {
    name: 'does not issue a spec the webhook would refuse, and leaves reporting it to readiness',
    certificates: () => [certificate({ dnsNames: [] })],
  },
  {
    name: 'sets Issuing=True when the Secret does not exist, with a Normal event',
    certificates: () => [web()],
    issuing: DOES_NOT_EXIST,
    events: ['Normal Issuing: Issuing certificate as Secret does not exist'],
  },
  {
    name: 'does nothing for an up-to-date certificate, and wakes at status.renewalTime',
    certificates: () => [issued()],
    ...upToDate,
    result: { requeueAfter: ISSUED_AT.getTime() + 2 * HOUR - NOW.getTime() },
  },
  {
    name: 'sets Issuing=True Renewing once the renewal time has passed',
    certificates: () => [issued()],
    ...upToDate,
    now: new Date(ISSUED_AT.getTime() + 2 * HOUR + MINUTE),
    issuing: {
      reason: 'Renewing',
      message: `Renewing certificate as renewal was scheduled at ${formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR))}`,
    },
    events: [
      `Normal Issuing: Renewing certificate as renewal was scheduled at ${formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR))}`,
    ],
  },
  {
    name: 'sets Issuing=True when the Secret was issued by another issuer',
    certificates: () => [issued()],
    secret: (c) => tlsSecret(c, pair, { 'cert-manager.io/issuer-name': 'old-ca' }),
    requests: upToDate.requests,
    issuing: {
      reason: 'IncorrectIssuer',
      message: 'Issuing certificate as Secret was previously issued by "Issuer.cert-manager.io/old-ca"',
    },
    events: [
      'Normal Issuing: Issuing certificate as Secret was previously issued by "Issuer.cert-manager.io/old-ca"',
    ],
  },
  {
    name: 'backs off for 1 minute after 1 failed issuance 59 minutes ago',
    certificates: () => [failed(1, 59 * MINUTE)],
    requests: failedRequest,
    result: { requeueAfter: MINUTE },
  },
  {
    name: 'backs off for 1 hour after a failure just now, attempts unset',
    certificates: () => [failed(undefined, 0)],
    requests: failedRequest,
    result: { requeueAfter: HOUR },
  },
  {
    name: 'backs off for 2 hours after 2 failed issuances, the last just now',
    certificates: () => [failed(2, 0)],
    requests: failedRequest,
    result: { requeueAfter: 2 * HOUR },
  },
  {
    name: 'backs off at most 32 hours (100 failed issuances)',
    certificates: () => [failed(100, 0)],
    requests: failedRequest,
    result: { requeueAfter: 32 * HOUR },
  },
  {
    name: 'sets Issuing=True after 1 failed issuance 61 minutes ago',
    certificates: () => [failed(1, 61 * MINUTE)],
    requests: failedRequest,
    issuing: DOES_NOT_EXIST,
    events: ['Normal Issuing: Issuing certificate as Secret does not exist'],
  },
  {
    name: 'does not back off when the spec no longer matches the failed request',
    certificates: () => [{ ...failed(1, 0), spec: { ...failed(1, 0).spec, duration: '2h' } }],
    requests: (c) => failedRequest({ ...c, spec: { ...c.spec, duration: '3h' } }),
    issuing: DOES_NOT_EXIST,
    events: ['Normal Issuing: Issuing certificate as Secret does not exist'],
  },
  {
    name: 'does not issue when another, older Certificate names the same missing Secret',
    certificates: () => [
      { ...web(), metadata: { ...web().metadata, creationTimestamp: formatTime(NOW) } },
      { ...certificate({ secretName: 'web-tls' }, undefined, 'older') },
    ],
    result: { requeueAfter: DUPLICATE_SECRET_RECHECK_MS },
  },
  {
    name: 'issues when it is the oldest of the Certificates naming the same missing Secret',
    certificates: () => [
      web(),
      {
        ...certificate({ secretName: 'web-tls' }, undefined, 'newer'),
        metadata: { ...certificate({}, undefined, 'newer').metadata, creationTimestamp: formatTime(NOW) },
      },
    ],
    issuing: DOES_NOT_EXIST,
    events: ['Normal Issuing: Issuing certificate as Secret does not exist'],
  },
  {
    name: 'issues when the existing Secret names it as its Certificate, though another is older',
    certificates: () => [
      { ...web(), metadata: { ...web().metadata, creationTimestamp: formatTime(NOW) } },
      certificate({ secretName: 'web-tls' }, undefined, 'older'),
    ],
    secret: (c) => tlsSecret(c, undefined),
    issuing: {
      reason: 'MissingData',
      message: 'Issuing certificate as Secret does not contain a private key',
    },
    events: ['Normal Issuing: Issuing certificate as Secret does not contain a private key'],
  },
  {
    name: 'does not issue when the existing Secret names the other Certificate, though this one is older',
    certificates: () => [
      web(),
      {
        ...certificate({ secretName: 'web-tls' }, undefined, 'newer'),
        metadata: { ...certificate({}, undefined, 'newer').metadata, creationTimestamp: formatTime(NOW) },
      },
    ],
    secret: (c) => tlsSecret(c, undefined, { 'cert-manager.io/certificate-name': 'newer' }),
    result: { requeueAfter: DUPLICATE_SECRET_RECHECK_MS },
  },
  {
    name: 'renews at the renewBefore time when no renewal window can be found, with a Warning',
    certificates: () => [
      certificate(
        { renewal: { policy: 'RenewBefore', windows: [{ cron: '0 0 30 2 *', windowDuration: '1h' }] } },
        { revision: 1, renewalTime: formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR)) },
      ),
    ],
    ...upToDate,
    now: new Date(ISSUED_AT.getTime() + 2 * HOUR + MINUTE),
    issuing: {
      reason: 'Renewing',
      message: `Renewing certificate without satisfying renewal windows at: ${formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR))}`,
    },
    events: [
      'Warning WindowError: Renewing certificate without satisfying renewal windows due to cannot find a time with the given windows between 2026-03-01 00:00:00 +0000 UTC and 2026-03-01 03:00:00 +0000 UTC for: 2026-03-01 02:00:00 +0000 UTC',
      `Normal Issuing: Renewing certificate without satisfying renewal windows at: ${formatTime(new Date(ISSUED_AT.getTime() + 2 * HOUR))}`,
    ],
  },
];

describe('certificates-trigger reconcile', () => {
  for (const row of rows) {
    it(row.name, async () => {
      const certs = row.certificates?.() ?? [];
      const cert = certs[0];
      const now = row.now ?? NOW;
      const env = await FakeEnvironment.start(
        {
          certificates: certs,
          secrets: cert && row.secret ? [row.secret(cert)] : [],
          requests: cert && row.requests ? row.requests(cert) : [],
        },
        { now },
      );
      try {
        const result = await env.reconcile(triggerReconciler(env.ctx));
        if (!row.issuing) {
          assert.deepEqual(env.writes(), []);
        } else {
          assert.deepEqual(env.writes(), ['update certificates.cert-manager.io/status web']);
          const status = env.lastStatus()!;
          // Issuing=True, and nothing else: the trigger never writes Ready.
          const { conditions, ...rest } = status;
          assert.deepEqual(
            rest,
            Object.fromEntries(Object.entries(cert.status ?? {}).filter(([k]) => k !== 'conditions')),
          );
          assert.deepEqual(
            conditions?.map((c) => c.type),
            (cert.status?.conditions ?? [])
              .map((c) => c.type)
              .concat(cert.status?.conditions?.some((c) => c.type === 'Issuing') ? [] : ['Issuing']),
          );
          const issuing = conditions?.find((c) => c.type === 'Issuing');
          assert.deepEqual(issuing, {
            type: 'Issuing',
            status: 'True',
            ...row.issuing,
            observedGeneration: 1,
            lastTransitionTime: formatTime(now),
          });
        }
        assert.deepEqual(env.events(), row.events ?? []);
        assert.deepEqual(result, row.result);
      } finally {
        await env.stop();
      }
    });
  }
});
