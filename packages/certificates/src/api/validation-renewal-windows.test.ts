/**
 * spec.renewal.windows as cert-manager's webhook checks them (validateCertificateRenewalWindows): a
 * windowDuration, a zone time.LoadLocation knows, and an expression util.CronParse takes in that zone. The
 * rows are changes to a valid Certificate and the exact field errors they must produce.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError } from '@certkit/apimachinery';
import type { Certificate, CertificateRenewalWindow } from './types.ts';
import { validateCertificate } from './validation.ts';

const SUFFIX = '. cron needs to follow: cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow';
const ZONE = 'invalid value for timezone. timezone must be IANA compliant';

function errorsFor(windows: CertificateRenewalWindow[]): string[] {
  const cert: Certificate = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'test', namespace: 'default' },
    spec: {
      secretName: 'test-tls',
      issuerRef: { name: 'ca-issuer' },
      dnsNames: ['a.example'],
      renewal: { policy: 'RenewBefore', windows },
    },
  };
  return validateCertificate(cert).map(formatFieldError);
}

const cronError = (cron: string, detail: string) =>
  `spec.renewal.windows[0].cron: Invalid value: ${JSON.stringify(cron)}: invalid cron syntax: failed to parse cron spec '${cron}': ${detail}${SUFFIX}`;

describe('renewal window validation', () => {
  const valid: CertificateRenewalWindow[] = [
    { windowDuration: '2h', cron: '0 12 * * *' },
    { timezone: 'America/Denver', windowDuration: '90m', cron: '*/15 1-5 1,15 jan-mar MON-fri' },
    { timezone: 'US/Eastern', windowDuration: '1h', cron: '0 0 ? * sun' },
    { timezone: 'UTC', windowDuration: '1h', cron: '@weekly' },
    { timezone: 'Local', windowDuration: '1h', cron: '@every 6h' },
    // With no timezone the expression may carry its own.
    { windowDuration: '1h', cron: 'CRON_TZ=Europe/Berlin 0 2 * * *' },
    // Upstream only requires windowDuration to be present.
    { windowDuration: '0s', cron: '0 2 * * *' },
  ];
  for (const window of valid) {
    it(`accepts ${JSON.stringify(window)}`, () => assert.deepEqual(errorsFor([window]), []));
  }

  it('requires windowDuration', () => {
    assert.deepEqual(errorsFor([{ cron: '0 12 * * *' }]), [
      'spec.renewal.windows[0].windowDuration: Required value: windowDuration must be specified and should be greater than 0',
    ]);
  });

  it("rejects cron expressions with robfig/cron's reason", () => {
    const rows: [string, string][] = [
      ['0 12 * * 7', 'end of range (7) above maximum (6): 7'],
      ['0 12 * *', 'expected exactly 5 fields, found 4: [0 12 * *]'],
      ['0 0 12 * * *', 'expected exactly 5 fields, found 6: [0 0 12 * * *]'],
      ['0 12 * * monday', 'failed to parse int from monday: strconv.Atoi: parsing "monday": invalid syntax'],
      ['*/0 * * * *', 'step of range should be a positive number: */0'],
      ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
      // cert-manager's own case: a zone prefix and nothing after it.
      ['CRON_TZ=UTC', 'expected timezone prefix to be followed by a cron spec: CRON_TZ=UTC'],
    ];
    for (const [cron, detail] of rows) {
      assert.deepEqual(errorsFor([{ windowDuration: '1h', cron }]), [cronError(cron, detail)], cron);
    }
  });

  it('rejects zones Go cannot load, on the timezone and again through CronParse', () => {
    for (const timezone of ['america/denver', 'PST', '+01:00', 'Mars/Olympus']) {
      assert.deepEqual(
        errorsFor([{ timezone, windowDuration: '1h', cron: '@daily' }]),
        [
          `spec.renewal.windows[0].timezone: Invalid value: ${JSON.stringify(timezone)}: ${ZONE}`,
          cronError('@daily', `provided bad location ${timezone}: unknown time zone ${timezone}`),
        ],
        timezone,
      );
    }
  });

  it('passes the zone to CronParse as a prefix: one in the expression too is a sixth field', () => {
    const cron = 'TZ=Europe/Berlin 0 2 * * *';
    assert.deepEqual(errorsFor([{ timezone: 'UTC', windowDuration: '1h', cron }]), [
      cronError(cron, 'expected exactly 5 fields, found 6: [TZ=Europe/Berlin 0 2 * * *]'),
    ]);
  });

  it('reports each window at its index', () => {
    assert.deepEqual(
      errorsFor([
        { windowDuration: '1h', cron: '0 2 * * *' },
        { windowDuration: '1h', cron: '0 24 * * *' },
      ]),
      [
        `spec.renewal.windows[1].cron: Invalid value: "0 24 * * *": invalid cron syntax: failed to parse cron spec '0 24 * * *': end of range (24) above maximum (23): 24${SUFFIX}`,
      ],
    );
  });
});
