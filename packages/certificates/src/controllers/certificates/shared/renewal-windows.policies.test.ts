/**
 * Renewal windows in the trigger and readiness checks: renewal becomes due at the window's opening, and
 * windows that cannot be honoured give WindowError (a renewal at the renewBefore time for the trigger,
 * Ready=False for readiness), as cert-manager's CurrentCertificateNearingExpiry and readiness controller.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Secret } from 'kubernetes-types/core/v1.d.ts';
import type { Certificate, CertificateRenewalWindow, CertificateStatus } from '../../../api/types.ts';
import {
  buildCertificateRequest,
  encodePrivateKey,
  generatePrivateKey,
  signCertificate,
} from '../../../pki/index.ts';
import type { PolicyInput } from './gather.ts';
import {
  CurrentCertificateNearingExpiry,
  RenewalWindowsUnsatisfiable,
  triggerPolicyChain,
  evaluate,
} from './policies.ts';
import { applyReadiness } from '../readiness/readiness.ts';

const HOUR = 60 * 60 * 1000;
const issuedAt = new Date('2026-03-01T00:00:00Z');
const b64 = (text: string) => Buffer.from(text).toString('base64');

// A 3h certificate: renewBefore's default time is 2h in, 02:00Z.
const NEVER: CertificateRenewalWindow[] = [{ cron: '0 0 30 2 *', windowDuration: '1h' }];
const AT_0230: CertificateRenewalWindow[] = [{ cron: '30 2 * * *', windowDuration: '10m', timezone: 'UTC' }];
const NO_TIME =
  'cannot find a time with the given windows between 2026-03-01 00:00:00 +0000 UTC and 2026-03-01 03:00:00 +0000 UTC for: 2026-03-01 02:00:00 +0000 UTC';

function certificate(
  windows: CertificateRenewalWindow[] | undefined,
  status: CertificateStatus = {},
): Certificate {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'web', namespace: 'apps', uid: 'uid-web', generation: 1 },
    spec: {
      secretName: 'web-tls',
      issuerRef: { name: 'ca' },
      dnsNames: ['web.example'],
      privateKey: { algorithm: 'ECDSA' },
      duration: '3h',
      ...(windows ? { renewal: { policy: 'RenewBefore', windows } } : {}),
    },
    status,
  };
}

describe('renewal windows in the policy checks', () => {
  let secret: Secret;
  before(async () => {
    const key = await generatePrivateKey({ algorithm: 'ECDSA' });
    const spec = certificate(undefined).spec;
    const csrPem = await buildCertificateRequest(spec, key);
    const { certPem } = await signCertificate({
      csrPem,
      duration: 3 * HOUR,
      isCA: false,
      issuer: { selfSignedKey: key },
      now: issuedAt,
    });
    secret = {
      metadata: { name: 'web-tls', namespace: 'apps', annotations: { 'cert-manager.io/issuer-name': 'ca' } },
      type: 'kubernetes.io/tls',
      data: { 'tls.key': b64(encodePrivateKey(key, 'PKCS8')), 'tls.crt': b64(certPem) },
    };
  });

  const input = (windows: CertificateRenewalWindow[] | undefined, at: string, status?: CertificateStatus) =>
    ({ certificate: certificate(windows, status), secret, now: new Date(at) }) satisfies PolicyInput;

  it('makes renewal due when the window opens, not at the renewBefore time', () => {
    assert.equal(
      CurrentCertificateNearingExpiry(input(undefined, '2026-03-01T02:00:00Z'))?.reason,
      'Renewing',
    );
    assert.equal(CurrentCertificateNearingExpiry(input(AT_0230, '2026-03-01T02:29:59Z')), undefined);
    assert.deepEqual(
      CurrentCertificateNearingExpiry(
        input(AT_0230, '2026-03-01T02:30:00Z', { renewalTime: '2026-03-01T02:30:00Z' }),
      ),
      {
        reason: 'Renewing',
        message: 'Renewing certificate as renewal was scheduled at 2026-03-01T02:30:00Z',
      },
    );
  });

  it('is WindowError once the renewBefore time passes when no window time exists', () => {
    assert.equal(CurrentCertificateNearingExpiry(input(NEVER, '2026-03-01T01:59:59Z')), undefined);
    assert.deepEqual(evaluate(triggerPolicyChain, input(NEVER, '2026-03-01T02:00:00Z')), {
      reason: 'WindowError',
      message: NO_TIME,
    });
  });

  it('RenewalWindowsUnsatisfiable: for the certificate in the Secret, whenever it is', () => {
    assert.deepEqual(RenewalWindowsUnsatisfiable(input(NEVER, '2026-03-01T00:10:00Z')), {
      reason: 'WindowError',
      message: `Could not calculate renewal time: ${NO_TIME}`,
    });
    assert.equal(RenewalWindowsUnsatisfiable(input(AT_0230, '2026-03-01T00:10:00Z')), undefined);
    assert.equal(
      RenewalWindowsUnsatisfiable({ ...input(NEVER, '2026-03-01T00:10:00Z'), secret: undefined }),
      undefined,
    );
  });

  it('applyReadiness: renewalTime in the window, or Ready=False WindowError with the renewBefore time', () => {
    const ready = (windows: CertificateRenewalWindow[], at: string) => {
      const status: CertificateStatus = {};
      applyReadiness(status, input(windows, at));
      const condition = status.conditions?.find((c) => c.type === 'Ready');
      return {
        renewalTime: status.renewalTime,
        ready: condition && [condition.status, condition.reason, condition.message],
      };
    };
    assert.deepEqual(ready(AT_0230, '2026-03-01T00:10:00Z'), {
      renewalTime: '2026-03-01T02:30:00Z',
      ready: ['True', 'Ready', 'Certificate is up to date and has not expired'],
    });
    assert.deepEqual(ready(NEVER, '2026-03-01T00:10:00Z'), {
      renewalTime: '2026-03-01T02:00:00Z',
      ready: ['False', 'WindowError', `Could not calculate renewal time: ${NO_TIME}`],
    });
    // WindowError before the chain's own answer, as upstream sets it last.
    assert.deepEqual(ready(NEVER, '2026-03-01T04:00:00Z').ready, [
      'False',
      'WindowError',
      `Could not calculate renewal time: ${NO_TIME}`,
    ]);
    assert.equal(ready(AT_0230, '2026-03-01T04:00:00Z').ready?.[1], 'Expired');
  });

  // Ready=False InvalidSpec is the readiness controller's own since the trigger stopped writing Ready
  // (docs/adr/0902-ready-written-by-readiness-alone.md); before, this expected no condition at all.
  it('an invalid spec is Ready=False InvalidSpec, not a window error; renewalTime still set', () => {
    const status: CertificateStatus = {};
    applyReadiness(status, input([{ cron: '0 25 * * *', windowDuration: '1h' }], '2026-03-01T00:10:00Z'));
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Ready', 'False', 'InvalidSpec']],
    );
    assert.match(
      status.conditions?.[0].message ?? '',
      /^Certificate spec is invalid: spec\.renewal\.windows\[0\]\.cron/,
    );
    assert.equal(status.renewalTime, '2026-03-01T02:00:00Z');
  });
});
