import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../args.ts';
import { CONTROLLER_FLAG_OPTIONS, controllerFlags } from './controller-flags.ts';

const DEFAULTS = Object.fromEntries(
  Object.entries(CONTROLLER_FLAG_OPTIONS).map(([k, o]) => [k, 'default' in o ? o.default : undefined]),
);
const flags = (values: Record<string, string>) => controllerFlags({ ...DEFAULTS, ...values }).options;

describe('controllerFlags: --acme-http01-*', () => {
  it('leaves the embedded HTTP-01 solver off unless a listen address is given', () => {
    const options = flags({});
    assert.equal(options.acmeHTTP01ListenAddress, undefined);
    assert.equal(options.acmeHTTP01SolverNameservers, undefined);
    assert.equal(options.acmeHTTP01SelfCheckPort, undefined);
  });

  it('passes valid values into the controller options', () => {
    const options = flags({
      'acme-http01-listen-address': ':80',
      'acme-http01-solver-nameservers': '8.8.8.8:53, [2001:4860:4860::8888]:53',
      'acme-http01-self-check-port': '8080',
    });
    assert.equal(options.acmeHTTP01ListenAddress, ':80');
    assert.deepEqual(options.acmeHTTP01SolverNameservers, ['8.8.8.8:53', '[2001:4860:4860::8888]:53']);
    assert.equal(options.acmeHTTP01SelfCheckPort, 8080);
    for (const address of ['127.0.0.1:8089', '[::]:80', 'localhost:0']) {
      assert.equal(flags({ 'acme-http01-listen-address': address }).acmeHTTP01ListenAddress, address);
    }
  });

  const bad: [string, string, string][] = [
    [
      'acme-http01-listen-address',
      '80',
      '"80" is not host:port or :port (address 80: missing port in address)',
    ],
    ['acme-http01-listen-address', ':http', '":http" has no port from 0 to 65535'],
    ['acme-http01-listen-address', '1.2.3.4:65536', '"1.2.3.4:65536" has no port from 0 to 65535'],
    [
      'acme-http01-listen-address',
      '::1:80',
      '"::1:80" is not host:port or :port (address ::1:80: too many colons in address)',
    ],
    [
      'acme-http01-solver-nameservers',
      '8.8.8.8',
      '"8.8.8.8" is not an IP address and port such as 8.8.8.8:53 or [::1]:53',
    ],
    [
      'acme-http01-solver-nameservers',
      '8.8.8.8:53,dns.google:53',
      '"dns.google:53" is not an IP address and port such as 8.8.8.8:53 or [::1]:53',
    ],
    [
      'acme-http01-solver-nameservers',
      '8.8.8.8:0',
      '"8.8.8.8:0" is not an IP address and port such as 8.8.8.8:53 or [::1]:53',
    ],
    ['acme-http01-self-check-port', '0', '"0" is not a port from 1 to 65535'],
    ['acme-http01-self-check-port', '80x', '"80x" is not a port from 1 to 65535'],
    ['acme-http01-self-check-port', '70000', '"70000" is not a port from 1 to 65535'],
  ];
  for (const [flag, value, message] of bad) {
    it(`refuses --${flag} ${value} with one usage line`, () => {
      assert.throws(
        () => flags({ [flag]: value }),
        (err: unknown) => {
          assert.ok(err instanceof UsageError);
          assert.equal(err.message, `--${flag}: ${message}`);
          assert.ok(!err.message.includes('\n'));
          return true;
        },
      );
    });
  }
});

describe('controllerFlags: ACME Challenges', () => {
  it("has cert-manager's defaults", () => {
    const options = flags({});
    assert.equal(options.maxConcurrentChallenges, 60);
    assert.equal(options.dns01RecursiveNameservers, undefined);
    assert.equal(options.dns01RecursiveNameserversOnly, false);
    assert.equal(options.dns01CheckRetryPeriodMs, 10_000);
    assert.equal(options.dns01PropagationWaitMs, 60_000);
  });

  it('passes valid values into the controller options', () => {
    const options = flags({
      'max-concurrent-challenges': '3',
      'dns01-recursive-nameservers': '127.0.0.1:5353, https://1.1.1.1/dns-query',
      'dns01-recursive-nameservers-only': 'true',
      'dns01-check-retry-period': '1.5s',
      'dns01-propagation-wait': '0s',
    });
    assert.equal(options.maxConcurrentChallenges, 3);
    assert.deepEqual(options.dns01RecursiveNameservers, ['127.0.0.1:5353', 'https://1.1.1.1/dns-query']);
    assert.equal(options.dns01RecursiveNameserversOnly, true);
    assert.equal(options.dns01CheckRetryPeriodMs, 1_500);
    assert.equal(options.dns01PropagationWaitMs, 0);
  });

  for (const [flag, value] of [
    ['max-concurrent-challenges', '0'],
    // Number() would read these as 0x10 = 16, 1000 and (empty) 0; pflag refuses them.
    ['max-concurrent-challenges', '0x10'],
    ['concurrent-workers', '1e3'],
    ['concurrent-workers', ''],
    ['dns01-recursive-nameservers', 'not a server:xx'],
    ['dns01-recursive-nameservers-only', 'yes'],
    ['dns01-check-retry-period', '10'],
    ['dns01-check-retry-period', '0s'],
    ['dns01-propagation-wait', '1m-'],
    ['dns01-propagation-wait', '-1s'],
  ] as const) {
    it(`refuses --${flag} ${value} with a usage line naming the flag`, () => {
      assert.throws(
        () => flags({ [flag]: value }),
        (err: unknown) => {
          assert.ok(err instanceof UsageError);
          assert.match(err.message, new RegExp(`^--${flag}`));
          assert.ok(!err.message.includes('\n'));
          return true;
        },
      );
    });
  }
});

describe('controllerFlags: --certificate-request-{minimum,maximum}-backoff-duration', () => {
  it("has cert-manager's defaults (1h, 32h) and passes given values on", () => {
    const defaults = flags({});
    assert.equal(defaults.certificateRequestMinimumBackoffMs, 3_600_000);
    assert.equal(defaults.certificateRequestMaximumBackoffMs, 32 * 3_600_000);
    const given = flags({
      'certificate-request-minimum-backoff-duration': '2s',
      'certificate-request-maximum-backoff-duration': '1m',
    });
    assert.equal(given.certificateRequestMinimumBackoffMs, 2_000);
    assert.equal(given.certificateRequestMaximumBackoffMs, 60_000);
  });

  for (const [values, pattern] of [
    [{ 'certificate-request-minimum-backoff-duration': '0s' }, /minimum-backoff-duration must be positive/],
    [
      { 'certificate-request-maximum-backoff-duration': 'soon' },
      /--certificate-request-maximum-backoff-duration/,
    ],
    [
      {
        'certificate-request-minimum-backoff-duration': '2h',
        'certificate-request-maximum-backoff-duration': '1h',
      },
      /maximum-backoff-duration must not be less than/,
    ],
  ] as const) {
    it(`refuses ${JSON.stringify(values)} with a usage line naming the flag`, () => {
      assert.throws(
        () => flags(values),
        (err: unknown) => err instanceof UsageError && pattern.test(err.message),
      );
    });
  }
});

describe('controllerFlags: --controllers', () => {
  it("runs every controller by default, and takes cert-manager's list", () => {
    assert.ok(flags({}).controllers?.has('certificaterequests-approver'));
    const noApprover = flags({ controllers: '*,-certificaterequests-approver' }).controllers;
    assert.ok(noApprover && !noApprover.has('certificaterequests-approver'));
    assert.ok(noApprover.has('certificaterequests-issuer-ca'));
  });

  it('refuses an unknown controller in one line naming the flag', () => {
    assert.throws(
      () => flags({ controllers: '*,-approver' }),
      (err: unknown) =>
        err instanceof UsageError &&
        err.message === '--controllers: "approver" is not in the list of known controllers',
    );
  });
});

describe('controllerFlags: the ingress-shim and gateway-shim', () => {
  it("has cert-manager's defaults: ingress-shim on, gateway-shim off, tls-acme the auto annotation", () => {
    const options = flags({});
    assert.ok(options.controllers?.has('ingress-shim'));
    assert.ok(!options.controllers?.has('gateway-shim'));
    assert.deepEqual(options.shims, {
      autoCertificateAnnotations: ['kubernetes.io/tls-acme'],
      extraCertificateAnnotations: [],
      defaultIssuerName: '',
      defaultIssuerKind: 'Issuer',
      defaultIssuerGroup: 'cert-manager.io',
      gatewayAPIExtraProtocols: [],
    });
  });

  it('passes the lists and the default issuer on; --enable-gateway-api adds gateway-shim', () => {
    const options = flags({
      'auto-certificate-annotations': 'kubernetes.io/tls-acme, example.com/tls',
      'extra-certificate-annotations': 'example.com/team',
      'default-issuer-name': 'letsencrypt',
      'default-issuer-kind': 'ClusterIssuer',
      'default-issuer-group': 'cert-manager.io',
      'gateway-api-extra-protocols': 'QUIC',
      'enable-gateway-api': 'true',
    });
    assert.deepEqual(options.shims?.autoCertificateAnnotations, [
      'kubernetes.io/tls-acme',
      'example.com/tls',
    ]);
    assert.deepEqual(options.shims?.extraCertificateAnnotations, ['example.com/team']);
    assert.equal(options.shims?.defaultIssuerName, 'letsencrypt');
    assert.equal(options.shims?.defaultIssuerKind, 'ClusterIssuer');
    assert.deepEqual(options.shims?.gatewayAPIExtraProtocols, ['QUIC']);
    assert.ok(options.controllers?.has('gateway-shim'));
    assert.ok(
      !flags({ 'enable-gateway-api': 'true', controllers: '*,-gateway-shim' }).controllers?.has(
        'gateway-shim',
      ),
    );
    assert.ok(!flags({ controllers: '-ingress-shim' }).controllers?.has('ingress-shim'));
  });

  it('--enable-gateway-api-listenerset adds listenerset only with the ListenerSets gate and the Gateway API', () => {
    const on = { 'enable-gateway-api': 'true', 'enable-gateway-api-listenerset': 'true' };
    assert.ok(!flags(on).controllers?.has('listenerset'));
    const all = flags({ ...on, 'feature-gates': 'ListenerSets=true' }).controllers;
    assert.ok(all?.has('listenerset') && all.has('gateway-shim'));
    assert.ok(
      !flags({
        'enable-gateway-api-listenerset': 'true',
        'feature-gates': 'ListenerSets=true',
      }).controllers?.has('listenerset'),
    );
    // cert-manager's gate for the Gateway API, on by default, turns both off.
    const off = flags({ ...on, 'feature-gates': 'ListenerSets=true,ExperimentalGatewayAPISupport=false' });
    assert.ok(!off.controllers?.has('gateway-shim') && !off.controllers?.has('listenerset'));
  });

  it('refuses an unknown or malformed feature gate in one line naming the flag', () => {
    assert.throws(
      () => flags({ 'feature-gates': 'ListenerSet=true' }),
      (err: unknown) =>
        err instanceof UsageError &&
        err.message === '--feature-gates: unrecognized feature gate: ListenerSet',
    );
    assert.throws(
      () => flags({ 'enable-gateway-api-listenerset': 'on', 'feature-gates': 'ListenerSets=true' }),
      (err: unknown) =>
        err instanceof UsageError &&
        err.message === '--enable-gateway-api-listenerset must be true or false, got "on"',
    );
  });

  it('refuses --enable-gateway-api that is not a boolean', () => {
    assert.throws(
      () => flags({ 'enable-gateway-api': 'yes' }),
      (err: unknown) =>
        err instanceof UsageError && err.message === '--enable-gateway-api must be true or false, got "yes"',
    );
  });
});

describe('controllerFlags: --leader-election-{lease-duration,renew-deadline,retry-period}', () => {
  const timings = (values: Record<string, string>) =>
    controllerFlags({ ...DEFAULTS, ...values }).leaderElectionTimings;

  it("has controller-runtime's defaults (15s, 10s, 2s) and passes given values on", () => {
    assert.deepEqual(timings({}), { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 });
    assert.deepEqual(
      timings({
        'leader-election-lease-duration': '3s',
        'leader-election-renew-deadline': '2s',
        'leader-election-retry-period': '500ms',
      }),
      { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 },
    );
  });

  for (const [values, pattern] of [
    [{ 'leader-election-retry-period': '0s' }, /--leader-election-retry-period must be positive/],
    [{ 'leader-election-lease-duration': 'long' }, /--leader-election-lease-duration/],
    [
      { 'leader-election-lease-duration': '900ms', 'leader-election-renew-deadline': '500ms' },
      /lease-duration must be at least 1s/,
    ],
    [{ 'leader-election-lease-duration': '10s' }, /lease-duration must be greater than/],
    [{ 'leader-election-retry-period': '9s' }, /renew-deadline must be greater than 1.2/],
  ] as const) {
    it(`refuses ${JSON.stringify(values)} with a usage line naming the flag`, () => {
      assert.throws(
        () => timings(values),
        (err: unknown) => err instanceof UsageError && pattern.test(err.message),
      );
    });
  }
});
